"""Agreement between annotators, and of each annotator with a reference (gold labels, a verifier).

- Cohen's kappa for each pair of annotators over the items both labelled (scikit-learn);
- Krippendorff's alpha (nominal) over all annotators and items, missing labels allowed (the
  `krippendorff` package);
- observed agreement: per item with two or more labels, the share of annotator pairs that agree,
  averaged over those items (the D_o side of alpha, before chance correction);
- each annotator's kappa against a reference labelling of the same items (`against`): the import's
  gold labels, or an automatic verifier's labels (any `{item_id: label}` mapping);
- confusion matrices (rows: the first annotator or the reference; columns: the other).

Higher is better for all; kappa and alpha are 1 for perfect agreement, 0 for chance, and
undefined (None) when chance agreement is already perfect (both used one and the same label) or
when no item was labelled by both sides.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from core.annotation.model import LABELS, Label


@dataclass(frozen=True)
class Agreement:
    items: int  # items in the task
    items_compared: int  # items with labels from two or more annotators
    annotators: tuple[str, ...]
    pairwise_kappa: dict[str, float | None]  # "a|b" -> kappa
    pairwise_items: dict[str, int]  # "a|b" -> items both labelled
    alpha: float | None
    observed_agreement: float | None
    labels_per_annotator: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "items": self.items, "items_compared": self.items_compared, "annotators": list(self.annotators),
            "labels_per_annotator": self.labels_per_annotator, "pairwise_kappa": self.pairwise_kappa,
            "pairwise_items": self.pairwise_items, "alpha": self.alpha, "observed_agreement": self.observed_agreement,
        }


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def by_annotator(labels: Iterable[Label]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for label in labels:
        out.setdefault(label.annotator, {})[label.item_id] = label.label
    return dict(sorted(out.items()))


def kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa of two equally long label lists; None when undefined."""
    if not a:
        return None
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported as None instead
        return _finite(cohen_kappa_score(a, b, labels=list(LABELS), replace_undefined_by=np.nan))


def pair_key(a: str, b: str) -> str:
    return f"{a}|{b}"


def alpha(table: Mapping[str, Mapping[str, str]]) -> float | None:
    """Krippendorff's alpha (nominal) over annotator -> {item: label}; None when undefined (no item
    with two labels, or one label value in all the data)."""
    import krippendorff

    items = sorted({i for labels in table.values() for i in labels})
    if len(table) < 2 or not items:
        return None
    code = {label: k for k, label in enumerate(LABELS)}
    data = np.full((len(table), len(items)), np.nan)
    column = {item: k for k, item in enumerate(items)}
    for row, labels in enumerate(table.values()):
        for item, label in labels.items():
            data[row, column[item]] = code[label]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 when every value is the same: undefined
            return _finite(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:  # "at least one unit with values assigned by at least two coders" / "more than one value"
        return None


def observed_agreement(table: Mapping[str, Mapping[str, str]]) -> tuple[float | None, int]:
    """(mean over items with >= 2 labels of the share of agreeing annotator pairs, number of such items)."""
    per_item: dict[str, list[str]] = {}
    for labels in table.values():
        for item, label in labels.items():
            per_item.setdefault(item, []).append(label)
    shares = []
    for values in per_item.values():
        if len(values) >= 2:
            pairs = list(itertools.combinations(values, 2))
            shares.append(sum(x == y for x, y in pairs) / len(pairs))
    return (sum(shares) / len(shares) if shares else None), len(shares)


def agreement(labels: Iterable[Label], items: int) -> Agreement:
    table = by_annotator(labels)
    kappas, counts = {}, {}
    for a, b in itertools.combinations(table, 2):
        common = sorted(set(table[a]) & set(table[b]))
        kappas[pair_key(a, b)] = kappa([table[a][i] for i in common], [table[b][i] for i in common])
        counts[pair_key(a, b)] = len(common)
    observed, compared = observed_agreement(table)
    return Agreement(items=items, items_compared=compared, annotators=tuple(table), pairwise_kappa=kappas,
                     pairwise_items=counts, alpha=alpha(table), observed_agreement=observed,
                     labels_per_annotator={a: len(v) for a, v in table.items()})


@dataclass(frozen=True)
class VersusReference:
    annotator: str
    items: int  # items both the annotator and the reference labelled
    kappa: float | None
    accuracy: float | None


def against(labels: Iterable[Label], reference: Mapping[str, str]) -> list[VersusReference]:
    """Each annotator against a reference labelling (gold, or a verifier's labels of the same items)."""
    out = []
    for annotator, mine in by_annotator(labels).items():
        common = [i for i in mine if i in reference]
        a, b = [mine[i] for i in common], [reference[i] for i in common]
        out.append(VersusReference(annotator, len(common), kappa(a, b),
                                   sum(x == y for x, y in zip(a, b)) / len(common) if common else None))
    return out


def confusion(first: Mapping[str, str], second: Mapping[str, str]) -> np.ndarray:
    """3x3 counts over the items both labelled: rows = `first`'s label, columns = `second`'s, in LABELS order."""
    from sklearn.metrics import confusion_matrix

    common = [i for i in first if i in second]
    if not common:
        return np.zeros((len(LABELS), len(LABELS)), dtype=int)
    return confusion_matrix([first[i] for i in common], [second[i] for i in common], labels=list(LABELS))


def disagreements(labels: Iterable[Label]) -> dict[str, dict[str, str]]:
    """Items where two or more annotators gave different labels: item_id -> {annotator: label}."""
    per_item: dict[str, dict[str, str]] = {}
    for label in labels:
        per_item.setdefault(label.item_id, {})[label.annotator] = label.label
    return {i: v for i, v in per_item.items() if len(set(v.values())) > 1}
