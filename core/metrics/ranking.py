"""Ranking metrics for retrieval of gold items (used for KG triples; any hashable item works).

Per query (`ranking_metrics`): `recall@k` = share of the gold items in the top k; `hit@k` = 1 when
any gold item is in the top k; `rr` = reciprocal rank of the first gold item (0 when absent);
`in_candidates` = whether any gold item was among the candidates at all (the ceiling no ranker can
pass); `candidate_recall` = share of the gold items among the candidates. All higher is better.

Over queries (`summarise`): the means of the above (`mrr` = mean of `rr`), `candidate_ceiling` =
share of queries with a gold item among the candidates, and micro `linking_precision` /
`linking_recall` of linked entities against the gold entities (counts from `linking_counts`).
"""

from __future__ import annotations

from typing import Hashable, Iterable, Sequence

import numpy as np

CUTOFFS = (1, 5)


def ranking_metrics(ranked: Sequence[Hashable], gold: set, candidates: set, cutoffs: Iterable[int] = CUTOFFS) -> dict:
    if not gold:
        raise ValueError("ranking_metrics needs at least one gold item")
    ranks = [i for i, t in enumerate(ranked) if t in gold]
    out = {"first_gold_rank": ranks[0] + 1 if ranks else None,
           "rr": 1.0 / (ranks[0] + 1) if ranks else 0.0,
           "in_candidates": bool(gold & candidates),
           "candidate_recall": len(gold & candidates) / len(gold)}
    for k in cutoffs:
        top = set(ranked[:k])
        out[f"recall@{k}"] = len(gold & top) / len(gold)
        out[f"hit@{k}"] = float(bool(gold & top))
    return out


def linking_counts(linked: Iterable[str], gold: Iterable[str]) -> tuple[int, int, int]:
    """(true positives, predicted, gold) over entity names, for micro precision and recall."""
    pred, ref = set(linked), set(gold)
    return len(pred & ref), len(pred), len(ref)


def precision_recall(tp: int, predicted: int, gold: int) -> tuple[float, float]:
    """Micro precision and recall from summed counts; NaN where the denominator is 0."""
    return (tp / predicted if predicted else float("nan")), (tp / gold if gold else float("nan"))


def summarise(rows: list[dict], link: tuple[int, int, int]) -> dict:
    """Mean per-query metrics of `rows` (dicts from `ranking_metrics` plus `linked` and
    `candidates` counts) and micro linking precision/recall from the summed `link` counts."""
    n = len(rows)
    if not n:
        return {"turns": 0}

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in rows]))

    precision, recall = precision_recall(*link)
    out = {f"{name}@{k}": mean(f"{name}@{k}") for k in CUTOFFS for name in ("recall", "hit") if f"{name}@{k}" in rows[0]}
    out.update({
        "mrr": mean("rr"), "candidate_ceiling": float(np.mean([r["in_candidates"] for r in rows])),
        "candidate_recall": mean("candidate_recall"), "linking_precision": precision, "linking_recall": recall,
        "turns": n, "turns_with_entity": int(sum(r["linked"] > 0 for r in rows)),
        "mean_candidates": float(np.mean([r["candidates"] for r in rows])),
    })
    return out


__all__ = ["ranking_metrics", "linking_counts", "precision_recall", "summarise"]
