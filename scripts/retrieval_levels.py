"""Levels x methods with 95% bootstrap intervals from a retrieval benchmark run, as a small JSON
for results/ (read by the Retrieval comparison page) and as markdown tables for docs/.

Usage: .venv/bin/python scripts/retrieval_levels.py RUN_DIR [RUN_DIR ...] --out results/retrieval-levels-NAME.json
Several folders (one run split by --conversations over processes) are read as one: their items are
concatenated (each question once), the header comes from the first.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.eval import read_run
from core.retrieval.report import LevelRow, level_summary, markdown


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+", help="folders written by python -m core bench locomo-retrieval / longmemeval-retrieval")
    p.add_argument("--out", default="", help="write the summary here (JSON)")
    args = p.parse_args()
    summary, items, seen = None, [], set()
    for run in args.runs:
        if (Path(run) / "summary.json").is_file():
            head, part = read_run(run)
        else:  # a run stopped before its end: its items so far
            head = {"benchmark": "partial run", "data": None, "settings": {}}
            part = [json.loads(line) for line in (Path(run) / "items.jsonl").read_text().splitlines() if line.strip()]
        summary = summary or head
        for item in part:
            key = item.get("qid") or item.get("question_id")
            if key not in seen:
                seen.add(key)
                items.append(item)
    levels = level_summary(summary, items)
    if args.out:
        Path(args.out).write_text(json.dumps(levels, indent=1))
    for metric, rows in levels["rows"].items():
        print(f"\n{metric} ({levels['questions']} questions)\n")
        print(markdown([LevelRow(**r) for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
