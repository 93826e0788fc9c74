"""Where a reply's time goes, per method, on the first N dialogues of a `chat --script` file: each
reply's first words (`first_text_s`), prompt tokens computed and reused from the server's cache,
prefill and decode seconds, and right answers (issue 53; docs/speed.md, "A reply computes what is new").

Run from a checkout (its `core` is the one measured; an earlier commit's checkout gives the before):

    PYTHONPATH=. .venv/bin/python scripts/lab/cache_layout.py --script benchmarks/memory_long_dev.jsonl \
        --dialogues 2 --methods base,rag,sgmem-h,dsm,dsmart --out results/cache-layout/after.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from core.chat import ChatSession, read_script, run_script, summarise
from core.config import LLMSettings
from core.toolkit import make_toolkit


def first_dialogues(steps, n: int):
    """The steps of the script's first `n` dialogues."""
    out, seen = [], 0
    for step in steps:
        if step.new_dialogue:
            seen += 1
            if seen > n:
                break
        out.append(step)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--dialogues", type=int, default=2)
    parser.add_argument("--methods", default="base,rag,sgmem-h,dsm,dsmart")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    steps = first_dialogues(read_script(args.script), args.dialogues)
    tools = make_toolkit(LLMSettings())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows = {}
    for method in args.methods.split(","):
        session = ChatSession(method, tools, judge=None)
        t0 = time.perf_counter()
        records = list(run_script(session, steps))
        rows[method] = {**summarise(records), "wall_s": round(time.perf_counter() - t0, 1),
                        "records": [{k: r.get(k) for k in ("dialogue", "turn", "user", "reply", "expected", "correct", "seconds",
                                                            "first_text_s", "first_output_s", "prompt_computed",
                                                            "prompt_reused", "prefill_s", "decode_s")} for r in records]}
        print(method, json.dumps({k: v for k, v in rows[method].items() if k not in ("records", "stages_after_first")}),
              file=sys.stderr, flush=True)
    out = {"command": " ".join(["scripts/lab/cache_layout.py", *sys.argv[1:]]), "commit": commit, "model": tools.llm.name,
           "script": args.script, "dialogues": args.dialogues, "methods": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
