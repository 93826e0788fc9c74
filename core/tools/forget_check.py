"""Score `chat --script` runs with forget steps: forgotten values in replies, kept facts answered, store grep and raw bytes.

For each method: the run's records (`chat --out`) and its store (`chat --db`). The values are the
script's forget steps; a step with `"forbid": [...]` is a question about a forgotten fact (its
reply must hold none of them); steps with `"expect"` are the kept facts (`correct` in the
records). The store is searched with `store grep` (decoded) and byte by byte (the SQLite file and
its WAL); a raw hit inside a float literal's digits (a timing, a score) is counted apart.

    .venv/bin/python -m core forget-check --script benchmarks/forget_dev.jsonl --runs DIR \\
        --db '/tmp/f-{method}.db' --methods rag,dsm --out results/forget/forget-dev.json
"""

from __future__ import annotations

import json
import re
from pathlib import Path


def add_arguments(parser) -> None:
    parser.add_argument("--script", required=True, help="the chat script (JSONL) the runs played")
    parser.add_argument("--runs", required=True, type=Path, help="folder of METHOD.jsonl (chat --out)")
    parser.add_argument("--db", required=True, help="each run's store, with {method}: e.g. /tmp/f-{method}.db")
    parser.add_argument("--methods", required=True, help="comma-separated")
    parser.add_argument("--out", type=Path, default=None, help="summary JSON (default: stdout)")


def raw_hits(path: Path, value: str) -> dict:
    """Occurrences of `value` in the file's bytes, and how many sit inside a float literal's digits."""
    if not path.exists():
        return {"hits": 0, "in_floats": 0}
    data = path.read_bytes().lower()
    needle = value.lower().encode("utf-8")
    hits = [m.start() for m in re.finditer(re.escape(needle), data)]
    floats = 0
    for at in hits:  # the run of digits and points around the hit: a float literal when it has a point and digits
        before = re.search(rb"[\d.]*$", data[max(0, at - 32):at]).group(0)
        after = re.match(rb"[\d.]*", data[at + len(needle):at + len(needle) + 32]).group(0)
        literal = (before + needle + after).strip(b".")
        floats += needle.isdigit() and re.fullmatch(rb"\d+\.\d+", literal) is not None
    return {"hits": len(hits), "in_floats": floats}


def main(args) -> int:
    from core.benchmarks.runner import code_version
    from core.db.engine import Database
    from core.db.grep import grep

    steps = [json.loads(line) for line in Path(args.script).read_text(encoding="utf-8").splitlines() if line.strip()]
    values = [s["forget"] for s in steps if "forget" in s]
    forbidden = {s["user"]: s["forbid"] for s in steps if "forbid" in s}
    methods = {}
    for method in args.methods.split(","):
        records = [json.loads(line) for line in (args.runs / f"{method}.jsonl").read_text(encoding="utf-8").splitlines()
                   if line.strip()]
        replies = [r for r in records if "reply" in r]
        forgot = [r["forgot"] for r in records if "forgot" in r]
        asked = [r for r in replies if r["user"] in forbidden]
        kept = [r for r in replies if "correct" in r]
        db_path = Path(args.db.format(method=method))
        db = Database(db_path)
        methods[method] = {
            "forgotten_questions": len(asked),
            "forgotten_value_in_reply": sum(any(v.lower() in r["reply"].lower() for v in forbidden[r["user"]]) for r in asked),
            "kept_questions": len(kept),
            "kept_correct": sum(r["correct"] for r in kept),
            "store_grep": {v: len(grep(db, v)) for v in values},
            "raw_bytes": {v: {"db": raw_hits(db_path, v), "wal": raw_hits(Path(f"{db_path}-wal"), v)} for v in values},
            "forgets": [{k: f[k] for k in ("user_turns", "redacted", "cleaned", "memories", "file", "seconds")} for f in forgot],
            "reply_seconds_total": round(sum(r["seconds"] for r in replies), 1),
            "model": replies[0]["model"] if replies else "",
            "replies": [{"user": r["user"], "reply": r["reply"], **({"correct": r["correct"]} if "correct" in r else {})}
                        for r in replies],
        }
    summary = {"command": f"python -m core forget-check --script {args.script} --runs RUNS --db 'DB/f-{{method}}.db' "
                          f"--methods {args.methods}",  # no machine's paths in a results file
               "code_version": code_version(), "values": values, "methods": methods}
    text = json.dumps(summary, indent=1, ensure_ascii=False)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0
