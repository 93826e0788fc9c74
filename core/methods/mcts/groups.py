"""Node groups (section III-C): concepts clustered by FAISS k-means on their embeddings; a concept
node's group G(n) is its cluster, and K_G(n) the sentences reachable through the cluster's concepts."""

from __future__ import annotations

import numpy as np


def kmeans_groups(vectors: np.ndarray, n_groups: int, seed: int = 1234, iterations: int = 20) -> np.ndarray:
    """Cluster label of each row (spherical k-means: the vectors are unit length, so cosine)."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    n_groups = max(1, min(n_groups, n))
    if n_groups == 1:
        return np.zeros(n, dtype=np.int32)
    km = faiss.Kmeans(vectors.shape[1], n_groups, niter=iterations, seed=seed, spherical=True, verbose=False,
                      min_points_per_centroid=1, max_points_per_centroid=256)
    km.train(vectors)
    _, labels = km.index.search(vectors, 1)
    return labels[:, 0].astype(np.int32)


class NodeGroups:
    """Group -> concepts and group -> sentences (CSR), from per-concept labels and the postings."""

    def __init__(self, labels: np.ndarray, concept_ptr: np.ndarray, concept_sents: np.ndarray) -> None:
        self.labels = np.asarray(labels, dtype=np.int32)
        self.n_groups = int(self.labels.max()) + 1 if len(self.labels) else 0
        order = np.argsort(self.labels, kind="stable")
        counts = np.bincount(self.labels, minlength=self.n_groups)
        self.member_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.members = order.astype(np.int32)
        self._concept_ptr, self._concept_sents = concept_ptr, concept_sents
        self._cache: dict[int, np.ndarray] = {}

    def concepts_of_group(self, g: int) -> np.ndarray:
        return self.members[self.member_ptr[g]: self.member_ptr[g + 1]]

    def sentences_of_group(self, g: int) -> np.ndarray:
        g = int(g)
        if g not in self._cache:
            parts = [self._concept_sents[self._concept_ptr[c]: self._concept_ptr[c + 1]] for c in self.concepts_of_group(g)]
            self._cache[g] = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int32)
        return self._cache[g]

    def group_concepts(self, concepts) -> set[int]:
        """Every concept sharing a group with one of `concepts`: G(N_P) as a concept set."""
        out: set[int] = set()
        for g in {int(self.labels[c]) for c in concepts}:
            out.update(self.concepts_of_group(g).tolist())
        return out
