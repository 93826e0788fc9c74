"""Lexical overlap with the gold reply: Word F1, BLEU (sacrebleu), ROUGE-L. All in [0, 1],
higher is better. They reward wording, not logical correctness (D-SMART reports them "for
completeness"); a turn without a reference gets None."""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import Sequence

from core.metrics.base import Metric, TurnSample

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalise_tokens(text: str) -> list[str]:
    """SQuAD normalisation: lower case, punctuation and articles removed, split on whitespace."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split()


def word_f1(prediction: str, reference: str) -> float:
    """Harmonic mean of token precision and recall (bag of normalised words, SQuAD style)."""
    pred, ref = normalise_tokens(prediction), normalise_tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    overlap = sum((Counter(pred) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu(prediction: str, reference: str) -> float:
    """Sentence BLEU from sacrebleu (4-gram, exponential smoothing, 13a tokenizer), scaled to [0, 1]."""
    return _sentence_bleu().sentence_score(prediction, [reference]).score / 100.0


@lru_cache(maxsize=1)
def _sentence_bleu():
    from sacrebleu.metrics import BLEU as SacreBLEU

    return SacreBLEU(effective_order=True)  # sentence level: n-gram orders the hypothesis lacks are skipped


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, O(len(a) * len(b)))."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure (beta = 1) over lower-cased word tokens."""
    pred, ref = re.findall(r"\w+", prediction.lower()), re.findall(r"\w+", reference.lower())
    lcs = lcs_length(pred, ref)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


class _ReferenceMetric(Metric):
    def turn_values(self, samples: Sequence[TurnSample]) -> list[float | None]:
        return [self.pair(s.response, s.reference) if s.reference else None for s in samples]

    @staticmethod
    def pair(prediction: str, reference: str) -> float:
        raise NotImplementedError


class WordF1(_ReferenceMetric):
    name, label = "f1", "Word F1"
    description = "Token overlap F1 with the gold reply (SQuAD normalisation)."
    pair = staticmethod(word_f1)


class BLEU(_ReferenceMetric):
    name, label = "bleu", "BLEU"
    description = "Sentence BLEU (sacrebleu) against the gold reply, in [0, 1]."
    pair = staticmethod(bleu)


class RougeL(_ReferenceMetric):
    name, label = "rouge_l", "ROUGE-L"
    description = "Longest-common-subsequence F-measure against the gold reply."
    pair = staticmethod(rouge_l)


LEXICAL_METRICS = (WordF1, BLEU, RougeL)
