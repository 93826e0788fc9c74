"""Levels x methods from a retrieval benchmark run, with bootstrap intervals: what the Retrieval
comparison page charts and docs/retrieval.md tabulates.

Read from a run's items.jsonl (one line per question, per-method metrics inside): the headline
questions only (LoCoMo categories 1-4, LongMemEval without abstention), the mean of a metric per
method, and a 95% percentile bootstrap interval over questions (same resamples for every method,
seeded, so the intervals are reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.retrieval.base import LEVELS


@dataclass(frozen=True)
class LevelRow:
    method: str  # e.g. "sgmem-r+h"
    family: str  # the method without its level: "sgmem+h"
    level: str  # turn | round | session
    metric: str
    mean: float
    low: float  # 95% bootstrap interval
    high: float
    tokens: float  # mean tokens of the context at the same cut-off (tokens@k), nan when absent
    n: int


def method_parts(name: str) -> tuple[str, str] | None:
    """'sgmem-r+h' -> ('sgmem+h', 'round'); None for names without a chunk level."""
    family, _, spec = name.partition("-")
    hybrid = spec.endswith("+h")
    spec = spec.removesuffix("+h")
    by_letter = {level[0]: level for level in LEVELS}
    if not spec or spec[0] not in by_letter:
        return None
    memory = spec[1:]
    return family + (f"-{memory}" if memory else "") + ("+h" if hybrid else ""), by_letter[spec[0]]


def is_headline(item: dict) -> bool:
    return item.get("category") != 5 and not str(item.get("question_id", "")).endswith("_abs")


def metric_keys(metric: str, sample: dict) -> tuple[str, str] | None:
    """(metric key, tokens key) in one item's per-method dict. 'recall@5' -> tokens@5; a bare name
    such as 'tok_recall' takes the method's own budget ('tok_recall@400' -> tok_used@400)."""
    key = metric if "@" in metric else next((k for k in sample if k.startswith(metric + "@")), None)
    if key is None or key not in sample:
        return None
    name, cut = key.rsplit("@", 1)
    return key, (f"tok_used@{cut}" if name.startswith("tok_") else f"tokens@{cut}")


def level_rows(items: Sequence[dict], metric: str = "recall@5", boot: int = 1000, seed: int = 0) -> list[LevelRow]:
    items = [i for i in items if is_headline(i)]
    methods = sorted({m for i in items for m in i.get("methods", {})})
    rng = np.random.default_rng(seed)
    rows, samples = [], None
    for method in methods:
        parts = method_parts(method)
        per_item = [i["methods"][method] for i in items if method in i.get("methods", {})]
        keys = metric_keys(metric, per_item[0]) if per_item else None
        if parts is None or keys is None:
            continue
        values = np.array([m.get(keys[0], np.nan) for m in per_item], dtype=float)
        values = values[~np.isnan(values)]
        if values.size == 0:
            continue
        if samples is None or samples.shape[1] != values.size:  # same resamples for methods over the same questions
            samples = rng.integers(0, values.size, size=(boot, values.size))
        means = values[samples].mean(axis=1)
        tokens = [m[keys[1]] for m in per_item if keys[1] in m]
        rows.append(LevelRow(method, parts[0], parts[1], keys[0], float(values.mean()), float(np.percentile(means, 2.5)),
                             float(np.percentile(means, 97.5)), float(np.mean(tokens)) if tokens else float("nan"), int(values.size)))
    return rows


@dataclass(frozen=True)
class PairedDifference:
    a: str  # e.g. "sgmem-t+h"
    b: str  # e.g. "bm25-t"
    metric: str
    mean: float  # mean over questions of a's value minus b's
    low: float  # 95% percentile bootstrap interval of that mean (questions resampled in pairs)
    high: float
    n: int


def paired_difference(items: Sequence[dict], a: str, b: str, metric: str = "recall@5", boot: int = 2000,
                      seed: int = 0) -> PairedDifference:
    """a - b on the headline questions both answered: the same question's two values stay together
    in every resample, so the interval is far tighter than the two methods' own intervals suggest."""
    pairs = [(i["methods"][a][metric], i["methods"][b][metric]) for i in items
             if is_headline(i) and metric in i.get("methods", {}).get(a, {}) and metric in i.get("methods", {}).get(b, {})]
    if not pairs:
        raise ValueError(f"no question has {metric} for both {a} and {b}")
    diff = np.array([x - y for x, y in pairs], dtype=float)
    means = diff[np.random.default_rng(seed).integers(0, diff.size, size=(boot, diff.size))].mean(axis=1)
    return PairedDifference(a, b, metric, float(diff.mean()), float(np.percentile(means, 2.5)),
                            float(np.percentile(means, 97.5)), int(diff.size))


def markdown(rows: Sequence[LevelRow]) -> str:
    """Levels down, families across: 'mean [low, high] (tokens)'."""
    families = sorted({r.family for r in rows})
    cell = {(r.level, r.family): r for r in rows}
    lines = ["| level | " + " | ".join(families) + " |", "| --- |" + " --- |" * len(families)]
    for level in LEVELS:
        cells = []
        for f in families:
            r = cell.get((level, f))
            cells.append("" if r is None else f"{r.mean:.3f} [{r.low:.3f}, {r.high:.3f}] ({r.tokens:.0f} tok)")
        if any(cells):
            lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


LEVEL_METRICS = ("recall@5", "recall@10", "tok_recall")


def level_summary(summary: dict, items: Sequence[dict], metrics: Sequence[str] = LEVEL_METRICS) -> dict:
    """A run's levels x methods with intervals, small enough to keep in results/ (the page charts it
    without the run's items.jsonl): benchmark, data, embedder and settings from the run's summary."""
    from dataclasses import asdict

    settings = summary.get("settings", {})
    out = {"benchmark": summary.get("benchmark"), "data": summary.get("data"), "code_version": summary.get("code_version"),
           "embedder": settings.get("embedder") or summary.get("embedder"), "questions": sum(1 for i in items if is_headline(i)),
           "rows": {}}
    for metric in metrics:
        rows = level_rows(items, metric)
        if rows:
            out["rows"][metric] = [asdict(r) for r in rows]
    return out
