"""Levels x methods with 95% bootstrap intervals from a retrieval run, as JSON for results/ and Markdown.

The small JSON is read by the Retrieval comparison page; the Markdown tables go to docs/.

Usage: .venv/bin/python -m core retrieval-levels RUN_DIR [RUN_DIR ...] --out results/retrieval-levels-NAME.json
Several folders (one run split by --conversations over processes) are read as one: their items are
concatenated (each question once), the header comes from the first.

--exclude-samples conv-26,conv-30 leaves out the LoCoMo conversations settings were tuned on;
--paired sgmem+h:bm25,rag,hybrid adds, per level, the paired difference of the first family against
each other one (mean and 95% bootstrap interval over the same questions).
"""

from __future__ import annotations

import json
from pathlib import Path


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", help="folders written by python -m core bench locomo-retrieval / longmemeval-retrieval")
    p.add_argument("--out", default="", help="write the summary here (JSON)")
    p.add_argument("--exclude-samples", default="", help="comma-separated sample_id values to leave out (LoCoMo)")
    p.add_argument("--paired", default="", help="FAMILY:OTHER,OTHER (e.g. sgmem+h:bm25,rag,hybrid)")


def main(args) -> int:
    from core.benchmarks.runner import read_run
    from core.retrieval.report import LevelRow, level_summary, markdown

    summary, items, seen = None, [], set()
    excluded = {x for x in args.exclude_samples.split(",") if x}
    for run in args.runs:
        if (Path(run) / "summary.json").is_file():
            head, part = read_run(run)
        else:  # a run stopped before its end: its items so far
            head = {"benchmark": "partial run", "data": None, "settings": {}}
            part = [json.loads(line) for line in (Path(run) / "items.jsonl").read_text().splitlines() if line.strip()]
        summary = summary or head
        for item in part:
            key = item.get("qid") or item.get("question_id")
            if key not in seen and item.get("sample_id") not in excluded:
                seen.add(key)
                items.append(item)
    levels = level_summary(summary, items)
    if excluded:
        levels["excluded_samples"] = sorted(excluded)
    if args.paired:
        levels["paired"] = paired_rows(items, args.paired)
    if args.out:
        Path(args.out).write_text(json.dumps(levels, indent=1))
    for metric, rows in levels["rows"].items():
        print(f"\n{metric} ({levels['questions']} questions)\n")
        print(markdown([LevelRow(**r) for r in rows]))
    for row in levels.get("paired", []):
        print(f"{row['a']} - {row['b']}: {row['mean']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}] over {row['n']} questions")
    return 0


def method_name(family: str, level: str) -> str:
    """('sgmem+h', 'turn') -> 'sgmem-t+h'; ('bm25', 'round') -> 'bm25-r'."""
    base, plus, suffix = family.partition("+")
    return f"{base}-{level[0]}" + (f"+{suffix}" if plus else "")


def paired_rows(items: list[dict], spec: str, metric: str = "recall@5") -> list[dict]:
    from dataclasses import asdict

    from core.retrieval.base import LEVELS
    from core.retrieval.report import paired_difference

    family, _, others = spec.partition(":")
    present = {m for i in items for m in i.get("methods", {})}
    rows = []
    for level in LEVELS:
        a = method_name(family, level)
        for other in filter(None, others.split(",")):
            b = method_name(other, level)
            if a in present and b in present:
                rows.append(asdict(paired_difference(items, a, b, metric)))
    return rows
