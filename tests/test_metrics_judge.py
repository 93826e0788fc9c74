"""The optional LLM-judge quality score: rating parsing, refusal without a strong model, the
MT-Bench-101 prompt, and None (never a guess) for malformed answers."""

from __future__ import annotations

import pytest

from core.dialogue import Turn
from core.llm.fake import ScriptedLLM
from core.metrics.base import TurnSample
from core.metrics.judge import QualityJudge, judge_prompt, parse_rating


def test_parse_rating():
    assert parse_rating("Good answer. Rating: [[8]]") == 8.0
    assert parse_rating("first [[3]] then revised [[7.5]]") == 7.5
    assert parse_rating("Rating: 9") is None
    assert parse_rating("[[11]]") is None and parse_rating("[[0]]") is None


def test_judge_needs_a_strong_model():
    with pytest.raises(ValueError, match="capable"):
        QualityJudge(ScriptedLLM(), strong=False)


def test_judge_scores_each_turn_and_counts_failures():
    llm = ScriptedLLM(["Consistent. [[9]]", "I think it is fine.", "Contradicts turn 1. Rating: [[2]]"])
    judge = QualityJudge(llm, strong=True, task="Context Memory")
    ctx = (Turn("user", "My cat is called Tom."), Turn("assistant", "Nice name!"), Turn("user", "What is my cat called?"))
    samples = [TurnSample(ctx, "Tom."), TurnSample(ctx, "No idea."), TurnSample(ctx, "Your dog is Rex.")]
    score = judge.score(samples)
    assert score.values == (9.0, None, 2.0)
    assert score.aggregate == pytest.approx(5.5)
    assert judge.failures == 1
    prompt = llm.requests[0][0].content
    assert "Context Memory" in prompt and "user: What is my cat called?\nassistant: Tom." in prompt
    assert "[[rating]]" in prompt and "reference answer" not in prompt


def test_judge_prompt_shows_reference_only_when_given():
    sample = TurnSample((Turn("user", "2+2?"),), "4", reference="4")
    assert "reference answer for the last round" in judge_prompt(sample, "Mathematical Reasoning")
