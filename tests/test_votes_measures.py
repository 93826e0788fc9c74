"""The automatic measures against people's votes: agreement counts by hand, Wilson's interval
against its closed form, and the CS read back from a stored turn's checks."""

from __future__ import annotations

import pytest

from core.votes.measures import agreement, agreements, cs_of, decisive_pairs, wilson
from core.votes.model import make_vote


def _v(turn, methods, winner, measures):
    return make_vote("anon:a", "c", turn, methods, winner, measures=measures, created_at=1.0)


VOTES = [
    _v(0, ["rag", "base"], "rag", {"rag": {"cs": 0.9, "correct": True}, "base": {"cs": 0.2, "correct": False}}),
    _v(1, ["rag", "base"], "base", {"rag": {"cs": 0.8, "correct": True}, "base": {"cs": 0.3, "correct": True}}),
    _v(2, ["rag", "base"], "tie", {"rag": {"cs": 0.1}, "base": {"cs": 0.9}}),  # a tie: no pair
    _v(3, ["rag", "base"], "both_bad", {"rag": {"cs": 0.1}, "base": {"cs": 0.9}}),  # bad: no pair
    _v(4, ["rag", "base"], "base", {"rag": {"cs": 0.5}, "base": {"cs": 0.5}}),  # equal CS: undecided
    _v(5, ["a", "b", "c"], "c", {"a": {"cs": 0.2, "factscore": 0.5}, "b": {"cs": 0.7, "factscore": 0.9},
                                 "c": {"cs": 0.6, "factscore": 1.0}}),  # c vs a, c vs b
    _v(6, ["rag", "base"], "rag", {}),  # no measures: undecided for all
]


def test_agreement_counts_by_hand():
    assert len(decisive_pairs(VOTES)) == 1 + 1 + 1 + 2 + 1
    cs = agreement(VOTES, "cs")
    # agree: turn 0 (0.9 > 0.2), turn 5 c vs a (0.6 > 0.2); disagree: turn 1 (0.3 < 0.8), turn 5 c vs b (0.6 < 0.7)
    assert (cs.agree, cs.pairs, cs.undecided, cs.rate) == (2, 4, 2, 0.5)
    fs = agreement(VOTES, "factscore")
    assert (fs.agree, fs.pairs, fs.undecided) == (2, 2, 4)
    correct = agreement(VOTES, "correct")  # only turn 0 has one correct reply and one not
    assert (correct.agree, correct.pairs, correct.rate) == (1, 1, 1.0)
    assert [a.measure for a in agreements(VOTES)] == ["cs", "factscore", "correct"]
    none = agreement([], "cs")
    assert (none.pairs, none.rate, none.low) == (0, None, None)
    with pytest.raises(ValueError, match="unknown measure"):
        agreement(VOTES, "bleu")


def test_wilson_interval():
    # closed form at p = 1/2, n = 100: centre 0.5, half-width z*sqrt(0.25/100 + z^2/40000)/(1 + z^2/100)
    low, high = wilson(50, 100)
    assert (low + high) / 2 == pytest.approx(0.5)
    assert high - low == pytest.approx(2 * 1.959964 * (0.0025 + 1.959964**2 / 40000) ** 0.5 / (1 + 1.959964**2 / 100), abs=1e-6)
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-3)  # textbook value
    assert wilson(0, 0) == (0.0, 1.0)
    a = agreement(VOTES, "cs")
    assert a.low < a.rate < a.high


def test_cs_is_read_from_stored_checks():
    probs = {"entailment": 0.7, "neutral": 0.2, "contradiction": 0.1}
    checks = {"nli": {"probs": probs, "chunk_index": 0, "n_chunks": 1, "premise_chunk": "x", "model": "m"}}
    assert cs_of(checks) == pytest.approx((0.7 - 0.1 + 1) / 2)
    assert cs_of({}) is None and cs_of(None) is None
