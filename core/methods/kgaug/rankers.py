"""Rankers of candidate triples, all returning (triple, score), best first.

- `bm25`: Okapi BM25 (rank-bm25, k1=1.5, b=0.75) with the candidates of the query as the
  documents, as the paper's baseline does; stop words dropped from both sides.
- `kaping`: cosine similarity of the query and the verbalised triple in the project embedder
  (KAPING, Baek et al. 2023; the paper used multi-qa-mpnet, we default to all-MiniLM-L6-v2).
  Triple vectors are kept in memory, so a triple is embedded once per process.
- `triton`: the trained relevance model (features.py): a relation classifier over the query fused
  with BM25 and graph features by a logistic combiner; the default.
- `triton-ce`: the trained relevance cross-encoder (relevance.py), P(relevant | query, triple).

Ties keep the candidates' gathering order (stable sort), so results are deterministic.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.methods.kgaug.candidates import Candidate
from core.methods.kgaug.triples import verbalize
from core.resources import Embedder

_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stop() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def bm25_tokens(text: str) -> list[str]:
    stop = _stop()
    return [w for w in _WORD.findall(text.lower()) if w not in stop]


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    score: float

    @property
    def triple(self):
        return self.candidate.triple


class TripleRanker(ABC):
    name: str = "ranker"
    label: str = ""

    @abstractmethod
    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text (higher is more relevant)."""

    def candidate_scores(self, query: str, candidates: Sequence[Candidate], context: Sequence[str] = ()) -> np.ndarray:
        """Scores of the candidates; rankers that read only the verbalised triple use `scores`."""
        return self.scores(query, [verbalize(c.triple) for c in candidates])

    def rank(self, query: str, candidates: Sequence[Candidate], k: int | None = None,
             context: Sequence[str] = ()) -> list[Ranked]:
        """`context`: the dialogue's texts before the query, oldest first (used by `triton`)."""
        if not candidates:
            return []
        values = np.asarray(self.candidate_scores(query, candidates, context), dtype=np.float64)
        order = np.argsort(-values, kind="stable")
        if k is not None:
            order = order[:k]
        return [Ranked(candidates[i], float(values[i])) for i in order]


class BM25Ranker(TripleRanker):
    name, label = "bm25", "BM25 over verbalised triples"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        from rank_bm25 import BM25Okapi

        words = bm25_tokens(query)
        if not texts or not words:
            return np.zeros(len(texts))
        corpus = [bm25_tokens(t) or ["_"] for t in texts]  # BM25Okapi rejects empty documents
        return np.asarray(BM25Okapi(corpus, k1=self.k1, b=self.b).get_scores(words), dtype=np.float64)


class KapingRanker(TripleRanker):
    name, label = "kaping", "KAPING: embedding cosine of query and triple"

    def __init__(self, embedder: Embedder, memory: int = 200_000) -> None:
        self.embedder = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory = memory

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for t, v in zip(missing, self.embedder.encode(missing)):
                self._vectors[t] = v
            while len(self._vectors) > self._memory:
                self._vectors.popitem(last=False)
        return np.stack([self._vectors[t] for t in texts])

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        q = self.embedder.encode([query])[0]
        return self._encode_texts(texts) @ q


class TritonRanker(TripleRanker):
    name, label = "triton-ce", "Triton cross-encoder: trained MiniLM relevance cross-encoder"

    def __init__(self, model) -> None:
        self.model = model  # relevance.RelevanceModel

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return self.model.predict(query, texts)


class TritonFeatureRanker(TripleRanker):
    """Triton's default: the learned relation-aware ranker fused with BM25 (features.py)."""

    name, label = "triton", "Triton: trained relevance model (relation classifier + BM25 + graph features)"

    def __init__(self, model) -> None:
        self.model = model  # features.FeatureRelevanceModel

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        raise TypeError("the Triton ranker reads the candidates (relation, hop, degree), not only their text: use rank()")

    def candidate_scores(self, query: str, candidates: Sequence[Candidate], context: Sequence[str] = ()) -> np.ndarray:
        return self.model.logits(query, candidates, context)
