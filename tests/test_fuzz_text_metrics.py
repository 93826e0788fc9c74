"""Property-based fuzzing of the sentence splitter and the metrics: any text in, no exception,
and the invariants each function promises (checked against brute-force references where one
exists). Example counts come from the profile in tests/conftest.py."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.metrics.base import TurnSample, mean_of
from core.metrics.lexical import LEXICAL_METRICS, bleu, lcs_length, normalise_tokens, rouge_l, token_f1
from core.metrics.nli import LABELS, NLIProbs, decisive, label_order
from core.metrics.report import bootstrap_ci, per_task, per_turn, summarise
from core.text import approx_tokens, split_sentences, words
from tests.fuzz_helpers import dialogue_text


# -- the sentence splitter ------------------------------------------------------------------------
@given(dialogue_text())
def test_sentences_are_stripped_non_empty_pieces_of_the_text_in_order(text):
    sentences = split_sentences(text)
    position = 0
    for sentence in sentences:
        assert sentence and sentence == sentence.strip()
        found = text.find(sentence, position)
        assert found >= 0, f"{sentence!r} is not in the text after position {position}"
        position = found + len(sentence)
    # Nothing but white space is dropped: every word of the text is in some sentence.
    assert words(" ".join(sentences)) == words(text)


@given(dialogue_text())
def test_words_and_token_estimate(text):
    found = words(text)
    assert all(w and w == w.lower() and w in text.lower() for w in found)
    assert approx_tokens(text) == round(len(found) / 0.75) >= 0


# -- lexical metrics -------------------------------------------------------------------------------
@given(dialogue_text(), dialogue_text())
def test_lexical_scores_are_bounded_and_symmetric_where_defined(a, b):
    for score in (token_f1(a, b), rouge_l(a, b), bleu(a, b)):
        assert 0.0 <= score <= 1.0 + 1e-9
    assert token_f1(a, b) == pytest.approx(token_f1(b, a))
    assert rouge_l(a, b) == pytest.approx(rouge_l(b, a))


@given(dialogue_text())
def test_a_reply_identical_to_the_reference_scores_one(text):
    if normalise_tokens(text):
        assert token_f1(text, text) == 1.0
    if any(c.isalnum() or c == "_" for c in text):
        assert rouge_l(text, text) == pytest.approx(1.0)


def _lcs_brute(a, b) -> int:
    """Longest common subsequence by trying every subsequence of the shorter side (tiny inputs)."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    for size in range(len(short), 0, -1):
        for picked in itertools.combinations(short, size):
            it = iter(long_)
            if all(x in it for x in picked):
                return size
    return 0


@given(st.lists(st.sampled_from("abc"), max_size=7), st.lists(st.sampled_from("abc"), max_size=7))
def test_lcs_matches_brute_force(a, b):
    assert lcs_length(a, b) == _lcs_brute(a, b)


@given(st.lists(st.tuples(dialogue_text(), st.one_of(st.just(""), dialogue_text())), max_size=6))
def test_metric_classes_give_one_value_per_turn_none_without_reference(pairs):
    samples = [TurnSample((), response, reference) for response, reference in pairs]
    for metric_class in LEXICAL_METRICS:
        score = metric_class().score(samples)
        assert len(score.values) == len(samples)
        assert all((v is None) == (not s.reference) for v, s in zip(score.values, samples))
        assert score.aggregate == mean_of(score.values)


# -- NLI probabilities and labels -------------------------------------------------------------------
probabilities = st.lists(st.floats(0, 1), min_size=3, max_size=3).filter(lambda p: sum(p) > 0).map(
    lambda p: NLIProbs(*(x / sum(p) for x in p)))


@given(probabilities)
def test_consistency_score_and_label(probs):
    assert -1e-9 <= probs.consistency <= 1 + 1e-9
    values = {"entailment": probs.entailment, "neutral": probs.neutral, "contradiction": probs.contradiction}
    assert values[probs.label] == max(values.values())


@given(st.lists(probabilities, min_size=1, max_size=6))
def test_decisive_picks_the_most_decisive_chunk(judgements):
    best = judgements[decisive(judgements)]
    assert best.decisiveness == max(j.decisiveness for j in judgements)


@given(st.dictionaries(st.one_of(st.integers(-2, 4), st.text(max_size=3)), st.text(max_size=14), max_size=4))
def test_label_order_reads_a_config_or_refuses_it(id2label):
    try:
        order = label_order(id2label)
    except ValueError:
        return
    assert sorted(order) == sorted(LABELS)


@given(st.permutations(["ENTAILMENT", "Neutral", "contradiction"]), st.booleans())
def test_label_order_follows_the_config(names, string_keys):
    id2label = {(str(i) if string_keys else i): name for i, name in enumerate(names)}
    assert label_order(id2label) == tuple(n.lower() for n in names)


# -- aggregates with bootstrap intervals -------------------------------------------------------------
scores = st.floats(0, 1)


@given(st.lists(scores, max_size=30), st.integers(0, 2**32 - 1))
def test_bootstrap_interval_lies_within_the_data(values, seed):
    lo, hi = bootstrap_ci(values, resamples=200, seed=seed)
    if len(values) < 2:
        assert math.isnan(lo) and math.isnan(hi)
    else:
        assert min(values) - 1e-9 <= lo <= hi <= max(values) + 1e-9


items = st.lists(st.fixed_dictionaries({
    "method": st.sampled_from(["base", "dsm"]), "dialogue_id": st.integers(0, 3), "task": st.sampled_from(["CM", "MR"]),
    "turn": st.integers(1, 3), "scored": st.booleans(), "cs": st.one_of(st.none(), scores), "der": st.one_of(st.none(), scores),
}), max_size=25)


@given(items)
def test_summaries_average_within_the_range_of_the_turns(rows):
    summary = summarise(rows, metrics=("cs", "der"))
    for method, row in summary.items():
        mine = [r for r in rows if r["method"] == method]
        assert row["n_dialogues"] == len({r["dialogue_id"] for r in mine})
        assert row["n_turns"] == sum(r["scored"] for r in mine)
        for metric in ("cs", "der"):
            present = [r[metric] for r in mine if r["scored"] and r[metric] is not None]
            assert (metric in row) == bool(present)
            if present:
                assert min(present) - 1e-9 <= row[metric] <= max(present) + 1e-9
    assume(rows)
    per_task(rows, metrics=("cs", "der"))
    for method, turns in per_turn(rows).items():
        assert all(entry["n"] >= 1 for entry in turns.values())


# -- the LLM judge's rating and the NLI metrics over any replies ------------------------------------
@given(st.text(max_size=80), st.integers(-3, 14))
def test_judge_rating_is_the_last_in_range_or_none(text, rating):
    from core.metrics.judge import parse_rating

    value = parse_rating(text)
    assert value is None or 1.0 <= value <= 10.0
    assert parse_rating(f"{text} [[{rating}]]") == (float(rating) if 1 <= rating <= 10 else None)


@given(st.lists(dialogue_text(), min_size=1, max_size=4), st.lists(dialogue_text(), max_size=4))
def test_quality_judge_gives_one_rating_or_none_per_turn(judge_replies, responses):
    from core.llm.fake import ScriptedLLM
    from core.metrics.judge import QualityJudge

    samples = [TurnSample((), r) for r in responses]
    judge = QualityJudge(ScriptedLLM(judge_replies), strong=True)
    values = judge.turn_values(samples)
    assert len(values) == len(samples) and judge.failures == sum(v is None for v in values)


@given(st.lists(st.tuples(dialogue_text(), dialogue_text()), max_size=5), probabilities)
def test_cs_and_der_judge_each_distinct_turn_once_within_bounds(pairs, probs):
    from core.dialogue import USER, Turn
    from core.metrics.consistency import ConsistencyScore, EntailmentRate, TurnNLI
    from core.metrics.nli import NLIJudgement

    class CountingJudge:
        calls = 0

        def judge_many(self, items):
            CountingJudge.calls += len(items)
            return [NLIJudgement(probs, 0, 1, "") for _ in items]

    samples = [TurnSample((Turn(USER, context),), response) for context, response in pairs]
    nli = TurnNLI(CountingJudge())
    cs, der = ConsistencyScore(nli).score(samples), EntailmentRate(nli).score(samples)
    assert CountingJudge.calls == len({(s.context, s.response) for s in samples})  # memoised across metrics
    assert all(0 <= v <= 1 for v in cs.values + der.values) and len(cs.values) == len(der.values) == len(samples)
