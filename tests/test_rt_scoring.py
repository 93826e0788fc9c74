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


@pytest.fixture(scope="module")
def fp32_llm():
    """A float32 instance: scores must match the plain forward pass to rounding error (bfloat16
    sums differ by up to ~0.2 nats between equally valid evaluation orders)."""
    from core.llm.local import LocalLLM

    return LocalLLM(dtype="float32")


HEAD = "Rate the state from 0.0 to 1.0. Question: where does the user's dog live?\nSteps so far:\n"


@pytest.mark.slow
def test_prefix_cached_batch_scoring_equals_full_forward(fp32_llm):
    llm = fp32_llm
    llm.clear_prompt_cache()
    requests = [  # no common prefix worth sharing: one padded pass
        ([Message("user", "What colour is the sky on a clear day?")], ["Blue.", "0.7"]),
        ([Message("system", "You score answers."), Message("user", "Rate: 2+2=4. Score:")], ["1.0", "EXPAND_ENTITY [dog]"]),
    ]
    shared = [  # a long common prefix (run once), suffixes of different lengths
        ([Message("user", HEAD + "1. EXPAND_ENTITY [Rex] -> 2 new fact(s)\n   user | has | Rex\nScore:")], ["0.5", "1.0"]),
        ([Message("user", HEAD + "1. THINK\nScore:")], ["ANSWER", "THINK"]),
    ]
    grown = [  # prompts extending the cached ones (children of those states) and a stranger
        ([Message("user", HEAD + "1. EXPAND_ENTITY [Rex] -> 2 new fact(s)\n   user | has | Rex\n2. THINK: Rex is a dog\nScore:")], ["0.5", "1.0"]),
        ([Message("user", HEAD + "1. THINK: look for the dog\nNext action:")], ["ANSWER", "EXPAND_ENTITY [Rex]"]),
        ([Message("user", "Unrelated prompt")], ["yes"]),
    ]
    assert llm.score_batch([]) == []
    assert _common_prefix([llm._prompt_ids(m) for m, _ in shared]) >= llm._MIN_SHARED_PREFIX  # the shared path runs
    for batch in (requests, shared, grown):
        hits = llm.prompt_cache.hits
        batched = llm.score_batch(batch)
        for (messages, candidates), got in zip(batch, batched):
            assert got == pytest.approx(_reference_scores(llm, messages, candidates), abs=2e-3)
        if batch is grown:  # the children reused their parents' cached tokens
            assert llm.prompt_cache.hits - hits >= 2 * len(llm._prompt_ids([Message("user", HEAD)])) - 8
    messages, candidates = shared[0]
    assert llm.score(messages, candidates) == pytest.approx(batched_first := llm.score_batch([shared[0]])[0], abs=1e-4)
    assert len(batched_first) == 2
    llm.clear_prompt_cache()
    assert len(llm.prompt_cache) == 0


@pytest.mark.slow
def test_generation_after_a_cached_prompt_equals_a_cold_one(fp32_llm):
    llm = fp32_llm
    prompt = [Message("user", HEAD + "1. THINK\nThought:")]
    llm.clear_prompt_cache()
    cold = llm.chat(prompt, temperature=0.0, max_tokens=16).text
    scored = [([Message("user", HEAD + "1. THINK\nScore:")], ["0.5", "1.0"])]
    before = llm.score_batch(scored)
    hits = llm.prompt_cache.hits
    warm = llm.chat(prompt, temperature=0.0, max_tokens=16).text
    assert llm.prompt_cache.hits > hits
    assert warm == cold and warm
    assert llm.score_batch(scored)[0] == pytest.approx(before[0], abs=1e-4)  # generating left the cached state as it was


@pytest.mark.slow
def test_bfloat16_scores_agree_with_float32(local_llm, fp32_llm):
    """The default instance (bfloat16 where the CPU has it) ranks like float32, within its rounding."""
    batch = [([Message("user", HEAD + "1. EXPAND_ENTITY [Rex] -> user | lives in | Paris\nScore:")], [f"{k / 10:.1f}" for k in range(11)]),
             ([Message("user", HEAD + "Next action:")], ["ANSWER", "THINK", "EXPAND_ENTITY [Rex]"])]
    for low, high in zip(local_llm.score_batch(batch), fp32_llm.score_batch(batch)):
        assert low == pytest.approx(high, rel=0.03, abs=0.3)


def test_prompt_cache_longest_prefix_lru_and_redundant_entries():
    import numpy as np

    from core.llm.prompt_cache import PromptCache

    def layers(ids):  # one fake layer whose "keys" are the token ids, so slices can be checked
        t = np.asarray(ids, dtype=float).reshape(1, 1, -1, 1)
        return ((t, t),)

    cache = PromptCache(max_tokens=10)
    assert cache.lookup([1, 2, 3], 3) == (0, None)
    cache.store([1, 2, 3], layers([1, 2, 3]))
    cache.store([1, 2, 3, 4, 5], layers([1, 2, 3, 4, 5]))  # extends [1, 2, 3]: the shorter entry goes
    assert len(cache) == 1 and cache.tokens == 5
    n, found = cache.lookup([1, 2, 3, 9], limit=3)
    assert n == 3 and found[0][0].ravel().tolist() == [1, 2, 3]
    assert cache.lookup([1, 2, 3, 4, 5, 6], limit=2)[0] == 2  # never past the limit
    cache.store([7, 8, 9], layers([7, 8, 9]))
    cache.lookup([1, 2], 2)  # touch: [7, 8, 9] is now the least recently used
    cache.store([5, 5, 5], layers([5, 5, 5]))  # 11 tokens > 10: the LRU entry goes
    assert cache.lookup([7, 8, 9], 3) == (0, None)
    assert cache.lookup([5, 5, 5, 1], 4)[0] == 3 and cache.lookup([1, 2, 3, 4], 4)[0] == 4
    cache.clear()
    assert len(cache) == 0 and cache.lookup([1], 1) == (0, None)


def test_dtype_resolution():
    from core.llm.local import resolve_dtype

    assert resolve_dtype("float32", "cpu") == "float32"
    assert resolve_dtype("bfloat16", "cpu") == "bfloat16"
    assert resolve_dtype("auto", "cpu") in ("float32", "bfloat16")
