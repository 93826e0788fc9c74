"""Word F1, BLEU and ROUGE-L on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from core.dialogue import Turn
from core.metrics.base import TurnSample
from core.metrics.lexical import (LOCOMO, SQUAD, BLEU, RougeL, WordF1, bleu, lcs_length, normalise_tokens, rouge_l,
                                  token_f1)


def test_normalise_drops_case_punctuation_articles():
    assert normalise_tokens("The Cat, a HAT!") == ["cat", "hat"]


def test_word_f1_hand_computed():
    # pred {cat, sat, mat, today} vs ref {cat, sat, on, mat}: overlap 3, P = 3/4, R = 3/4
    assert token_f1("The cat sat the mat today", "a cat sat on the mat") == pytest.approx(0.75)
    # repeated words count once per occurrence: pred [x, x], ref [x]: overlap 1, P 1/2, R 1
    assert token_f1("x x", "x") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("dog", "cat") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "cat") == 0.0


def test_one_token_f1_two_normalisations():
    """SQuAD's (response Word F1) and LoCoMo's (QA answers) differ in three ways, each seen here."""
    assert token_f1("cats and dogs", "cat dog", SQUAD) == 0.0  # words as written, "and" counts
    assert token_f1("cats and dogs", "cat dog", LOCOMO) == 1.0  # "and" dropped, stems compared
    assert normalise_tokens("Salt and pepper", LOCOMO) == ["salt", "pepper"]
    assert normalise_tokens("Salt and pepper", SQUAD) == ["salt", "and", "pepper"]
    assert token_f1("The.", "a", SQUAD) == 1.0 and token_f1("The.", "a", LOCOMO) == 0.0  # two empty sides
    assert token_f1(2022, "in 2022", LOCOMO) == pytest.approx(2 / 3)  # LoCoMo golds may be numbers


def test_bleu_identical_and_brevity_penalty():
    assert bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    # 2-word hypothesis of a 6-word reference: all 1- and 2-gram precisions are 1 (higher orders
    # skipped at sentence level), so BLEU = brevity penalty = exp(1 - 6/2)
    assert bleu("the cat", "the cat sat on the mat") == pytest.approx(math.exp(-2))
    assert bleu("zebra", "the cat sat") == pytest.approx(0.0, abs=1e-9)


def test_lcs_and_rouge_l_hand_computed():
    assert lcs_length(list("abcd"), list("acde")) == 3
    # LCS(a b c d, a c d e) = 3; P = 3/4, R = 3/4
    assert rouge_l("a b c d", "a c d e") == pytest.approx(0.75)
    # LCS("police killed the gunman", "the gunman killed police") = 2 ("police killed" or "the gunman")
    assert rouge_l("police killed the gunman", "the gunman killed police") == pytest.approx(0.5)
    assert rouge_l("", "x") == 0.0


def test_metric_contract_values_and_aggregate():
    ctx = (Turn("user", "q"),)
    samples = [TurnSample(ctx, "a b c d", "a c d e"), TurnSample(ctx, "x", "x"), TurnSample(ctx, "y", "")]
    score = RougeL().score(samples)
    assert score.name == "rouge_l" and score.direction == "higher"
    assert score.values == (pytest.approx(0.75), pytest.approx(1.0), None)  # no reference: not applicable
    assert score.aggregate == pytest.approx(0.875)
    assert WordF1().score(samples[2:]).aggregate is None
    assert BLEU().score(samples[1:2]).values[0] == pytest.approx(1.0)
