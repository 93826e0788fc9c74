"""Add the paired differences (MCTS minus each baseline) to a finished `knowledge-retrieval` run.

Paired differences of a finished `knowledge-retrieval` run, recomputed from its items: each MCTS
row minus each baseline on the same contexts, with 95% bootstrap intervals (the `paired` block the
benchmark writes since 2026-11-25; this adds it to runs made before).

    python -m core knowledge-paired .workbench/runs/knowledge-dd-kb50k-100 --out results/x.json

The output is the run's summary.json with `paired` added (same BERTScore and NLI settings as the run).
"""

from __future__ import annotations

import json
from pathlib import Path


def add_arguments(parser) -> None:
    parser.add_argument("run", type=Path, help="run folder with summary.json and items.jsonl")
    parser.add_argument("--out", type=Path, required=True)


def main(args) -> int:
    from core.benchmarks.knowledge_retrieval import paired_differences, per_context

    summary = json.loads((args.run / "summary.json").read_text())
    items = [json.loads(line) for line in (args.run / "items.jsonl").read_text().splitlines() if line.strip()]
    methods = summary["settings"]["methods"]
    retrieved = {m: [it["methods"][m]["sentences"] for it in items] for m in methods}
    options = {k: summary["settings"].get(k, "") for k in ("bertscore_model", "nli_model")}
    options["bertscore_layers"] = summary["settings"].get("bertscore_layers", 4)
    summary["paired"] = paired_differences(per_context([it["transition"] for it in items], retrieved, options))
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    for pair, cell in summary["paired"].items():
        print(pair, {m: f"{v['diff']:+.2f} [{v['low']:+.2f}, {v['high']:+.2f}]" for m, v in cell.items()})
    return 0
