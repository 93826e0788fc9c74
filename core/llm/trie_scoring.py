"""Scoring fixed candidates from next-token top-n log-probabilities (llama.cpp's `n_probs`).

llama.cpp returns no prompt log-probabilities (no `echo`), but a one-token completion reports the
raw top-n log-probabilities at the end of its prompt. So we walk the candidates' token trie: one
request per distinct prefix, depth-first so that each request extends the last one and reuses the
slot's KV cache; a candidate token outside the top-n is read exactly by forcing it with a logit
bias (the reported log-probability is still the unbiased one).

One llama.cpp behaviour needs care: a token that is only part of a multi-byte character (the
first byte of an emoji, of an accented letter) is held back as incomplete text, and a one-token
completion that ends on it reports no token at all. The top-n list of a position is the raw
distribution whatever is sampled, so such a position is read by sampling a whole token instead
(the end-of-turn token); a forced partial token outside the top-n is read from a wider list.

The embedded backend (core.llm.llamacpp) and the OpenAI-compatible backend talking to a llama.cpp
server over HTTP (core.llm.openai_backend) both score through `score_by_trie`; they differ only in
how a one-token completion is sent.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from core.llm.base import LLMOutputError


WIDE_PROBS = 1000  # top-n asked for when a forced token is part of a character (rare: a fallback)


class FirstToken(Protocol):
    """Sends a one-token greedy completion of `prompt_ids` with extra llama.cpp parameters
    (n_probs, logit_bias) and returns the first generated token's record as llama.cpp reports it:
    {"id": int, "logprob": float, "top_logprobs": [{"id": int, "logprob": float}, ...]}, or None
    when llama.cpp reports no token (the token is only part of a multi-byte character)."""

    def __call__(self, prompt_ids: list[int], **params) -> dict | None: ...


def score_by_trie(prompt: list[int], conts: list[list[int]], first_token: FirstToken, n_probs: int,
                  whole_token: int) -> list[float]:
    """Total log-probability of each token continuation `conts[i]` after `prompt`. `whole_token`
    is a token that is always a whole character (the end-of-turn token)."""
    dists: dict[tuple[int, ...], dict[int, float]] = {}
    for prefix in trie_prefixes(conts):  # depth-first: each request extends the last one
        dists[prefix] = top_distribution(first_token, prompt + list(prefix), n_probs, whole_token)
    scores = []
    for cont in conts:
        total = 0.0
        for j, token in enumerate(cont):
            prefix = tuple(cont[:j])
            lp = dists[prefix].get(token)
            if lp is None:
                lp = forced_logprob(first_token, prompt + list(prefix), token, whole_token)
                dists[prefix][token] = lp
            total += lp
        scores.append(total)
    return scores


def top_distribution(first_token: FirstToken, prompt_ids: list[int], n_probs: int, whole_token: int) -> dict[int, float]:
    """The n most likely next tokens and their raw log-probabilities."""
    record = first_token(prompt_ids, n_probs=n_probs)
    if record is None:  # the greedy token is part of a character: sample a whole one, same list
        record = first_token(prompt_ids, n_probs=n_probs, logit_bias=[[whole_token, 100.0]])
    if record is None:
        raise LLMOutputError("llama.cpp reported no token probabilities for a forced whole token")
    return {t["id"]: t["logprob"] for t in record["top_logprobs"]}


def forced_logprob(first_token: FirstToken, prompt_ids: list[int], token: int, whole_token: int) -> float:
    """The raw log-probability of `token` next: sampling is forced onto it by a logit bias,
    while the reported log-probability comes from the unbiased distribution. A token that is part
    of a character is read from the WIDE_PROBS most likely instead; below all of them, the last
    one's log-probability bounds it from above (and stands for it)."""
    first = first_token(prompt_ids, n_probs=1, logit_bias=[[token, 100.0]])
    if first is None:
        wide = top_distribution(first_token, prompt_ids, WIDE_PROBS, whole_token)
        return wide.get(token, min(wide.values()))
    if first["id"] != token:
        raise LLMOutputError(f"llama.cpp did not take the forced token {token}")
    return first["logprob"]


def candidate_tokens(candidates: Sequence[str], tokenize: Callable[[str], list[int]], end_token: Callable[[], int]) -> list[list[int]]:
    """The candidates as token ids; an empty candidate is the end-of-turn token."""
    return [tokenize(c) or [end_token()] for c in candidates]


def trie_prefixes(conts: list[list[int]]) -> list[tuple[int, ...]]:
    """Every distinct proper prefix of the candidates (the empty one first), in depth-first order,
    so consecutive scoring requests share the longest possible cached prefix."""
    seen: set[tuple[int, ...]] = set()
    order: list[tuple[int, ...]] = []
    for cont in sorted(conts):
        for j in range(len(cont)):
            prefix = tuple(cont[:j])
            if prefix not in seen:
                seen.add(prefix)
                order.append(prefix)
    return order
