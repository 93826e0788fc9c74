"""Choose SGMem's limits per embedder and the hybrid fusion weights on the LoCoMo dev split only.

For every conversation the sentence graph is built once per KNN k; each setting then re-runs
retrieval (seeds, hops, chunk ranking) at the three chunk levels, and the script prints recall@5
(categories 1-4) and tok_recall at the level's token budget, per setting and level, best first,
and writes them all to --out as JSON. Embeddings come from the on-disk cache (the benchmark fills it).

Usage (2 cores: ~10-20 min per embedder with a warm embedding cache):
  .venv/bin/python scripts/tune_retrieval.py --data ../shared/data/locomo/locomo_dev.json --embedder mpnet --out tune-mpnet.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.benchmarks import retrieval_common as ev
from core.data.locomo import load_locomo
from core.methods.hybrid import HybridChunkRetriever
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.retriever import SGMemRetriever
from core.resources import load_embedder
from core.retrieval.base import LEVELS
from core.retrieval.cache import CachedEmbedder
from core.retrieval.fusion import FusionSettings, fuse, top_ids

BUDGETS = ev.parse_budgets(ev.DEFAULT_BUDGETS["locomo"])
FUSIONS = ([FusionSettings("rrf", w) for w in (0.3, 0.5, 0.7)]
           + [FusionSettings("convex", a) for a in (0.2, 0.3, 0.5, 0.7, 0.8)])


def paper_grid(quick: bool):
    """sgmem-*: the paper's algorithm (dense seeds above gamma, h hops, chunk = MEAN over its reached
    sentences) with its limits searched; `max` rows are the best-sentence alternative, for the record."""
    kh, ns, gammas = (((1, 1), (1, 0)), (15, 30), (1.2,)) if quick else (
        ((1, 1), (1, 0), (3, 1)), (15, 30, 60), (0.0, 1.2, 1.3, 1.4, 1.5))
    for (k, h), n, gamma, agg in itertools.product(kh, ns, gammas, ("mean", "max")):
        yield SGMemConfig(knn_k=k, hops=h, max_sentences=n, gamma=gamma, aggregate=agg)


def hybrid_grid(quick: bool):
    kh, ns = (((1, 1),), (15,)) if quick else (((1, 1), (1, 0)), (15, 30, 60))
    for (k, h), n, fusion, agg in itertools.product(kh, ns, FUSIONS, ("max", "sum")):
        yield SGMemConfig(knn_k=k, hops=h, max_sentences=n, aggregate=agg, hybrid=fusion)


def chunkfusion_grid(embedder_name: str):
    """The calibrated +h settings of each level (core.methods.sgmem.calibration), with BM25 over whole
    chunks mixed into the chunk score at several weights (0 = the graph alone)."""
    from core.methods.sgmem.calibration import hybrid_settings

    seen = set()
    for level in LEVELS:
        for w in (0.0, 0.2, 0.3, 0.4, 0.5, 0.7):
            config = replace(hybrid_settings(embedder_name, level), chunk_level="turn", chunk_bm25=w)
            if config not in seen:
                seen.add(config)
                yield config


def key(config: SGMemConfig) -> str:
    base = f"k={config.knn_k} h={config.hops} n={config.max_sentences} agg={config.aggregate}"
    extra = f" chunk_bm25={config.chunk_bm25:g}" if config.chunk_bm25 else ""
    return base + (f" {config.hybrid.describe()}{extra}" if config.hybrid else f" gamma={config.gamma}")


def score(evidence, gold, level) -> tuple[float, float]:
    recall = ev.turn_scores(evidence, gold, [5])["recall@5"]
    budget = BUDGETS[level]
    return recall, ev.budget_scores(evidence, gold, budget)[f"tok_recall@{budget}"]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--embedder", default="")
    p.add_argument("--out", required=True)
    p.add_argument("--what", default="paper,hybrid,chunks")
    p.add_argument("--quick", action="store_true", help="a smaller grid (what the full grid left tied on MiniLM: see docs)")
    p.add_argument("--conversations", default="", help="comma-separated sample ids (default: all in the file)")
    args = p.parse_args()
    embedder = CachedEmbedder(load_embedder(args.embedder))
    conversations = load_locomo(args.data)
    if args.conversations:
        conversations = [c for c in conversations if c.sample_id in args.conversations.split(",")]
    what = set(args.what.split(","))
    configs = ((list(paper_grid(args.quick)) if "paper" in what else []) + (list(hybrid_grid(args.quick)) if "hybrid" in what else [])
               + (list(chunkfusion_grid(embedder.name)) if "chunkfusion" in what else []))
    sums: dict[tuple[str, str, str], list[float]] = {}
    t0 = time.perf_counter()
    for conv in conversations:
        questions = [q for q in conv.questions if q.evidence and q.category != 5]
        graphs = {}
        for kk in sorted({c.knn_k for c in configs}):
            r = SGMemRetriever(embedder, SGMemConfig(knn_k=kk))
            r.index(conv.dialogue)
            graphs[kk] = r
        vectors = embedder.encode([q.question for q in questions])
        # Configs that reach the same sentences (same k, h, n and gamma or fusion) differ only in the
        # chunk aggregate: reach once, rank per aggregate. The dense and BM25 scores of every sentence
        # are computed once per question (the retriever would redo them per setting).
        groups: dict[tuple, list[SGMemConfig]] = {}
        for config in configs:
            groups.setdefault((config.knn_k, config.hops, config.max_sentences, config.gamma, config.hybrid), []).append(config)
        if not configs:
            groups = {}
        any_graph = next(iter(graphs.values()))
        need_sparse = any(c.hybrid for c in configs)
        for q, vec in zip(questions, vectors):
            dense = np.einsum("ij,j->i", any_graph.graph.vectors.astype(np.float64), vec.astype(np.float64))
            order = np.lexsort((np.arange(len(dense)), -dense))
            sparse = any_graph.sparse.scores(q.question) if need_sparse else None
            fused_by: dict = {}
            for (kk, hops, n, gamma, fusion), members in groups.items():
                r = graphs[kk]
                if fusion is None:  # the paper's step 1: the n most similar sentences with sim >= gamma
                    seeds = [int(i) for i in order[:n] if dense[i] + 1.0 >= gamma]
                    reached = r.graph.expand(seeds, hops)
                    sims = {i: float(dense[i] + 1.0) for i in reached}
                else:
                    if fusion not in fused_by:
                        fused_by[fusion] = fuse(dense, sparse, fusion)
                    fused = fused_by[fusion]
                    reached = r.graph.expand(top_ids(fused, n), hops)
                    sims = {i: float(fused[i]) for i in reached}
                for config in members:
                    for level in LEVELS:
                        r.config = replace(config, chunk_level=level)
                        top = r._rank_chunks(reached, sims, q.question)[:10]
                        evidence = [r.tracker.chunk(level, cid).evidence(sc) for cid, sc in top]
                        row = sums.setdefault((key(config), level, conv.sample_id), [0.0, 0.0, 0])
                        rec, tok = score(evidence, q.evidence, level)
                        row[0] += rec
                        row[1] += tok
                        row[2] += 1
        if "chunks" in what:
            for level in LEVELS:
                # convex 1.0 ranks as dense RAG does, convex 0.0 as BM25 (bm25s): the baselines on the same questions
                for fusion in FUSIONS + [FusionSettings("convex", 1.0), FusionSettings("convex", 0.0)]:
                    h = HybridChunkRetriever(embedder, level, fusion)
                    h.index(conv.dialogue)
                    for q in questions:
                        row = sums.setdefault((f"hybrid-chunks {fusion.describe()}", level, conv.sample_id), [0.0, 0.0, 0])
                        rec, tok = score(h.retrieve(q.question, 10), q.evidence, level)
                        row[0] += rec
                        row[1] += tok
                        row[2] += 1
        print(f"{conv.sample_id} done at {time.perf_counter() - t0:.0f} s", flush=True)
        write(args, embedder, sums, done=[c.sample_id for c in conversations[: conversations.index(conv) + 1]])
    table = write(args, embedder, sums, done=[c.sample_id for c in conversations])
    for level in LEVELS:
        rows = sorted((r for r in table if r["level"] == level), key=lambda r: -r["recall@5"])
        print(f"\n== {level}")
        for r in rows[:8]:
            print(f"{r['recall@5']:.4f}  tok {r['tok_recall']:.4f}  {r['setting']}")
    return 0


def totals(per_conv: list[dict]) -> dict[tuple[str, str], list[float]]:
    """(setting, level) -> [recall sum, tok_recall sum, questions] over the per-conversation rows."""
    total: dict[tuple[str, str], list[float]] = {}
    for r in per_conv:
        t = total.setdefault((r["setting"], r["level"]), [0.0, 0.0, 0])
        t[0] += r["recall_sum"]
        t[1] += r["tok_recall_sum"]
        t[2] += r["n"]
    return total


def write(args, embedder, sums, done: list[str]) -> list[dict]:
    """The table over the conversations done so far, written after each one (a long run can be
    stopped and still leaves its figures)."""
    per_conv = [{"setting": s, "level": lvl, "conversation": c, "recall_sum": v[0], "tok_recall_sum": v[1], "n": v[2]}
                for (s, lvl, c), v in sums.items()]
    total = totals(per_conv)
    table = [{"setting": s, "level": lvl, "recall@5": v[0] / v[2], "tok_recall": v[1] / v[2], "n": v[2]}
             for (s, lvl), v in total.items()]
    Path(args.out).write_text(json.dumps({"embedder": embedder.name, "data": args.data, "budgets": BUDGETS,
                                          "conversations": done, "rows": table, "per_conversation": per_conv}, indent=1))
    return table


if __name__ == "__main__":
    raise SystemExit(main())
