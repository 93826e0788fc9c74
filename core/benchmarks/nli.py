"""NLI accuracy: accuracy, macro and per-label F1, and pairs per second of an NLI model.

Reads any jsonl of `premise`, `hypothesis`, `label` (entailment | neutral | contradiction), e.g.
../shared/data/nli/mnli/mnli_dev_matched.jsonl. Pairs are scored as they are (truncated to the
scorer's max length, no history windowing). Speed is timed over the scoring alone (model load
excluded) in batches of similar length, on whatever device the scorer uses.
"""

from __future__ import annotations

import json
import time

from core.benchmarks.runner import BenchContext, BenchResult
from core.metrics.nli import LABELS

DEFAULT_METHODS = "nli"


def add_arguments(parser) -> None:
    parser.add_argument("--nli-model", default="", help="NLI model id or folder (default: assets/models/nli-minilm-l6)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per pair (the model was trained at 128)")


def read_pairs(path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("label") not in LABELS:
                continue  # unlabelled pairs (e.g. SNLI's "-") cannot be scored
            if not isinstance(row.get("premise"), str) or not isinstance(row.get("hypothesis"), str):
                raise ValueError(f"{path}:{n}: need string premise and hypothesis")
            rows.append(row)
    return rows


def classification_report(gold: list[str], predicted: list[str]) -> dict[str, float]:
    """Accuracy, per-label precision-recall F1, and their macro mean."""
    out = {"accuracy": sum(g == p for g, p in zip(gold, predicted)) / max(1, len(gold))}
    for label in LABELS:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted))
        fp = sum(g != label and p == label for g, p in zip(gold, predicted))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted))
        out[f"f1_{label}"] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    out["macro_f1"] = sum(out[f"f1_{label}"] for label in LABELS) / len(LABELS)
    return out


def run(ctx: BenchContext) -> BenchResult:
    from core.metrics.nli import NLIScorer, NLISettings

    rows = read_pairs(ctx.data)[: ctx.limit] if ctx.limit else read_pairs(ctx.data)
    model = ctx.options.get("nli_model", "")
    settings = NLISettings(model=model, max_length=ctx.options.get("max_length", 128), batch_size=ctx.options.get("batch_size", 64))
    t_load = time.perf_counter()
    scorer = NLIScorer(model, settings)
    load_s = time.perf_counter() - t_load
    pairs = [(r["premise"], r["hypothesis"]) for r in rows]
    t0 = time.perf_counter()
    probs = scorer.predict(pairs)
    seconds = time.perf_counter() - t0
    predicted = [p.label for p in probs]
    for row, p, label in zip(rows, probs, predicted):
        ctx.write_item({"premise": row["premise"], "hypothesis": row["hypothesis"], "label": row["label"],
                        "predicted": label, **{k: round(v, 5) for k, v in p.as_dict().items()}})
    report = classification_report([r["label"] for r in rows], predicted)
    report.update({"pairs": len(rows), "pairs_per_s": len(rows) / seconds if seconds else float("nan"), "load_s": load_s})
    print(f"{scorer.name} on {ctx.data.name}: accuracy {report['accuracy']:.4f}, macro-F1 {report['macro_f1']:.4f} "
          + ", ".join(f"F1 {label} {report[f'f1_{label}']:.4f}" for label in LABELS)
          + f"; {report['pairs_per_s']:.1f} pairs/s over {len(rows)} pairs")
    return BenchResult(
        results={scorer.name: report},
        timings={scorer.name: {"score_pair": [seconds / max(1, len(rows))]}},
        settings={"nli_model": scorer.source, "label_order": list(scorer.order), "max_length": settings.max_length,
                  "batch_size": settings.batch_size, "device": settings.device},
    )
