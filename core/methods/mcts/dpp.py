"""Greedy MAP inference for a determinantal point process (Chen, Zhang and Zhou, NeurIPS 2018):
add, one at a time, the item that most increases log det(L_Y), with incremental Cholesky updates
(O(n k^2) instead of a determinant per candidate).

The reasoner's kernel is the quality-diversity decomposition L = diag(q) S diag(q): the diagonal
holds the squared relevance of each inference, the off-diagonal their embedding similarity
(S = E E^T of unit vectors, positive semi-definite).
"""

from __future__ import annotations

import numpy as np


def quality_diversity_kernel(quality: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    q = np.asarray(quality, dtype=np.float64)
    e = np.asarray(vectors, dtype=np.float64)
    return q[:, None] * (e @ e.T) * q[None, :]


def greedy_dpp(kernel: np.ndarray, k: int, eps: float = 1e-10) -> tuple[list[int], float]:
    """(selected indices in selection order, log det of the selected submatrix). Stops early when
    no item adds volume (the remaining ones are linear combinations of those chosen)."""
    L = np.asarray(kernel, dtype=np.float64)
    n = L.shape[0]
    k = min(k, n)
    if k <= 0:
        return [], 0.0
    cis = np.zeros((k, n))
    gains = np.diag(L).copy()  # d_i^2: the gain in det of adding i
    chosen: list[int] = []
    logdet = 0.0
    j = int(np.argmax(gains))
    while gains[j] > eps:
        chosen.append(j)
        logdet += float(np.log(gains[j]))
        if len(chosen) == k:
            break
        m = len(chosen) - 1
        e = (L[j, :] - cis[:m, j] @ cis[:m, :]) / np.sqrt(gains[j])
        cis[m, :] = e
        gains = gains - e**2
        gains[chosen] = -np.inf
        j = int(np.argmax(gains))
    return chosen, logdet
