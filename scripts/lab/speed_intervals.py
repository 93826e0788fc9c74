"""One-off check (issue 53): how far apart do runs of the same prompts land? Per `chat --script`
transcript folder and method, the medians over the replies after the first of the first words
(`first_text_s`), the reply (`seconds`) and the prompt tokens computed, each with its 95% interval
resampling whole dialogues (core.metrics.report.grouped_median_ci, as `bench replies` reports it),
and the told facts right. Reads recorded transcripts only; runs no model.

    PYTHONPATH=. .venv/bin/python scripts/lab/speed_intervals.py \
        --runs results/replies/chat/conversational-after results/replies/chat/conversational-run3 ... \
        --out results/cache-layout/speed-intervals.json

Measured 2026-11-29: docs/speed.md, "Intervals over runs".
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from core.metrics.report import grouped_median_ci

KEYS = ("first_text_s", "seconds", "prompt_computed")
METHODS = ("base", "rag", "sgmem-h", "dsm", "dsmart")


def run_figures(records: list[dict]) -> dict:
    """Medians with intervals over the records after the first, and the told facts right."""
    after = records[1:]
    out: dict = {"replies": len(records)}
    for key in KEYS:
        pairs = [(r[key], r["dialogue"]) for r in after if r.get(key) is not None]
        if not pairs:
            continue
        lo, hi = grouped_median_ci([v for v, _ in pairs], [d for _, d in pairs])
        out[key] = {"median": round(statistics.median(v for v, _ in pairs), 3), "ci95": [round(lo, 3), round(hi, 3)]}
    judged = [r["correct"] for r in records if r.get("correct") is not None]
    out["told_right"] = [sum(judged), len(judged)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, help="transcript folders, one METHOD.jsonl per method")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    table: dict = {}
    for folder in args.runs:
        for method in args.methods.split(","):
            path = Path(folder) / f"{method}.jsonl"
            if path.exists():
                records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                table.setdefault(method, {})[Path(folder).name] = run_figures(records)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"runs": [Path(f).name for f in args.runs], "methods": table}, indent=1) + "\n")
    for method, runs in table.items():
        for run, fig in runs.items():
            cells = [f"{k} {fig[k]['median']} [{fig[k]['ci95'][0]}, {fig[k]['ci95'][1]}]" for k in KEYS if k in fig]
            print(method, run, *cells, f"told {fig['told_right'][0]}/{fig['told_right'][1]}", sep=" | ")


if __name__ == "__main__":
    main()
