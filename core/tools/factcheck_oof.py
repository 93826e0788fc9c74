"""Out-of-fold labels of the offline `nli` verifier on the HybriDialogue dev split, so FactScore and
NEIP from the verifier can be compared with the humans' on facts the classifier did not see.

Reads the signals `python -m core train-factcheck` cached (it must have run on the same file), splits
the facts into 5 folds by dialogue (the turns of one dialogue on one side), chooses the
classifier's hyper-parameters inside each training fold exactly as the trainer does, labels the
held-out fold, and reports agreement and FactScore / NEIP per response type (human vs verifier).

    .venv/bin/python -m core factcheck-oof --out results/hybridialogue-facts-dev-nli-oof.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


from core.paths import DEFAULT_CACHE_DIR, SHARED_DIR, portable_path


def add_arguments(parser) -> None:
    parser.add_argument("--data", default=str(SHARED_DIR / "data" / "hybridialogue" / "hybridial_annotated_dev.json"))
    parser.add_argument("--signals-cache", default=str(DEFAULT_CACHE_DIR / "factcheck-signals.json"))
    parser.add_argument("--out", default="results/hybridialogue-facts-dev-nli-oof.json")
    parser.add_argument("--seed", type=int, default=13)


def main(args) -> int:
    from sklearn.model_selection import GroupKFold

    from core.benchmarks.hybridialogue_facts import _key, per_type_scores
    from core.data.hybridialogue import load_hybridialogue_facts
    from core.metrics.fact_classifier import TrainSettings, _choose, _fit, _logits, _matrix, file_sha256
    from core.metrics.fact_signals import FEATURES
    from core.metrics.fact_train import agreement, cv_groups
    from core.metrics.fact_types import LABELS


    cache = json.loads(Path(args.signals_cache).read_text())
    if cache.get("data_sha256") != file_sha256(args.data):
        print(f"{args.signals_cache} was not computed on {args.data}: run `python -m core train-factcheck` first", file=sys.stderr)
        return 2
    loaded = load_hybridialogue_facts(args.data)
    rows, labels = cache["rows"], cache["labels"]
    groups, _ = cv_groups(loaded, len(rows))
    settings = TrainSettings()
    x, y, g = _matrix(rows, FEATURES), np.asarray([LABELS.index(l) for l in labels]), np.asarray(groups)
    pred = np.zeros(len(y), dtype=int)
    chosen = []
    for k, (train, test) in enumerate(GroupKFold(5, shuffle=True, random_state=args.seed).split(x, y, g)):
        c, weights, off, inner = _choose(x[train], y[train], g[train], settings, args.seed + k)
        pred[test] = (_logits(x[test], _fit(x[train], y[train], c, weights)) + off).argmax(axis=1)
        chosen.append({"C": c, "class_weight": weights, "offsets": off.tolist(), "inner_kappa": inner})
    facts = []
    for fact, p in zip(loaded.facts, pred):
        context = fact.context_key
        facts.append({"type": fact.response_type, "dialogue_id": _key(context),
                      "response_id": _key(context, fact.response_type, fact.item.response),
                      "human": fact.label, "label": LABELS[p]})
    result = agreement([f["human"] for f in facts], [f["label"] for f in facts])
    fs_h, ne_h, fs_h_ci, ne_h_ci = per_type_scores(facts, "human", 0)
    fs_v, ne_v, fs_v_ci, ne_v_ci = per_type_scores(facts, "label", 0)
    result.update({"factscore_human": fs_h, "factscore_verifier": fs_v, "neip_human": ne_h, "neip_verifier": ne_v,
                   "factscore_human_ci95": fs_h_ci, "factscore_verifier_ci95": fs_v_ci,
                   "neip_human_ci95": ne_h_ci, "neip_verifier_ci95": ne_v_ci,
                   "facts_per_type": {t: sum(f["type"] == t for f in facts) for t in sorted({f["type"] for f in facts})}})
    out = {"data": portable_path(args.data), "data_sha256": cache["data_sha256"], "folds": "5, grouped by dialogue",
           "seed": args.seed, "n_facts": len(facts), "chosen_per_fold": chosen, "results": {"nli-out-of-fold": result},
           "command": ".venv/bin/python -m core factcheck-oof --out " + args.out}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(result, indent=2))
    return 0
