"""Paired difference of two `knowledge-retrieval` runs' `mcts` rows on the same contexts (after
minus before), with 95% bootstrap intervals: what a change of the reasoner did to diversity and
alignment.

    .venv/bin/python scripts/lab/mcts_before_after.py BEFORE_RUN AFTER_RUN --out results/x.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    from core.benchmarks.knowledge_retrieval import paired_differences, per_context

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--method", default="mcts")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    items = {}
    for tag, run in (("before", args.before), ("after", args.after)):
        items[tag] = {json.loads(l)["id"]: json.loads(l) for l in (run / "items.jsonl").read_text().splitlines() if l.strip()}
    ids = [i for i in items["before"] if i in items["after"]]
    summary = json.loads((args.after / "summary.json").read_text())
    options = {k: summary["settings"].get(k, "") for k in ("bertscore_model", "nli_model")}
    options["bertscore_layers"] = summary["settings"].get("bertscore_layers", 4)
    retrieved = {tag: [items[tag][i]["methods"][args.method]["sentences"] for i in ids] for tag in ("after", "before")}
    per = per_context([items["after"][i]["transition"] for i in ids], retrieved, options)
    out = {"before": str(args.before), "after": str(args.after), "method": args.method, "contexts": len(ids),
           "paired": paired_differences(per, rows=("after",), against=("before",))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["paired"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
