"""Human-logic alignment (MCTS paper, eq. 5 and Table IV), adapted.

The paper: S_align = |K_theta ∩ T_theta| / |T_theta|, where an entailment model P_e decides
whether retrieved knowledge k and a human logic transition T agree with a ground-truth event E
inferred by an event knowledge graph (ACCENT), and ChatGPT labelled the transitions. Neither the
event graph nor ChatGPT is available here. Adaptation (issue 14): the next human turn is the
logic transition and plays E, so P_e(T | E) = 1 and every context counts in |T_theta|; P_e(k | E)
is the project's NLI model's entailment probability with the next turn as premise and the
knowledge sentence as hypothesis. A context is aligned at threshold theta when its best
retrieved sentence has P_e > theta:

    alignment@theta        = share of contexts with max_k P_e(k | T) > theta          (0-100)
    alignment_no_threshold = mean over contexts of max_k P_e(k | T)                    (0-100)
    alignment_curve        = alignment@theta for theta = 0.0, 0.1, ..., 1.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

THRESHOLDS = tuple(round(0.1 * i, 1) for i in range(11))


def best_entailment(transitions: Sequence[str], knowledge: Sequence[Sequence[str]], scorer) -> list[float]:
    """Per context: the largest entailment probability of any of its sentences given the
    transition (0.0 for a context with no retrieved sentence)."""
    pairs, owner = [], []
    for i, (t, ks) in enumerate(zip(transitions, knowledge)):
        for k in ks:
            pairs.append((t, k))
            owner.append(i)
    best = [0.0] * len(transitions)
    for i, probs in zip(owner, scorer.predict(pairs) if pairs else []):
        best[i] = max(best[i], float(probs.entailment))
    return best


def alignment_scores(best: Sequence[float], thresholds: Sequence[float] = THRESHOLDS) -> dict:
    values = np.asarray(best, dtype=float)
    if values.size == 0:
        return {"alignment@0.5": float("nan"), "alignment_no_threshold": float("nan"), "alignment_curve": {}}
    curve = {f"{t:.1f}": round(100 * float(np.mean(values > t)), 2) for t in thresholds}
    return {"alignment@0.5": round(100 * float(np.mean(values > 0.5)), 2),
            "alignment_no_threshold": round(100 * float(values.mean()), 2),
            "alignment_curve": curve}
