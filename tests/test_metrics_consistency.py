"""CS and DER arithmetic (D-SMART Eq. 4 and 5) on hand-computed probabilities, and aggregation."""

from __future__ import annotations

import math

import pytest
from nli_helpers import FixedNLI

from core.dialogue import Turn
from core.metrics.base import TurnSample
from core.metrics.consistency import ConsistencyScore, EntailmentRate, TurnNLI
from core.metrics.nli import NLIProbs, decisive
from core.metrics.report import bootstrap_ci, grouped_median_ci, per_task, per_turn, summarise


def _samples(n: int) -> list[TurnSample]:
    return [TurnSample((Turn("user", f"question {i}"),), f"answer {i}") for i in range(n)]


def test_cs_and_der_hand_computed():
    probs = [(0.8, 0.1, 0.1), (0.1, 0.2, 0.7), (0.3, 0.5, 0.2), (0.5, 0.1, 0.4)]
    fake = FixedNLI(probs)
    nli = TurnNLI(fake)
    samples = _samples(4)
    cs = ConsistencyScore(nli).score(samples)
    der = EntailmentRate(nli).score(samples)
    # CS_i = ((P_E - P_C) + 1) / 2
    assert cs.values == pytest.approx((0.85, 0.2, 0.55, 0.55))
    assert cs.aggregate == pytest.approx((0.85 + 0.2 + 0.55 + 0.55) / 4)
    # labels: entailment, contradiction, neutral, entailment -> DER 2/4
    assert der.values == (1.0, 0.0, 0.0, 1.0)
    assert der.aggregate == pytest.approx(0.5)
    assert cs.direction == der.direction == "higher"
    assert len(fake.calls) == 1  # DER reused the judgements CS asked for


def test_nli_sees_history_lines_with_speakers():
    fake = FixedNLI([(0.9, 0.05, 0.05)])
    sample = TurnSample((Turn("user", "I live in Paris."), Turn("assistant", "Nice."), Turn("user", "Where do I live?")), "In Paris.")
    TurnNLI(fake).judgements([sample])
    history, hypothesis = fake.calls[0][0]
    assert history == ["User: I live in Paris.", "Assistant: Nice.", "User: Where do I live?"]
    assert hypothesis == "In Paris."


def test_label_ties_and_decisive_chunk():
    assert NLIProbs(0.4, 0.2, 0.4).label == "contradiction"
    assert NLIProbs(0.2, 0.4, 0.4).label == "contradiction"
    assert NLIProbs(0.4, 0.4, 0.2).label == "neutral"
    chunks = [NLIProbs(0.1, 0.8, 0.1), NLIProbs(0.6, 0.3, 0.1), NLIProbs(0.05, 0.25, 0.7)]
    assert decisive(chunks) == 2  # max(P_E, P_C): 0.1, 0.6, 0.7
    assert decisive([NLIProbs(0.5, 0.0, 0.5), NLIProbs(0.5, 0.5, 0.0)]) == 0  # tie -> the contradiction


def _item(method, did, task, turn, cs, der, scored=True, f1=None):
    return {"method": method, "dialogue_id": did, "task": task, "turn": turn, "scored": scored, "cs": cs, "der": der, "f1": f1}


def test_summaries_average_dialogues_then_overall_and_skip_unscored():
    items = [
        _item("m", 1, "GR", 1, 1.0, 1.0), _item("m", 1, "GR", 2, 0.0, 0.0),  # dialogue 1: cs 0.5, der 0.5
        _item("m", 2, "CM", 1, 0.0, 0.0, scored=False), _item("m", 2, "CM", 2, 0.9, 1.0),  # dialogue 2: cs 0.9, der 1
        _item("g", 1, "GR", 1, 0.2, 0.0, f1=None),
    ]
    s = summarise(items)
    assert s["m"]["cs"] == pytest.approx(0.7) and s["m"]["der"] == pytest.approx(0.75)
    assert s["m"]["n_dialogues"] == 2 and s["m"]["n_turns"] == 3
    assert "f1" not in s["m"]  # no turn had a value
    tasks = per_task(items)
    assert tasks["m"]["GR"]["cs"] == pytest.approx(0.5) and tasks["m"]["CM"]["der"] == pytest.approx(1.0)
    turns = per_turn(items)
    assert turns["m"][1] == {"n": 1, "cs": 1.0, "cs_sem": 0.0, "der": 1.0, "der_sem": 0.0}
    assert turns["m"][2]["cs"] == pytest.approx(0.45) and turns["m"][2]["n"] == 2


def test_bootstrap_ci_brackets_the_mean():
    values = [0.1, 0.5, 0.9, 0.3, 0.7]
    lo, hi = bootstrap_ci(values, resamples=2000)
    assert lo < 0.5 < hi and 0.1 <= lo and hi <= 0.9
    assert all(math.isnan(v) for v in bootstrap_ci([0.4]))  # no interval from one dialogue


def test_grouped_median_ci_resamples_whole_groups():
    """Two dialogues, one all 1s and one all 3s: a resample is either dialogue twice (median 1 or 3,
    a quarter of the time each) or both (median 2), so the 95% interval is [1, 3]."""
    assert grouped_median_ci([1, 1, 1, 3, 3, 3], ["a", "a", "a", "b", "b", "b"]) == (1.0, 3.0)
    assert grouped_median_ci([2.0] * 6, [0, 0, 1, 1, 2, 2]) == (2.0, 2.0)
    assert all(math.isnan(v) for v in grouped_median_ci([1.0, 2.0], ["a", "a"]))  # one dialogue: no interval


def test_grouped_median_ci_is_wider_when_the_groups_differ():
    """The same twelve values: each dialogue a low and a high one, or each dialogue its own level."""
    mixed = grouped_median_ci([1, 6, 2, 5, 3, 4, 1, 6, 2, 5, 3, 4], [k // 2 for k in range(12)])
    apart = grouped_median_ci([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6], [k // 2 for k in range(12)])
    assert apart[1] - apart[0] > mixed[1] - mixed[0]
