"""Lexical overlap with the gold reply: Word F1, BLEU (sacrebleu), ROUGE-L. All in [0, 1],
higher is better. They reward wording, not logical correctness (D-SMART reports them "for
completeness"); a turn without a reference gets None."""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from core.metrics.base import Metric, TurnSample

_PUNCT = str.maketrans("", "", string.punctuation)


@dataclass(frozen=True)
class Normalisation:
    """How token F1 reads a text: lower case, punctuation removed, `dropped` words removed, split
    on whitespace; then Porter stems when `stem`. `both_empty` is the score of two texts without
    a token (one empty side always scores 0)."""
    name: str
    dropped: re.Pattern
    stem: bool
    both_empty: float


SQUAD = Normalisation("squad", re.compile(r"\b(a|an|the)\b"), stem=False, both_empty=1.0)
"""SQuAD's: articles dropped, words compared as written (the response benchmarks' Word F1)."""
LOCOMO = Normalisation("locomo", re.compile(r"\b(a|an|the|and)\b"), stem=True, both_empty=0.0)
"""LoCoMo's `task_eval/evaluation.py`: "and" dropped too, Porter stems compared (QA answers)."""


def normalise_tokens(text: str, normalisation: Normalisation = SQUAD) -> list[str]:
    """The normalised words of `text` (before stemming)."""
    return normalisation.dropped.sub(" ", str(text).lower().translate(_PUNCT)).split()


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer  # the stemmer LoCoMo's scorer uses

    return PorterStemmer()


def _tokens(text: str, normalisation: Normalisation) -> list[str]:
    words = normalise_tokens(text, normalisation)
    return [_stemmer().stem(w) for w in words] if normalisation.stem else words


def token_f1(prediction: str, reference: str, normalisation: Normalisation = SQUAD) -> float:
    """Harmonic mean of token precision and recall over bags of normalised tokens."""
    pred, ref = _tokens(prediction, normalisation), _tokens(reference, normalisation)
    if not pred or not ref:
        return normalisation.both_empty if not pred and not ref else 0.0
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
    pair = staticmethod(token_f1)


class BLEU(_ReferenceMetric):
    name, label = "bleu", "BLEU"
    description = "Sentence BLEU (sacrebleu) against the gold reply, in [0, 1]."
    pair = staticmethod(bleu)


class RougeL(_ReferenceMetric):
    name, label = "rouge_l", "ROUGE-L"
    description = "Longest-common-subsequence F-measure against the gold reply."
    pair = staticmethod(rouge_l)


LEXICAL_METRICS = (WordF1, BLEU, RougeL)
