"""The two critics and the policy prior of the MCTS retriever (sections III-D and III-E).

Concept bridging (eq. 3):   c_bridge = |N_C ∩ G(N_P)| / |N_C| + lambda * WD(k, C)
Reasoning-aware (eq. 4):    c_retrieve = sim(r, k) + sim(C, k) + w * |k| - sim(k, k_hat)

WD is the 1-D Wasserstein distance between the two embeddings read as empirical distributions
of their coordinates (what scipy.stats.wasserstein_distance computes on two vectors); lambda =
-1000 (paper). |k| is the knowledge length, normalised here as min(1, words / 20), so w = 0.1
(paper) adds at most 0.1; sim(k, k_hat) is the largest cosine between k and the knowledge selected
before it (0 when none).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from core.text import words


def wasserstein_1d(u: np.ndarray, v: np.ndarray) -> float:
    """W1 between the empirical distributions of the entries of u and v (equal sizes: the mean
    absolute difference of the sorted entries)."""
    u, v = np.sort(np.asarray(u, dtype=np.float64).ravel()), np.sort(np.asarray(v, dtype=np.float64).ravel())
    if u.size != v.size:
        from scipy.stats import wasserstein_distance

        return float(wasserstein_distance(u, v))
    return float(np.mean(np.abs(u - v)))


def bridging_rate(context_concepts: Iterable[int], group_concepts: set[int]) -> float:
    """|N_C ∩ G(N_P)| / |N_C|: the share of explicit context concepts inside the predicted
    nodes' groups (0 when the context has none)."""
    nc = set(context_concepts)
    return len(nc & group_concepts) / len(nc) if nc else 0.0


def bridging_value(rate: float, wd: float, wd_lambda: float = -1000.0) -> float:
    return rate + wd_lambda * wd


def length_term(text: str, norm_words: int = 20) -> float:
    return min(1.0, len(words(text)) / max(1, norm_words))


def retrieval_value(sim_rk: float, sim_ck: float, length: float, sim_previous: float, length_weight: float = 0.1) -> float:
    return sim_rk + sim_ck + length_weight * length - sim_previous


def max_similarity(vector: np.ndarray, previous: np.ndarray) -> float:
    """sim(k, k_hat): the largest cosine between unit `vector` and the rows of `previous`."""
    if previous is None or len(previous) == 0:
        return 0.0
    return float(np.max(np.asarray(previous, dtype=np.float64) @ np.asarray(vector, dtype=np.float64)))


def softmax_priors(scores: np.ndarray, temperature: float) -> np.ndarray:
    """Policy prior P(s, a) over the candidates: a softmax of their similarity scores."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    z = (scores - scores.max()) / max(temperature, 1e-9)
    p = np.exp(z)
    return p / p.sum()
