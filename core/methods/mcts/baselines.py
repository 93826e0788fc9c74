"""Baselines over the same knowledge base (section IV-B2): dense retrieval with the project's
SBERT model (all-MiniLM-L6-v2), BM25 (bm25s, Okapi k1=1.5, b=0.75), and SGMem-style sentence
retrieval. As in the paper, their query is the context plus the reasoner's inferences when those
are given ("to ensure a fair comparison").

SGMem-style: the n = 15 sentences most similar to the query with cos + 1 >= gamma are the seeds;
each adds its k nearest sentences in the KB (one hop of the KNN sentence graph, found through the
FAISS index as needed, so no N x N graph is built); everything reached is ranked by cos + 1. A KB
sentence is its own chunk, so SGMem's chunk ranking reduces to this sentence ranking.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from core.dialogue import EVIDENCE_KNOWLEDGE, Evidence
from core.methods.mcts.kb import KnowledgeBase
from core.methods.sgmem.config import SGMemConfig
from core.resources import Embedder


class KBRetriever(ABC):
    name: str = ""
    label: str = ""

    def __init__(self, kb: KnowledgeBase, embedder: Embedder | None = None) -> None:
        self.kb, self.embedder = kb, embedder

    @abstractmethod
    def retrieve(self, query: str, k: int) -> list[Evidence]:
        """The k best KB sentences for `query`, best first."""

    def _evidence(self, sid: int, score: float, **meta) -> Evidence:
        return Evidence(self.kb.texts[sid], float(score), f"kb:{sid}", EVIDENCE_KNOWLEDGE,
                        {"sentence_id": int(sid), "term": self.kb.terms[sid], **meta})


class DenseKB(KBRetriever):
    name, label = "dense", "Dense (SBERT: all-MiniLM-L6-v2)"

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        if not query.strip():
            return []
        ids, scores = self.kb.search(self.embedder.encode([query]), k)
        return [self._evidence(i, s) for i, s in zip(ids[0], scores[0]) if i >= 0]


class BM25KB(KBRetriever):
    name, label = "bm25", "BM25 (bm25s)"

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        import bm25s

        index = self.kb.bm25()
        known = index.vocab_dict
        tokens = [t for t in bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0] if t in known]
        if not tokens:
            return []
        ids, scores = index.retrieve([tokens], k=min(k, len(self.kb)), show_progress=False, n_threads=1)
        return [self._evidence(int(i), s) for i, s in zip(ids[0], scores[0]) if s > 0]


class SGMemKB(KBRetriever):
    name, label = "sgmem", "SGMem-style (KNN sentence graph)"

    def __init__(self, kb: KnowledgeBase, embedder: Embedder, config: SGMemConfig = SGMemConfig()) -> None:
        super().__init__(kb, embedder)
        self.config = config

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        c = self.config
        if not query.strip():
            return []
        q = self.embedder.encode([query])
        ids, scores = self.kb.search(q, c.max_sentences)
        seeds = [int(i) for i, s in zip(ids[0], scores[0]) if i >= 0 and s + c.epsilon >= c.gamma]
        reached = set(seeds)
        frontier = seeds
        for _ in range(c.hops):
            if not frontier or c.knn_k == 0:
                break
            _, nbrs = self.kb.search(self.kb.vectors[frontier], c.knn_k + 1)
            new = {int(j) for j in nbrs.ravel() if j >= 0} - reached
            reached |= new
            frontier = sorted(new)
        if not reached:
            return []
        order = np.fromiter(sorted(reached), dtype=np.int64)
        sims = self.kb.vectors[order] @ q[0] + c.epsilon
        ranked = sorted(zip(order.tolist(), sims.tolist()), key=lambda p: (-p[1], p[0]))[:k]
        return [self._evidence(i, s, role="seed" if i in seeds else "hop") for i, s in ranked]


BASELINES = {"dense": DenseKB, "bm25": BM25KB, "sgmem": SGMemKB}
