"""Aggregates of per-turn benchmark items (the rows of an mtbench run's items.jsonl).

Each metric is averaged within a dialogue first, then over dialogues (D-SMART defines DER per
dialogue, Eq. 5), over the turns marked `scored` only. Confidence intervals are percentile
bootstraps over dialogues, the unit that was sampled. Used by the runner and the Metrics page.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

import numpy as np

METRIC_KEYS = ("cs", "der", "f1", "bleu", "rouge_l", "quality")


def dialogue_means(items: Iterable[dict], metric: str) -> dict[tuple[str, int], float]:
    """(method, dialogue id) -> mean of `metric` over that dialogue's scored turns with a value."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(list)
    for item in items:
        value = item.get(metric)
        if item.get("scored", True) and value is not None:
            sums[(item["method"], item["dialogue_id"])].append(float(value))
    return {key: float(np.mean(v)) for key, v in sums.items()}


def bootstrap_ci(values: Sequence[float], resamples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; (nan, nan) for fewer than 2 values."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def grouped_median_ci(values: Sequence[float], groups: Sequence[object], resamples: int = 2000, seed: int = 0,
                      level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of `values` that come in groups (a dialogue's
    replies: a model that wrote one long reply tends to write the next one long), resampling whole
    groups, so the interval is as wide as the spread between dialogues makes it. (nan, nan) for
    fewer than 2 groups."""
    by_group: dict[object, list[float]] = defaultdict(list)
    for value, group in zip(values, groups, strict=True):
        by_group[group].append(float(value))
    arrays = [np.asarray(v) for v in by_group.values()]
    if len(arrays) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    medians = [float(np.median(np.concatenate([arrays[k] for k in rng.integers(0, len(arrays), len(arrays))])))
               for _ in range(resamples)]
    tail = (1 - level) / 2 * 100
    return float(np.percentile(medians, tail)), float(np.percentile(medians, 100 - tail))


def summarise(items: Sequence[dict], metrics: Sequence[str] = METRIC_KEYS, with_ci: bool = True) -> dict[str, dict]:
    """method -> {metric: mean over dialogues, metric_ci95: [lo, hi], n_dialogues, n_turns}."""
    out: dict[str, dict] = {}
    for method in dict.fromkeys(i["method"] for i in items):
        mine = [i for i in items if i["method"] == method]
        row: dict = {}
        for metric in metrics:
            per_dialogue = [v for (m, _), v in dialogue_means(mine, metric).items()]
            if not per_dialogue:
                continue
            row[metric] = float(np.mean(per_dialogue))
            if with_ci:
                row[f"{metric}_ci95"] = list(bootstrap_ci(per_dialogue))
        row["n_dialogues"] = len({i["dialogue_id"] for i in mine})
        row["n_turns"] = sum(1 for i in mine if i.get("scored", True))
        out[method] = row
    return out


def per_task(items: Sequence[dict], metrics: Sequence[str] = METRIC_KEYS) -> dict[str, dict[str, dict]]:
    """method -> task -> {metric: mean over that task's dialogues, n_dialogues}."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    tasks = dict.fromkeys(i["task"] for i in items)
    for task in tasks:
        for method, row in summarise([i for i in items if i["task"] == task], metrics, with_ci=False).items():
            out[method][task] = row
    return dict(out)


def per_turn(items: Sequence[dict], metrics: Sequence[str] = ("cs", "der")) -> dict[str, dict[int, dict]]:
    """method -> turn number (1-based) -> {metric: mean over scored turns at that index, sem, n}
    (D-SMART's Figure 4 plots CS by turn)."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for item in items:
        if item.get("scored", True):
            groups[(item["method"], int(item["turn"]))].append(item)
    out: dict[str, dict[int, dict]] = defaultdict(dict)
    for (method, turn), rows in sorted(groups.items()):
        entry: dict = {"n": len(rows)}
        for metric in metrics:
            values = np.array([r[metric] for r in rows if r.get(metric) is not None], dtype=float)
            if values.size:
                entry[metric] = float(values.mean())
                entry[f"{metric}_sem"] = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else 0.0
        out[method][turn] = entry
    return dict(out)
