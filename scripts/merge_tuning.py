"""Merge tune_retrieval.py outputs of disjoint conversation sets (runs split across processes) into
one table, as if one run had covered them all.

Usage: .venv/bin/python scripts/merge_tuning.py OUT.json IN1.json IN2.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tune_retrieval import totals  # this script's folder is on sys.path when run as a script


def merge(parts: list[dict]) -> dict:
    names = {p["embedder"] for p in parts}
    if len(names) != 1:
        raise SystemExit(f"outputs of different embedders: {sorted(names)}")
    per_conv, seen = [], set()
    for p in parts:
        for r in p["per_conversation"]:
            k = (r["setting"], r["level"], r["conversation"])
            if k not in seen:  # a conversation in two parts counts once
                seen.add(k)
                per_conv.append(r)
    total = totals(per_conv)
    n_max = {}
    for (s, lvl), v in total.items():
        n_max[lvl] = max(n_max.get(lvl, 0), v[2])
    # a setting counts only where it was scored on every question of the merged conversations
    rows = [{"setting": s, "level": lvl, "recall@5": v[0] / v[2], "tok_recall": v[1] / v[2], "n": v[2]}
            for (s, lvl), v in total.items() if v[2] == n_max[lvl]]
    conversations = sorted({r["conversation"] for r in per_conv})
    return {"embedder": parts[0]["embedder"], "data": parts[0]["data"], "budgets": parts[0]["budgets"],
            "conversations": conversations, "rows": rows, "per_conversation": per_conv}


def main() -> int:
    out, *inputs = sys.argv[1:]
    merged = merge([json.loads(Path(p).read_text()) for p in inputs if Path(p).is_file()])
    Path(out).write_text(json.dumps(merged, indent=1))
    print(f"{merged['embedder']}: {len(merged['conversations'])} conversations {merged['conversations']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
