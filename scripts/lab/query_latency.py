"""Query latency at LongMemEval-S scale, the query embedding excluded: index one haystack per
retriever, then ask every question of the file against it (their vectors computed beforehand) and
report p50 / p95 in wall time and in process CPU time (CPU time is what a shared machine does not
inflate). Also the first query right after indexing, to check there is no model cold start.

Usage: .venv/bin/python scripts/lab/query_latency.py --data ../shared/data/longmemeval/longmemeval_s_subset.json \
           --embedder minilm --methods bm25-s,rag-t,hybrid-s,sgmem-t,sgmem-s,sgmem-t+h,sgmem-s+h
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.data.longmemeval import load_longmemeval
from core.methods.retrievers import make_retriever
from core.methods.sgmem.calibration import retrieval_options
from core.resources import load_embedder
from core.retrieval import RetrieverContext
from core.retrieval.cache import CachedEmbedder


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--embedder", default="")
    p.add_argument("--methods", default="bm25-s,rag-t,hybrid-s,sgmem-t,sgmem-s,sgmem-t+h,sgmem-s+h")
    p.add_argument("--haystack", type=int, default=0)
    args = p.parse_args()
    instances = load_longmemeval(args.data)
    t0, c0 = time.perf_counter(), time.process_time()
    inner = load_embedder(args.embedder)  # loaded, not yet run: the index build below warms it
    load_s, load_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    embedder = CachedEmbedder(inner)
    questions = [i.question for i in instances]
    dialogue = instances[args.haystack].dialogue
    options = retrieval_options("longmemeval", inner.name)
    out = {"embedder": inner.name, "haystack": instances[args.haystack].question_id, "turns": len(dialogue),
           "load_s": round(load_s, 2), "load_cpu_s": round(load_cpu_s, 2), "methods": {}}
    # Cold start: the first retriever's index build warms the model; then two queries never seen
    # before (so the model embeds them): the first must cost about what the second does.
    first = make_retriever(args.methods.split(",")[0], RetrieverContext(embedder, None, options))
    first.index(dialogue)
    fresh = []
    for q in (f"cold-start probe {time.time()}: how long is my daily commute?", f"second probe {time.time()}: where did I buy my bike?"):
        t0, c0 = time.perf_counter(), time.process_time()
        first.retrieve(q, 10)
        fresh.append((round(1000 * (time.perf_counter() - t0), 1), round(1000 * (time.process_time() - c0), 1)))
    out["first_new_query_ms_wall_cpu"], out["second_new_query_ms_wall_cpu"] = fresh
    t0 = time.perf_counter()
    embedder.encode(questions)  # into the cache: retrieval below then excludes the query embedding
    out["questions_embedded_s"] = round(time.perf_counter() - t0, 2)
    for name in args.methods.split(","):
        r = make_retriever(name, RetrieverContext(embedder, None, options))
        t0, c0 = time.perf_counter(), time.process_time()
        r.index(dialogue)
        index_s, index_cpu_s = time.perf_counter() - t0, time.process_time() - c0
        wall, cpu = [], []
        for q in questions:
            t0, c0 = time.perf_counter(), time.process_time()
            r.retrieve(q, 10)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out["methods"][name] = {"index_s": round(index_s, 2), "index_cpu_s": round(index_cpu_s, 2), "index_mb": round((r.nbytes() or 0) / 2**20, 2),
                                "first_query_ms": round(1000 * wall[0], 2),
                                "wall_p50_ms": round(1000 * float(np.median(wall)), 2),
                                "wall_p95_ms": round(1000 * float(np.percentile(wall, 95)), 2),
                                "cpu_p50_ms": round(1000 * float(np.median(cpu)), 2),
                                "cpu_p95_ms": round(1000 * float(np.percentile(cpu, 95)), 2)}
        print(name, out["methods"][name], flush=True)
    import os

    out["load_average"] = os.getloadavg()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
