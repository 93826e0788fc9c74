"""Time the MCTS reasoner alone (no cache) on DailyDialog test contexts, in variants: relations,
max tokens, stop strings. Prints time, generated tokens and the selected inferences per context.

    .venv/bin/python scripts/lab/mcts_reasoner_time.py --limit 5 --variant base --variant short
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

VARIANTS = {
    "base": {"max_tokens": 12},
    "short": {"max_tokens": 8, "stop": ("\n",)},
    "short6": {"max_tokens": 8, "stop": ("\n",), "relations": ("xIntent", "xNeed", "xReact", "xWant", "xEffect", "Causes")},
}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="../shared/data/dailydialog/dialogues_test.txt")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--variant", action="append", default=[])
    p.add_argument("--out", default="")
    args = p.parse_args()
    from core.benchmarks.knowledge_retrieval import contexts
    from core.llm import cost
    from core.methods.mcts.config import ReasonerSettings
    from core.methods.mcts.reasoner import Reasoner
    from core.toolkit import llm_settings_from_args, make_toolkit

    ns = argparse.Namespace(backend=None, model=None, threads=None, base_url=None, strong=None, dtype=None)
    tools = make_toolkit(llm_settings_from_args(ns))
    items = contexts(args.data, args.limit, 4)
    tools.llm.chat("Warm up.", max_tokens=4)
    rows = []
    for name in args.variant or ["base", "short"]:
        known = {k: v for k, v in VARIANTS[name].items() if k in ReasonerSettings.__dataclass_fields__}
        settings = replace(ReasonerSettings(cache=False), **known)
        reasoner = Reasoner(tools.llm, tools.embedder, settings)
        for item in items:
            with cost.measure() as meter:
                t0 = time.perf_counter()
                r = reasoner.infer(item["context"])
                seconds = time.perf_counter() - t0
            used = cost.totals(meter.as_dict())
            rows.append({"variant": name, "id": item["id"], "seconds": round(seconds, 2), **used,
                         "load": round(os.getloadavg()[0], 1), "selected": [c.sentence for c in r.selected]})
            print(json.dumps(rows[-1]), flush=True)
    for name in args.variant or ["base", "short"]:
        s = sorted(r["seconds"] for r in rows if r["variant"] == name)
        print(name, "median", s[len(s) // 2], "gen tokens", sum(r["completion_tokens"] for r in rows if r["variant"] == name))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
