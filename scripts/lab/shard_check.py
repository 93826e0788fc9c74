"""One-off record for docs/benchmarks-cluster.md: a single run, its shards, their merge (and a Ray
run) of one benchmark, compared with core.benchmarks.merge.compare_runs; writes a small JSON to results/.

    .venv/bin/python scripts/lab/shard_check.py SINGLE MERGED [RAY] --shards S0 S1 S2 --out results/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from core.benchmarks.merge import compare_runs
from core.benchmarks.runner import read_run


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("single")
    p.add_argument("merged")
    p.add_argument("ray", nargs="?")
    p.add_argument("--shards", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--command", default="")
    p.add_argument("--ray-total-s", type=float, default=None, help="the Ray run's whole wall time (/usr/bin/time), Ray start included")
    args = p.parse_args()
    single, items = read_run(args.single)
    headline = {m: {k: v for k, v in r.items() if k in ("recall@5", "recall@10", "hit@5", "n")} for m, r in single["results"].items()}
    record = {
        "benchmark": single["benchmark"], "data": single["data"], "settings": {k: single["settings"][k] for k in ("methods", "conversations", "embedder", "ks")},
        "code_version": single["code_version"], "items": len(items), "headline": headline,
        "single": {"wall_s": single["wall_s"], "embedded_texts": single.get("embedded_texts")},
        "shards": [{"shard": f"{s['shard']['index']}/{s['shard']['count']}", "items": len(its), "wall_s": s["wall_s"],
                    "embedded_texts": s.get("embedded_texts")} for s, its in map(read_run, args.shards)],
        "merge_differences_from_single": compare_runs(args.merged, args.single),
        "date": time.strftime("%Y-%m-%d"), "machine": "2 x86-64 cores shared with other jobs (load average 15-30), no GPU",
        "load_average_1m_at_write": os.getloadavg()[0], "command": args.command,
    }
    if args.ray:
        ray_summary, _ = read_run(args.ray)
        record["ray"] = {"total_wall_s": args.ray_total_s, "longest_shard_s": ray_summary["wall_s"], "shards": [m["shard"] for m in ray_summary["merged_from"]],
                         "differences_from_single": compare_runs(args.ray, args.single)}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("items", "merge_differences_from_single")} | ({"ray": record["ray"]} if args.ray else {})))


if __name__ == "__main__":
    main()
