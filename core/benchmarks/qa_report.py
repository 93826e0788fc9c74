"""The QA report, computed from items alone (the benchmark's summary and the comparison page
both call it, so anyone can recompute a summary from items.jsonl): per method and category,
EM / F1 / judge accuracy with bootstrap 95% intervals over questions; paired bootstrap
differences between methods on the questions both answered; context tokens, reader calls and
tokens, latency; and the bad input met (no gold answer, a window too small, no verdict).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np

from core.metrics.qa import bootstrap_mean, paired_bootstrap

SCORES = ("f1", "em", "judge")


def _scored(items: Sequence[dict], metric: str) -> list[float]:
    return [float(i[metric]) for i in items if i.get("status") == "ok" and i.get(metric) is not None]


def _block(items: Sequence[dict], boot: int, seed: int) -> dict:
    out: dict = {}
    for metric in SCORES:
        values = _scored(items, metric)
        if not values:
            continue
        stats = bootstrap_mean(values, boot, seed)
        name = "judge_accuracy" if metric == "judge" else metric
        out[name], out[f"{name}_ci95"] = round(stats["mean"], 4), [round(v, 4) for v in stats["ci95"]]
        out[f"n_{name}"] = stats["n"]
    out["n"] = sum(1 for i in items if i.get("status") == "ok")
    return out


def _percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 4) if values else None


def method_row(items: Sequence[dict], boot: int = 2000, seed: int = 0) -> dict:
    ok = [i for i in items if i.get("status") == "ok"]
    row = _block(items, boot, seed)
    by_cat: dict[str, list[dict]] = defaultdict(list)
    for i in items:
        by_cat[str(i.get("category"))].append(i)
    row["by_category"] = {c: _block(v, boot, seed) for c, v in sorted(by_cat.items())}
    tokens = [float(i["context_tokens"]) for i in ok]
    latency = [float(i["latency_s"]) for i in ok if i.get("latency_s") is not None]
    recall = [float(i["evidence_recall"]) for i in ok if i.get("evidence_recall") is not None]
    row.update({
        "context_tokens_mean": round(float(np.mean(tokens)), 1) if tokens else None,
        "context_tokens_max": max(tokens) if tokens else None,
        "cut_to_budget": sum(1 for i in ok if i.get("cut_to_budget")),
        "evidence_recall": round(float(np.mean(recall)), 4) if recall else None,
        "reader_calls": sum(int(i.get("reader_calls", 0)) for i in ok),
        "reused_answers": sum(1 for i in ok if i.get("reused_from")),
        "prompt_tokens": sum(int(i.get("prompt_tokens", 0)) for i in ok),
        "completion_tokens": sum(int(i.get("completion_tokens", 0)) for i in ok),
        "latency_p50_s": _percentile(latency, 50),
        "latency_p95_s": _percentile(latency, 95),
        "no_fit": sum(1 for i in items if i.get("status") == "no_fit"),
        "no_gold": sum(1 for i in items if i.get("status") == "no_gold"),
        "judge_no_verdict": sum(1 for i in ok if "judge" in i and i["judge"] is None),
    })
    return row


def paired(items: Sequence[dict], methods: Sequence[str], metric: str = "f1", boot: int = 2000, seed: int = 0,
           category: str | None = None) -> dict[str, dict]:
    """"a - b" -> paired bootstrap difference of `metric` for every later method a and earlier
    method b (in `methods` order), over the questions both scored."""
    value: dict[str, dict[str, float]] = defaultdict(dict)
    for i in items:
        if i.get("status") == "ok" and i.get(metric) is not None and (category is None or str(i.get("category")) == category):
            value[i["method"]][i["question_id"]] = float(i[metric])
    out = {}
    for ai, a in enumerate(methods):
        for b in methods[:ai]:
            common = sorted(set(value[a]) & set(value[b]))
            if len(common) < 2:
                continue
            stats = paired_bootstrap([value[a][q] for q in common], [value[b][q] for q in common], boot, seed)
            out[f"{a} - {b}"] = {"a": a, "b": b, "diff": round(stats["diff"], 4),
                                 "ci95": [round(v, 4) for v in stats["ci95"]], "n": stats["n"],
                                 "p_le_0": round(stats["p_le_0"], 4)}
    return out


def summarise(items: Sequence[dict], methods: Sequence[str] | None = None, boot: int = 2000, seed: int = 0) -> dict:
    """{"results": method -> row, "paired": metric -> pairs, "bad_input": counts}."""
    methods = list(methods or dict.fromkeys(i["method"] for i in items))
    by_method: dict[str, list[dict]] = defaultdict(list)
    for i in items:
        by_method[i["method"]].append(i)
    results = {m: method_row(by_method[m], boot, seed) for m in methods if by_method.get(m)}
    # evidence_recall: did the gold turns reach the reader; beside F1 it says whether the reader used them
    pairs = {"f1": paired(items, methods, "f1", boot, seed), "evidence_recall": paired(items, methods, "evidence_recall", boot, seed)}
    if any(i.get("judge") is not None for i in items):
        pairs["judge"] = paired(items, methods, "judge", boot, seed)
    no_gold = {i["question_id"] for i in items if i.get("status") == "no_gold"}
    bad = {"no_gold_answer": len(no_gold),
           "window_too_small": {m: r["no_fit"] for m, r in results.items() if r["no_fit"]},
           "judge_no_verdict": sum(r["judge_no_verdict"] for r in results.values()),
           "prompt_truncated": sum(1 for i in items if i.get("prompt_truncated"))}
    return {"results": results, "paired": pairs, "bad_input": bad}


def headline_table(results: dict) -> list[dict]:
    """Rows for a table: method, F1 [CI], EM, judge, n, context tokens, calls, latency."""
    rows = []
    for m, r in results.items():
        rows.append({"method": m, "f1": r.get("f1"), "f1_ci95": r.get("f1_ci95"), "em": r.get("em"),
                     "judge_accuracy": r.get("judge_accuracy"), "n": r.get("n"), "no_fit": r.get("no_fit"),
                     "context_tokens": r.get("context_tokens_mean"), "evidence_recall": r.get("evidence_recall"),
                     "reader_calls": r.get("reader_calls"), "latency_p50_s": r.get("latency_p50_s"),
                     "latency_p95_s": r.get("latency_p95_s")})
    return rows
