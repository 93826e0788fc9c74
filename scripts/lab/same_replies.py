"""Behaviour unchanged across a refactor (issue 56): every method's replies on a fixed script with
the embedded model at temperature 0, recorded before and after, then compared field by field.

    python scripts/lab/same_replies.py record --out results/house/replies-before.json
    ... change the code ...
    python scripts/lab/same_replies.py record --out results/house/replies-after.json
    python scripts/lab/same_replies.py compare results/house/replies-before.json results/house/replies-after.json

Each method runs `python -m core chat --script` in its own process (the small SmolLM2 GGUF, 2
threads, sampling seed 0 on every request: `--llm-seed`), so a run is the same on the same machine; what is compared is what a
person or a benchmark sees: the reply, the method's own draft, the evidence, the consistency label
and score, and the model calls with their prompt and completion token counts. Timings are left out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "benchmarks/chat_short_memory.jsonl"
KEPT = ("user", "reply", "draft", "evidence", "consistency", "llm_calls")


def method_names() -> list[str]:
    sys.path.insert(0, str(REPO))
    from core.methods import METHODS

    return list(METHODS)


def what_is_seen(record: dict) -> dict:
    seen = {k: record.get(k) for k in KEPT}
    seen["tokens"] = {stage: (c["prompt_tokens"], c["completion_tokens"]) for stage, c in (record.get("cost") or {}).items()}
    return seen


def record(methods: list[str], model: str, out: Path) -> None:
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in methods:
            path = Path(tmp) / f"{method}.jsonl"
            cmd = [sys.executable, "-m", "core", "chat", "--method", method, "--script", SCRIPT, "--out", str(path),
                   "--model", model, "--threads", "2", "--llm-seed", "0"]
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                raise SystemExit(f"{method}: chat --script exited {done.returncode}: {done.stderr[-2000:]}")
            runs[method] = [what_is_seen(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
            print(f"{method}: {len(runs[method])} replies", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = f"python scripts/lab/same_replies.py record --out {out} --model {model} --methods {' '.join(methods)}"
    out.write_text(json.dumps({"command": command, "script": SCRIPT, "model": model, "runs": runs}, indent=1,
                              ensure_ascii=False) + "\n")


def differences(before: dict, after: dict) -> list[str]:
    found = []
    for method in sorted(set(before["runs"]) | set(after["runs"])):
        a, b = before["runs"].get(method), after["runs"].get(method)
        if a is None or b is None:
            found.append(f"{method}: only in {'after' if a is None else 'before'}")
            continue
        if len(a) != len(b):
            found.append(f"{method}: {len(a)} replies before, {len(b)} after")
        for turn, (x, y) in enumerate(zip(a, b)):
            found += [f"{method} turn {turn} {key}: {x.get(key)!r} -> {y.get(key)!r}"
                      for key in sorted(set(x) | set(y)) if x.get(key) != y.get(key)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--methods", nargs="*", default=None, help="default: every method in core.methods")
    rec.add_argument("--model", default="small")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.methods or method_names(), args.model, args.out)
        return
    found = differences(json.loads(args.before.read_text()), json.loads(args.after.read_text()))
    for line in found:
        print(line)
    runs = json.loads(args.after.read_text())["runs"]
    print(f"{len(found)} differences over {sum(map(len, runs.values()))} replies of {len(runs)} methods")
    raise SystemExit(1 if found else 0)


if __name__ == "__main__":
    main()
