"""The calibrated classifier of the offline `nli` verifier: multinomial logistic regression over the
signals of `fact_signals`, stored as plain JSON (feature names, scaler, weights, per-label offsets)
so the model in assets/ is readable and loads without pickle.

Training (`python -m core train-factcheck`) uses the HybriDialogue dev split only. Model choice is
honest about held-out performance: facts are grouped by dialogue context (the held-out split was
made the same way), hyper-parameters (regularisation C, class weighting, per-label offsets that
trade agreement between the labels) are chosen by grouped cross-validation inside each outer fold,
and the reported kappa is that of the outer folds (nested CV), repeated over shuffles. Train-set
kappa is reported too, only to show the gap.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from core.metrics.fact_signals import FEATURES, SignalSettings
from core.metrics.fact_types import LABELS
from core.paths import ASSETS_DIR
from core.hashing import file_sha256

DEFAULT_FACTCHECK_DIR = ASSETS_DIR / "models" / "factcheck"
MODEL_FILE = "model.json"
FORMAT = "factcheck-logreg/1"


@dataclass(frozen=True)
class TrainSettings:
    c_grid: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0)
    class_weights: tuple[str, ...] = ("balanced", "none")
    offset_grid: tuple[float, ...] = (-0.5, 0.0, 0.5, 1.0)  # added to the Supports and Refutes logits
    outer_folds: int = 5
    inner_folds: int = 4
    repeats: int = 3
    seed: int = 13


@dataclass
class FactCheckModel:
    features: tuple[str, ...]
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]  # one row per label in LABELS order
    intercept: list[float]
    offsets: list[float]  # added to the logits before the softmax (chosen by CV)
    signal_settings: SignalSettings = SignalSettings()
    nli_model: str = ""  # "" = the project's model in assets/models/nli-minilm-l6
    meta: dict = field(default_factory=dict)

    def logits(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        x = np.asarray([[float(r[f]) for f in self.features] for r in rows], dtype=float).reshape(len(rows), len(self.features))
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef).T + np.asarray(self.intercept) + np.asarray(self.offsets)

    def predict_proba(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        if not rows:
            return np.zeros((0, len(LABELS)))
        return softmax(self.logits(rows))

    # -- storage -----------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "labels": list(LABELS), **asdict(self)}
        path = folder / MODEL_FILE
        path.write_text(json.dumps(data, indent=1))
        return path

    @classmethod
    def load(cls, folder: str | Path = "") -> "FactCheckModel":
        path = Path(folder or DEFAULT_FACTCHECK_DIR) / MODEL_FILE
        if not path.is_file():
            from core.paths import MissingResource

            raise MissingResource(f"the fact-check classifier is missing at {path}: run `python -m core train-factcheck`")
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT or data.get("labels") != list(LABELS):
            raise ValueError(f"{path} is not a {FORMAT} model over {LABELS}")
        missing = set(data["features"]) - set(FEATURES)
        if missing:
            raise ValueError(f"{path} reads signals this code does not compute: {sorted(missing)}")
        return cls(
            features=tuple(data["features"]), mean=data["mean"], scale=data["scale"], coef=data["coef"],
            intercept=data["intercept"], offsets=data["offsets"], signal_settings=SignalSettings(**data["signal_settings"]),
            nli_model=data.get("nli_model", ""), meta=data.get("meta", {}),
        )


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


# -- training ----------------------------------------------------------------------------------
def _matrix(rows: Sequence[dict[str, float]], features: Sequence[str]) -> np.ndarray:
    return np.asarray([[float(r[f]) for f in features] for r in rows], dtype=float)


def _fit(x: np.ndarray, y: np.ndarray, c: float, weights: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, coef, intercept) of a standardised multinomial logistic regression."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    if len(set(y.tolist())) != len(LABELS):
        raise ValueError(f"training data must hold all of {LABELS}")
    model = LogisticRegression(C=c, class_weight="balanced" if weights == "balanced" else None, max_iter=2000)
    model.fit((x - mean) / scale, y)
    order = np.argsort(model.classes_)  # rows in LABELS order
    return mean, scale, model.coef_[order], model.intercept_[order]


def _logits(x, fitted) -> np.ndarray:
    mean, scale, coef, intercept = fitted
    return ((x - mean) / scale) @ coef.T + intercept


def _offsets(settings: TrainSettings) -> list[np.ndarray]:
    return [np.asarray([a, b, 0.0]) for a, b in itertools.product(settings.offset_grid, settings.offset_grid)]


def kappa(y_true, y_pred) -> float:
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(y_true, y_pred, labels=list(range(len(LABELS)))))


def _choose(x, y, groups, settings: TrainSettings, seed: int) -> tuple[float, str, np.ndarray, float]:
    """(C, class weighting, offsets, inner CV kappa) maximising grouped-CV kappa on (x, y)."""
    from sklearn.model_selection import GroupKFold

    folds = list(GroupKFold(settings.inner_folds, shuffle=True, random_state=seed).split(x, y, groups))
    offsets = _offsets(settings)
    best = (-2.0, 0.0, "", offsets[0])
    for c, weights in itertools.product(settings.c_grid, settings.class_weights):
        logits = np.zeros((len(y), len(LABELS)))
        for train, test in folds:
            logits[test] = _logits(x[test], _fit(x[train], y[train], c, weights))
        for off in offsets:
            k = kappa(y, (logits + off).argmax(axis=1))
            if k > best[0]:
                best = (k, c, weights, off)
    return best[1], best[2], best[3], best[0]


def nested_cv(rows, labels, groups, features=FEATURES, settings: TrainSettings = TrainSettings()) -> dict:
    """Outer grouped folds, hyper-parameters chosen inside each: held-out estimates of accuracy,
    macro-F1, kappa (3-way and supported-vs-not), per repeat and their mean and spread."""
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import GroupKFold

    x, y, g = _matrix(rows, features), np.asarray([LABELS.index(l) for l in labels]), np.asarray(groups)
    per_repeat = []
    for r in range(settings.repeats):
        pred = np.zeros(len(y), dtype=int)
        for k, (train, test) in enumerate(GroupKFold(settings.outer_folds, shuffle=True, random_state=settings.seed + r).split(x, y, g)):
            c, weights, off, _ = _choose(x[train], y[train], g[train], settings, settings.seed + 100 * r + k)
            pred[test] = (_logits(x[test], _fit(x[train], y[train], c, weights)) + off).argmax(axis=1)
        per_repeat.append({
            "accuracy": float(accuracy_score(y, pred)), "macro_f1": float(f1_score(y, pred, average="macro")),
            "kappa": kappa(y, pred), "kappa_binary": binary_kappa(y, pred),
        })
    keys = per_repeat[0].keys()
    return {
        "repeats": per_repeat,
        "mean": {k: float(np.mean([p[k] for p in per_repeat])) for k in keys},
        "std": {k: float(np.std([p[k] for p in per_repeat])) for k in keys},
    }


def binary_kappa(y_true, y_pred) -> float:
    """Cohen's kappa of Supports vs not (Refutes and Not Enough Info together)."""
    from sklearn.metrics import cohen_kappa_score

    support = LABELS.index("Supports")
    return float(cohen_kappa_score(np.asarray(y_true) == support, np.asarray(y_pred) == support))


def train(rows, labels, groups, features=FEATURES, settings: TrainSettings = TrainSettings(),
          signal_settings: SignalSettings = SignalSettings(), nli_model: str = "", meta: dict | None = None) -> FactCheckModel:
    """The final model: hyper-parameters by grouped CV on all rows, then fitted on all rows."""
    x, y, g = _matrix(rows, features), np.asarray([LABELS.index(l) for l in labels]), np.asarray(groups)
    c, weights, off, inner = _choose(x, y, g, settings, settings.seed)
    mean, scale, coef, intercept = _fit(x, y, c, weights)
    train_pred = (_logits(x, (mean, scale, coef, intercept)) + off).argmax(axis=1)
    info = {"C": c, "class_weight": weights, "cv_kappa_of_chosen": inner, "train_kappa": kappa(y, train_pred),
            "n_train": int(len(y)), "label_counts": {l: int((y == i).sum()) for i, l in enumerate(LABELS)},
            "trained": time.strftime("%Y-%m-%dT%H:%M:%S"), **(meta or {})}
    return FactCheckModel(tuple(features), mean.tolist(), scale.tolist(), coef.tolist(), intercept.tolist(),
                          off.tolist(), signal_settings, nli_model, info)


