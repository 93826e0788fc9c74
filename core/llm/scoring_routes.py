"""How an OpenAI-compatible server can score fixed candidates, and what each route means.

Servers differ: vLLM returns prompt log-probabilities on /v1/completions with `echo` and
`logprobs` (one request scores a candidate); llama.cpp's server has no `echo` but its native
/completion returns the top-`n_probs` next-token log-probabilities, which score candidates through
their token trie (core.llm.trie_scoring, the same logic as the embedded backend); OpenAI's chat
models, Ollama and LM Studio offer neither. The backend detects the route once (`scoring_route`).
"""

from __future__ import annotations

from typing import Callable, Sequence

from core.llm.base import LLMError, LLMOutputError, Message
from core.llm.trie_scoring import candidate_tokens, score_by_trie

ECHO = "echo"
LLAMACPP = "llama.cpp"
NONE = "none"
IN_PROCESS = "in-process"

ROUTE_NOTES = {
    ECHO: "scoring: prompt log-probabilities (/v1/completions with echo + logprobs, as vLLM serves them); "
          "methods score enumerated options by likelihood, one request per candidate",
    LLAMACPP: "scoring: llama.cpp's native /completion with n_probs (top-n next-token log-probabilities over the "
              "candidates' token trie); methods score enumerated options by likelihood, a few one-token requests each",
    NONE: "no scoring: the server returns no log-probabilities, so the reasoning tree falls back to fixed priors "
          "and values (0.5), D-SMART skips its LLM conflict check, and MCTS picks inferences for diversity alone",
    IN_PROCESS: "scoring: in-process log-probabilities from the model itself; methods score enumerated options by likelihood",
}


def scoring_route(llm) -> str:
    """The route `llm` scores by: an endpoint's detected route (a request the first time), else
    in-process or none."""
    route = getattr(llm, "scoring_route", None)
    if isinstance(route, str):
        return route
    return IN_PROCESS if llm.supports_scoring else NONE


def scoring_note(llm) -> str:
    """One line: which route is active and what it means for the methods."""
    return ROUTE_NOTES[scoring_route(llm)]


class RouteMissing(Exception):
    """The server answered, but does not offer this route (404, 400, another JSON shape)."""


class LlamaCppHttp:
    """llama.cpp's native endpoints at the server's root (the base URL without /v1): the chat
    template, the tokenizer and one-token completions with n_probs, for trie scoring. `call(path,
    body)` sends one request (a GET when body is None) and returns the JSON object; it raises
    RouteMissing when the server has no such endpoint, LLMError when it fails."""

    def __init__(self, call: Callable[[str, dict | None], dict], where: str) -> None:
        self._call = call
        self.where = where
        self._eos: int | None = None

    def probe(self) -> bool:
        """Whether the server speaks llama.cpp's native scoring protocol (LLMError if it fails)."""
        try:
            ids = self.tokenize("Hello")
            self.prompt_ids([Message("user", "Hi")])
            first = self.first_token(ids, n_probs=2)
            return bool(first["top_logprobs"]) and all(isinstance(t["id"], int) for t in first["top_logprobs"])
        except (RouteMissing, KeyError, IndexError, TypeError):
            return False

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        tokens = self._call("/tokenize", {"content": text, "add_special": False, "parse_special": special})["tokens"]
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise RouteMissing("/tokenize: no token ids")
        return tokens

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The chat-templated prompt (ending with the assistant header), as the chat endpoint builds it."""
        rendered = self._call("/apply-template", {"messages": [{"role": m.role, "content": m.content} for m in messages]})
        return self.tokenize(rendered["prompt"], special=True)

    def first_token(self, prompt_ids: list[int], **params) -> dict | None:
        out = self._call("/completion", {"prompt": prompt_ids, "n_predict": 1, "temperature": 0.0, "cache_prompt": True, **params})
        if "completion_probabilities" not in out and "content" not in out:
            raise KeyError("completion_probabilities")
        probs = out.get("completion_probabilities")  # absent: the token is only part of a character
        return probs[0] if probs else None

    def end_token(self) -> int:
        """The end-of-turn token (an empty candidate = the reply ends here), from /props."""
        if self._eos is None:
            try:
                eos = self._call("/props", None).get("eos_token") or "<|im_end|>"
            except RouteMissing:
                eos = "<|im_end|>"
            self._eos = self.tokenize(str(eos), special=True)[-1]
        return self._eos

    def score(self, messages: list[Message], candidates: Sequence[str], n_probs: int = 40) -> list[float]:
        try:
            conts = candidate_tokens(candidates, self.tokenize, self.end_token)
            return score_by_trie(self.prompt_ids(messages), conts, self.first_token, n_probs, self.end_token())
        except (RouteMissing, KeyError, IndexError, TypeError, LLMOutputError) as err:
            raise LLMError(f"{self.where} sent a malformed scoring response ({type(err).__name__}: {str(err)[:120]})") from err
