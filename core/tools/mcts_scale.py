"""Scale run of the MCTS knowledge base: grow the built 50k-sentence GenericsKB sample to N
sentences by repetition with new ids, then measure build time, size on disk, memory and query time.

How the KB grows: copy c (c = 1..N/50k-1) of sentence i gets a new id, the same text with the
term suffixed " #c", the same concepts, and the original embedding plus small Gaussian noise
(sigma 0.01, renormalised) so copies are distinct points in the FAISS index. Embedding and spaCy
parsing are NOT redone for the copies (they would cost hours on 2 cores); their time at scale is
the 50k build's time multiplied by N / 50k (both are linear in the number of sentences), reported
separately as an extrapolation. Everything else is built for real at N: the FAISS index, the
concept postings (N sentences), the node groups' sentence lists, the cache files, a reload.

    .venv/bin/python -m core mcts-scale --sentences 1000000 --queries 30 --out results/mcts-scale-1m.json
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from core.paths import SHARED_DIR



def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def grow(kb, n_total: int, seed: int = 0):
    import faiss

    from core.methods.mcts.kb import KnowledgeBase, _csr, _invert

    base = len(kb)
    copies = -(-n_total // base)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    texts, terms, scores = [], [], []
    for c in range(copies):
        take = min(base, n_total - c * base)
        texts += kb.texts[:take]
        terms += kb.terms[:take] if c == 0 else [f"{t} #{c}" for t in kb.terms[:take]]
        scores += kb.scores[:take]
    index = faiss.IndexFlatIP(kb.dim)
    for c in range(copies):
        take = min(base, n_total - c * base)
        block = kb.vectors[:take].copy()
        if c:
            block += rng.normal(scale=0.01, size=block.shape).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
        index.add(block)
    t_index = time.perf_counter() - t0
    t1 = time.perf_counter()
    rows = [kb.sentence_concepts(i % base).tolist() for i in range(n_total)]
    sent_ptr, sent_concepts = _csr(rows)
    del rows
    concept_ptr, concept_sents = _invert(sent_ptr, sent_concepts, len(kb.concepts))
    t_postings = time.perf_counter() - t1
    header = {**kb.header, "sentences": n_total, "postings": int(len(concept_sents)), "grown_from": base,
              "source_sha256": f"{kb.header['source_sha256']}-x{n_total}"}
    big = KnowledgeBase(texts, terms, scores, index, kb.concepts, kb.concept_vectors, sent_ptr, sent_concepts,
                        concept_ptr, concept_sents, header)
    return big, {"copy_and_index_s": round(t_index, 2), "postings_s": round(t_postings, 2)}


def add_arguments(p) -> None:
    p.add_argument("--kb", default=str(SHARED_DIR / "data/genericskb/GenericsKB.txt"))
    p.add_argument("--kb-limit", type=int, default=None,
                   help="grow from the first N sentences' built slice (when the full KB is not built yet)")
    p.add_argument("--sentences", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--dialogues", default=str(SHARED_DIR / "data/dailydialog/dialogues_test.txt"))
    p.add_argument("--work", default="/tmp/mcts-scale", help="where the grown KB is saved (deleted afterwards)")
    p.add_argument("--out", required=True)


def main(args) -> int:

    from core.benchmarks.knowledge_retrieval import contexts
    from core.methods.mcts.config import MCTSConfig
    from core.methods.mcts.groups import NodeGroups
    from core.methods.mcts.kb import KnowledgeBase, load_or_build
    from core.methods.mcts.retriever import KnowledgeSearch
    from core.resources import load_embedder

    embedder = load_embedder()
    kb = load_or_build(args.kb, embedder, limit=args.kb_limit)
    small_build_s = float(kb.header.get("build_s", float("nan")))
    rss0 = rss_mb()
    big, t = grow(kb, args.sentences)
    t0 = time.perf_counter()
    big.groups = NodeGroups(kb.groups.labels, big.concept_ptr, big.concept_sents)
    for g in range(big.groups.n_groups):  # materialise every group's sentence list once, as the search would
        big.groups.sentences_of_group(g)
    t["groups_s"] = round(time.perf_counter() - t0, 2)
    rss_built = rss_mb()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    big.save(work)
    t["save_s"] = round(time.perf_counter() - t0, 2)
    disk = {f.name: f.stat().st_size for f in work.iterdir()}
    del big
    t0 = time.perf_counter()
    expect = {k: json.loads((work / "header.json").read_text())[k] for k in
              ("format", "version", "source_sha256", "embedder", "dim", "concept_max_words")}
    loaded = KnowledgeBase.load(work, expect)
    loaded.groups = NodeGroups(kb.groups.labels, loaded.concept_ptr, loaded.concept_sents)
    t["load_s"] = round(time.perf_counter() - t0, 2)

    items = contexts(args.dialogues, args.queries, 4)
    rows = {}
    for name, config in (("mcts-no-reasoner", MCTSConfig(use_reasoner=False)),
                         ("mcts-no-reasoner-no-bridging", MCTSConfig(use_reasoner=False, use_bridging=False))):
        search = KnowledgeSearch(loaded, embedder, config)
        search.run(items[0]["context"])  # warm-up (spaCy, first group lists)
        times = []
        for it in items:
            t1 = time.perf_counter()
            search.run(it["context"])
            times.append(time.perf_counter() - t1)
        rows[name] = {"median_s": round(float(np.median(times)), 4), "p95_s": round(float(np.percentile(times, 95)), 4),
                      "n": len(times)}
    q = embedder.encode([" ".join(it["context"]) for it in items])
    t1 = time.perf_counter()
    for row in q:
        loaded.search(row[None, :], 5)
    rows["dense (FAISS flat, 1 query at a time)"] = {"mean_s": round((time.perf_counter() - t1) / len(q), 4), "n": len(q)}
    out = {
        "command": ".venv/bin/python -m core " + " ".join(sys.argv[1:]), "load_average_1m_at_end": os.getloadavg()[0],
        "sentences": args.sentences, "grown_from": len(kb), "how": "repetition with new ids (see `python -m core mcts-scale`)",
        "build_measured_s": t, "build_measured_total_s": round(sum(t.values()) - t["load_s"], 2),
        "embed_and_parse_extrapolated_s": round(small_build_s * args.sentences / len(kb), 1),  # linear: an estimate
        "small_kb_build_s": small_build_s,
        "disk_bytes": disk, "disk_total_mb": round(sum(disk.values()) / 2**20, 1),
        "peak_rss_mb": {"after_loading_base": round(rss0, 1), "after_growing": round(rss_built, 1), "end": round(rss_mb(), 1)},
        "query": rows, "machine": "2 x86-64 cores (shared with other jobs), 24 GiB, no GPU, Python 3.11",
        "date": time.strftime("%Y-%m-%d"),
    }
    shutil.rmtree(work, ignore_errors=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0
