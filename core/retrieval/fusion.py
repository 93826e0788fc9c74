"""Fusing a dense and a sparse ranking of the same documents (sentences or chunks).

- Reciprocal rank fusion (Cormack et al., 2009): score(d) = sum_i w_i / (k + rank_i(d)) over the
  lists where d is ranked within the top `depth`; ranks start at 1, ties go to the lower index.
- Normalised convex combination: alpha * minmax(dense) + (1 - alpha) * minmax(sparse), min-max
  over all documents of this query (so both lie in [0, 1] whatever the embedder's or BM25's scale).

A sparse score of 0 means no query word occurs in the document: such documents are not ranked by
the sparse list (they would otherwise enter RRF in index order). Weights are chosen on the dev
split (docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

FusionMethod = Literal["rrf", "convex"]


@dataclass(frozen=True)
class FusionSettings:
    method: FusionMethod = "rrf"
    dense_weight: float = 0.5  # RRF: weight of the dense list (sparse gets 1 - w); convex: alpha
    rrf_k: int = 60  # the RRF constant of Cormack et al.
    depth: int = 100  # RRF: only the top `depth` of each list contribute

    def __post_init__(self) -> None:
        if self.method not in ("rrf", "convex"):
            raise ValueError(f"fusion method must be 'rrf' or 'convex', not {self.method!r}")
        if not 0.0 <= self.dense_weight <= 1.0:
            raise ValueError(f"dense_weight must lie in [0, 1], got {self.dense_weight}")
        if self.rrf_k < 0 or self.depth < 1:
            raise ValueError("RRF needs k >= 0 and depth >= 1")

    def describe(self) -> str:
        if self.method == "rrf":
            return f"RRF k={self.rrf_k}, depth {self.depth}, dense weight {self.dense_weight:g}"
        return f"convex, alpha (dense) {self.dense_weight:g}"


def rank_positions(scores: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of each document by descending score (ties: lower index first); documents
    not `valid` get rank 0 (unranked)."""
    scores = np.asarray(scores, dtype=np.float64)
    valid = np.ones(len(scores), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    order = np.lexsort((np.arange(len(scores)), -np.where(valid, scores, -np.inf)))
    ranks = np.zeros(len(scores), dtype=np.int64)
    ranks[order] = np.arange(1, len(scores) + 1)
    ranks[~valid] = 0
    return ranks


def rrf(rank_lists: Sequence[np.ndarray], weights: Sequence[float], k: int = 60, depth: int = 100) -> np.ndarray:
    """Weighted reciprocal rank fusion of 1-based rank arrays (0 = unranked)."""
    out = np.zeros(len(rank_lists[0]), dtype=np.float64)
    for ranks, w in zip(rank_lists, weights):
        ranks = np.asarray(ranks)
        used = (ranks > 0) & (ranks <= depth)
        out[used] += w / (k + ranks[used])
    return out


def minmax(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    lo, hi = float(scores.min()), float(scores.max())
    return np.zeros_like(scores) if hi <= lo else (scores - lo) / (hi - lo)


def fuse(dense: np.ndarray, sparse: np.ndarray, settings: FusionSettings = FusionSettings()) -> np.ndarray:
    """Fused score of every document (higher is better) from its dense similarity and BM25 score."""
    dense, sparse = np.asarray(dense, dtype=np.float64), np.asarray(sparse, dtype=np.float64)
    if dense.shape != sparse.shape:
        raise ValueError(f"dense and sparse scores differ in shape: {dense.shape} vs {sparse.shape}")
    w = settings.dense_weight
    if settings.method == "convex":
        return w * minmax(dense) + (1.0 - w) * minmax(sparse)
    ranks = [rank_positions(dense), rank_positions(sparse, sparse > 0)]
    return rrf(ranks, [w, 1.0 - w], settings.rrf_k, settings.depth)


def top_ids(scores: np.ndarray, n: int, positive_only: bool = True) -> list[int]:
    """Indices of the n best scores (ties: lower index), optionally only those above zero."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(scores)), -scores))[:n]
    return [int(i) for i in order if not positive_only or scores[i] > 0]
