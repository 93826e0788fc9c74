"""Answer scores for memory QA benchmarks: LoCoMo's exact match and token F1, and the intervals
the QA report is built from (bootstrap over questions, paired between methods).

The normalisation follows LoCoMo's official `task_eval/evaluation.py` (snap-research/locomo):
commas removed, lower case, punctuation removed, the articles a/an/the and the word "and"
removed, whitespace collapsed; F1 compares Porter-stemmed tokens (`token_f1` of
`core.metrics.lexical` with its `LOCOMO` normalisation). Per category:

- 1 (multi-hop): the prediction and the gold are split on commas; each gold part takes its best
  F1 against any predicted part, and the parts are averaged (`f1` there).
- 2, 3, 4: plain token F1; category 3 keeps only the gold before the first ';'.
- 5 (adversarial): not scored by F1 (LoCoMo checks for "not mentioned"); the QA benchmarks leave
  it out.

Exact match is LoCoMo's too: the normalised token *sets* are equal (word order ignored).
Higher is better for every score here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from core.metrics.lexical import LOCOMO, normalise_tokens, token_f1


def normalize_answer(text: str) -> str:
    """LoCoMo's `normalize_answer`, the words exact match compares."""
    return " ".join(normalise_tokens(text, LOCOMO))


def multi_answer_f1(prediction: str, gold: str) -> float:
    """LoCoMo `f1` for multi-hop answers: comma-separated parts, best match per gold part, mean."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return float(np.mean([max(token_f1(p, g, LOCOMO) for p in preds) for g in golds]))


def exact_match(prediction: str, gold: str) -> float:
    """LoCoMo `exact_match_score`: equal sets of normalised tokens."""
    return float(set(normalize_answer(prediction).split()) == set(normalize_answer(gold).split()))


def locomo_gold(gold: str, category: int) -> str:
    """The gold answer as LoCoMo scores it: category 3 keeps the part before the first ';'."""
    gold = str(gold)
    return gold.split(";")[0].strip() if category == 3 else gold


def locomo_scores(prediction: str, gold: str, category: int) -> dict[str, float]:
    """{"em", "f1"} of one answer by LoCoMo's per-category rules (categories 1-4)."""
    if category == 5:
        raise ValueError("category 5 (adversarial) is not scored by F1; leave it out")
    gold = locomo_gold(gold, category)
    f1 = multi_answer_f1(prediction, gold) if category == 1 else token_f1(prediction, gold, LOCOMO)
    return {"em": exact_match(prediction, gold), "f1": float(f1)}


# -- intervals ------------------------------------------------------------------------------------
def bootstrap_mean(values: Sequence[float], resamples: int = 2000, seed: int = 0) -> dict[str, float | list | int]:
    """Mean, percentile-bootstrap 95% interval and n of `values` (interval NaN under 2 values)."""
    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size == 0:
        return {"mean": float("nan"), "ci95": [float("nan"), float("nan")], "n": 0}
    if data.size < 2:
        return {"mean": float(data.mean()), "ci95": [float("nan"), float("nan")], "n": 1}
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    return {"mean": float(data.mean()), "ci95": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))],
            "n": int(data.size)}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], resamples: int = 2000, seed: int = 0) -> dict:
    """Mean of a - b over paired values (the same questions), with a 95% interval from resampling
    the pairs together; `p_le_0`: the share of resamples where the difference is not above 0."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired values need the same length")
    diff = x - y
    if diff.size < 2:
        return {"diff": float(diff.mean()) if diff.size else float("nan"), "ci95": [float("nan"), float("nan")],
                "n": int(diff.size), "p_le_0": float("nan")}
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(resamples, diff.size))].mean(axis=1)
    return {"diff": float(diff.mean()), "ci95": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))],
            "n": int(diff.size), "p_le_0": float((means <= 0).mean())}
