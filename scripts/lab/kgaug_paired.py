#!/usr/bin/env python
"""Usage: python scripts/lab/kgaug_paired.py RUN/items.jsonl > out.json

Paired comparison of rankers on an opendialkg-triples items.jsonl: bootstrap CI of recall@5
differences, and recall@5 by the gold walk's first relation and by candidate count."""
import json, sys
from collections import defaultdict
import numpy as np
rows = [json.loads(l) for l in open(sys.argv[1])]
ms = list(rows[0]["methods"])
R = {m: np.array([r["methods"][m]["recall@5"] for r in rows]) for m in ms}
rng = np.random.default_rng(0)
idx = rng.integers(0, len(rows), (10000, len(rows)))
out = {"turns": len(rows), "paired": {}, "by_relation": {}, "by_candidates": {}}
for a, b in [("triton", "kaping"), ("triton", "bm25"), ("kaping", "bm25"), ("triton-c", "triton"), ("triton-ce", "bm25"), ("triton-c", "kaping")]:
    if a in R and b in R:
        d = R[a] - R[b]
        boot = d[idx].mean(1)
        out["paired"][f"{a} - {b}"] = {"mean": round(float(d.mean()), 4), "ci95": [round(float(x), 4) for x in np.percentile(boot, [2.5, 97.5])],
                                        "a_better_turns": int((d > 0).sum()), "b_better_turns": int((d < 0).sum())}
groups = defaultdict(list)
for i, r in enumerate(rows):
    rel = r["gold"][0].split("\t")[1] if r["gold"] else "?"
    groups[rel].append(i)
for rel, ii in sorted(groups.items(), key=lambda x: -len(x[1]))[:8]:
    out["by_relation"][rel] = {"turns": len(ii), **{m: round(float(R[m][ii].mean()), 3) for m in ms}}
cands = np.array([r["methods"]["bm25"]["candidates"] for r in rows])
for lo, hi in [(0, 0), (1, 5), (6, 20), (21, 48)]:
    ii = np.where((cands >= lo) & (cands <= hi))[0]
    out["by_candidates"][f"{lo}-{hi}"] = {"turns": len(ii), **{m: round(float(R[m][ii].mean()), 3) for m in ms}}
print(json.dumps(out, indent=1))
