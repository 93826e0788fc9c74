"""Batched, prefix-cached likelihood scoring (core/llm/local.py) against a plain full forward pass,
and the `score_batch` protocol on the scripted LLM."""

from __future__ import annotations

import pytest

from core.llm import Message
from core.llm.fake import ScriptedLLM


def test_score_batch_counts_each_request_and_matches_score():
    llm = ScriptedLLM(scorer=lambda m, c: float(len(c)))
    out = llm.score_batch([("q one", ["a", "bbb"]), ("q two", []), ([Message("user", "x")], ["cc"])])
    assert out == [[1.0, 3.0], [], [2.0]]
    assert llm.calls == 3
    assert llm.score_batch([]) == []


def _reference_scores(llm, messages, candidates):
    """The unshared computation: prompt + candidate as one sequence each, one forward per row."""
    torch = llm._torch
    prompt = llm._prompt_ids(messages)
    out = []
    for c in candidates:
        cont = llm._candidate_ids(c)
        ids = torch.tensor([prompt + cont])
        with torch.inference_mode():
            logp = torch.log_softmax(llm.model(input_ids=ids).logits[0, :-1].float(), dim=-1)
        out.append(float(sum(logp[len(prompt) + j - 1, t] for j, t in enumerate(cont))))
    return out


@pytest.mark.slow
def test_prefix_cached_batch_scoring_equals_full_forward(local_llm):
    requests = [
        ([Message("user", "What colour is the sky on a clear day?")], ["Blue.", "The sky is green", "0.7"]),
        ([Message("system", "You score answers."), Message("user", "Rate: 2+2=4. Score:")], ["1.0", "0.0", "ANSWER", "EXPAND_ENTITY [dog]"]),
        ([Message("user", "Hi")], ["Hello! How can I help you today?"]),
    ]
    batched = local_llm.score_batch(requests)
    for (messages, candidates), got in zip(requests, batched):
        want = _reference_scores(local_llm, messages, candidates)
        assert got == pytest.approx(want, abs=2e-3)
        assert local_llm.score(messages, candidates) == pytest.approx(want, abs=2e-3)
