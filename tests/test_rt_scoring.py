"""Batched, prefix-cached likelihood scoring (core/llm/local.py) against a plain full forward pass,
and the `score_batch` protocol on the scripted LLM."""

from __future__ import annotations

import pytest

from core.llm import Message
from core.llm.fake import ScriptedLLM
from core.llm.local import _common_prefix


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
    requests = [  # no common prefix worth sharing: one padded pass
        ([Message("user", "What colour is the sky on a clear day?")], ["Blue.", "0.7"]),
        ([Message("system", "You score answers."), Message("user", "Rate: 2+2=4. Score:")], ["1.0", "EXPAND_ENTITY [dog]"]),
    ]
    head = "Rate the state from 0.0 to 1.0. Question: where does the user's dog live?\nKnown facts:\n"
    shared = [  # a long common prefix (run once), suffixes of different lengths
        ([Message("user", head + "user | has | Rex\nRex | lives in | Paris\nScore:")], ["0.5", "1.0"]),
        ([Message("user", head + "(none yet)\nScore:")], ["ANSWER", "THINK"]),
    ]
    assert local_llm.score_batch([]) == []
    assert _common_prefix([local_llm._prompt_ids(m) for m, _ in shared]) >= local_llm._MIN_SHARED_PREFIX  # the shared path runs
    for batch in (requests, shared):
        batched = local_llm.score_batch(batch)
        for (messages, candidates), got in zip(batch, batched):
            assert got == pytest.approx(_reference_scores(local_llm, messages, candidates), abs=2e-3)
    messages, candidates = shared[0]
    assert local_llm.score(messages, candidates) == pytest.approx(batched_first := local_llm.score_batch([shared[0]])[0], abs=1e-4)
    assert len(batched_first) == 2
