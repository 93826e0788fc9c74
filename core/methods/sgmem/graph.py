"""The sentence graph of SGMem (section 3.3): chunk-sentence membership edges plus KNN
sentence-sentence edges.

Each sentence links to its k most similar other sentences (cosine; ties go to the older
sentence). Adding sentences updates the graph exactly as a rebuild would: new sentences get their
k nearest among all, and an older sentence swaps a neighbour out when a newcomer is closer. For
traversal the KNN edges are undirected (a graph database walks both ways), so a sentence's
neighbours are its own top-k plus the sentences that count it among theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_DECIMALS = 6  # similarities are rounded so that ties break the same way however they are computed


@dataclass(frozen=True)
class SentenceNode:
    id: int
    text: str  # the sentence as spoken
    turn_id: str
    chunks: dict  # level -> chunk id (turn, round, session)


class SentenceGraph:
    def __init__(self, dim: int, k: int) -> None:
        self.dim = dim
        self.k = k
        self.nodes: list[SentenceNode] = []
        self.vectors = np.zeros((0, dim), dtype=np.float32)
        self.knn_ids = np.zeros((0, k), dtype=np.int64)  # -1 = no neighbour yet
        self.knn_scores = np.zeros((0, k), dtype=np.float64)
        self._undirected: list[set[int]] | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    # -- construction ------------------------------------------------------------------------
    def add(self, texts: list[str], turn_ids: list[str], chunks: list[dict], vectors: np.ndarray) -> list[int]:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        if not (len(texts) == len(turn_ids) == len(chunks) == len(vectors)):
            raise ValueError("texts, turn ids, chunks and vectors differ in length")
        start = len(self.nodes)
        new_ids = list(range(start, start + len(texts)))
        self.nodes += [SentenceNode(i, t, tid, dict(c)) for i, t, tid, c in zip(new_ids, texts, turn_ids, chunks)]
        self.vectors = np.vstack([self.vectors, vectors])
        if self.k > 0 and len(texts):
            self._link(start)
        else:
            self.knn_ids = np.vstack([self.knn_ids, np.full((len(texts), self.k), -1, dtype=np.int64)])
            self.knn_scores = np.vstack([self.knn_scores, np.full((len(texts), self.k), -np.inf)])
        self._undirected = None
        return new_ids

    def _link(self, start: int) -> None:
        """KNN rows for sentences start.. and updated rows for the older ones."""
        new = self.vectors[start:].astype(np.float64)
        sims = np.round(new @ self.vectors.astype(np.float64).T, _DECIMALS)  # (b, N)
        sims[np.arange(len(new)), np.arange(start, start + len(new))] = -np.inf  # no self loops
        all_ids = np.broadcast_to(np.arange(len(self.nodes)), sims.shape)
        new_ids, new_scores = _top_k(all_ids, sims, self.k)
        if start:
            old_vs_new = sims[:, :start].T  # (start, b): the same numbers, so ties agree with a rebuild
            cand_ids = np.hstack([self.knn_ids, np.broadcast_to(np.arange(start, len(self.nodes)), old_vs_new.shape)])
            cand_scores = np.hstack([self.knn_scores, old_vs_new])
            self.knn_ids, self.knn_scores = _top_k(cand_ids, cand_scores, self.k)
        self.knn_ids = np.vstack([self.knn_ids, new_ids])
        self.knn_scores = np.vstack([self.knn_scores, new_scores])

    # -- reading -----------------------------------------------------------------------------
    def knn_edges(self) -> set[tuple[int, int]]:
        """Directed KNN edges (i, j): j is among the k nearest neighbours of i."""
        return {(i, int(j)) for i, row in enumerate(self.knn_ids) for j in row if j >= 0}

    def neighbours(self, i: int) -> set[int]:
        if self._undirected is None:
            adj: list[set[int]] = [set() for _ in self.nodes]
            for a, b in self.knn_edges():
                adj[a].add(b)
                adj[b].add(a)
            self._undirected = adj
        return self._undirected[i]

    def expand(self, seeds: list[int], hops: int) -> set[int]:
        """The seeds plus every sentence within `hops` KNN edges of one."""
        reached, frontier = set(seeds), set(seeds)
        for _ in range(hops):
            frontier = {n for i in frontier for n in self.neighbours(i)} - reached
            if not frontier:
                break
            reached |= frontier
        return reached

    def members(self, level: str) -> dict[str, list[int]]:
        """Chunk-sentence membership edges at one chunk level: chunk id -> sentence ids."""
        out: dict[str, list[int]] = {}
        for node in self.nodes:
            out.setdefault(node.chunks[level], []).append(node.id)
        return out


def _top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k best (highest score, then lowest id); missing slots are -1 / -inf.
    Rows are first cut to a few candidates with a partial sort; a row whose k-th best score is
    shared by more candidates than that cut holds is sorted in full, so ties stay exact."""
    ids = np.asarray(ids)
    scores = np.where(ids >= 0, scores, -np.inf)
    keep = k + 8
    if scores.shape[1] <= 4 * keep:
        return _sorted_top_k(ids, scores, k)
    part = np.argpartition(-scores, keep - 1, axis=1)[:, :keep]
    top_ids, top_scores = _sorted_top_k(np.take_along_axis(ids, part, 1), np.take_along_axis(scores, part, 1), k)
    kth = top_scores[:, k - 1]
    crowded = np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > keep)
    if crowded.size:
        full_ids, full_scores = _sorted_top_k(ids[crowded], scores[crowded], k)
        top_ids[crowded], top_scores[crowded] = full_ids, full_scores
    return top_ids, top_scores


def _sorted_top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((np.where(ids >= 0, ids, np.iinfo(np.int64).max), -scores), axis=-1)[:, :k]
    top_ids = np.take_along_axis(ids, order, axis=1).astype(np.int64)
    top_scores = np.take_along_axis(scores, order, axis=1)
    top_ids = np.where(np.isfinite(top_scores), top_ids, -1)
    if top_ids.shape[1] < k:  # fewer candidates than k
        pad = k - top_ids.shape[1]
        top_ids = np.hstack([top_ids, np.full((len(top_ids), pad), -1, dtype=np.int64)])
        top_scores = np.hstack([top_scores, np.full((len(top_scores), pad), -np.inf)])
    return top_ids, top_scores
