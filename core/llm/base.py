"""The LLM protocol: chat completion, likelihood scoring of fixed candidates, validated JSON.

Every backend subclasses `LLM` and implements `_complete` (and `_score` where it can). The public
methods add what all backends share: batching fall-back, JSON validation, call counting, and the
report of each call's tokens to the active cost meters (`core.llm.cost`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Iterator, Sequence

from core.llm import cancel as stopping, cost


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token: its bytes (a token can hold part of a character) and its log-probability
    under the model's own distribution (not the sampler's)."""

    piece: bytes
    logprob: float


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: int = 0  # messages dropped or cut to fit the context window (0 = the whole prompt)
    finish_reason: str = ""  # "stop" | "length" | "" when the backend does not say
    # every generated token, in order, when asked for and the backend reports them (llama.cpp
    # does); `text` is these pieces cut at a stop string and stripped. None: not reported.
    token_logprobs: tuple[TokenLogprob, ...] | None = None


class LLMError(RuntimeError):
    """The backend failed: endpoint unreachable, timed out, refused, or the model failed to load."""


class LLMOutputError(ValueError):
    """The model answered, but not in the shape asked for (malformed JSON, schema violation)."""


class ScoringUnsupported(LLMError):
    """This backend cannot return log-likelihoods of given continuations."""


def as_messages(messages: Sequence[Message] | Sequence[dict] | str) -> list[Message]:
    if isinstance(messages, str):
        return [Message("user", messages)]
    return [m if isinstance(m, Message) else Message(m["role"], m["content"]) for m in messages]


def cut_at_stop(text: str, stop: Sequence[str] | None) -> str:
    if not stop:
        return text
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    return text[:cut]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def extract_json(text: str):
    """The first JSON object or array in `text` (fenced or bare); LLMOutputError if none parses."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start, ch in enumerate(candidate):
            if ch in "{[":
                try:
                    value, _ = decoder.raw_decode(candidate[start:])
                    return value
                except json.JSONDecodeError:
                    continue
    raise LLMOutputError(f"no JSON found in model output: {text[:200]!r}")


class LLM(ABC):
    """One chat model. Thread-safe counters; subclasses hold the model or the client."""

    name: str = "llm"
    supports_scoring: bool = False
    # reports the generated tokens' log-probabilities when asked (`chat_batch(..., logprobs=True)`);
    # its `_complete` then takes `logprobs=True`
    reports_logprobs: bool = False
    # a batch runs as one padded forward pass (one slot of the fair queue, core.llm.queued), not as
    # concurrent requests
    one_pass_batches: bool = False

    def __init__(self) -> None:
        self._calls = 0
        self._lock = threading.Lock()

    # -- what backends implement -------------------------------------------------------------
    @abstractmethod
    def _complete(
        self, batch: list[list[Message]], temperature: float, max_tokens: int, stop: Sequence[str] | None
    ) -> list[Completion]:
        """Complete each conversation of the batch."""

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        raise ScoringUnsupported(f"{self.name} cannot score candidate continuations")

    def _score_batch(self, requests: list[tuple[list[Message], list[str]]]) -> list[list[float]]:
        """Several scoring requests; default one after another. The local backend overrides it
        with one padded forward pass."""
        return [self._score(m, c) if c else [] for m, c in requests]

    def _stream(self, messages: list[Message], *, temperature: float, max_tokens: int, stop: Sequence[str] | None,
                cancel: threading.Event | None) -> Iterator[str]:
        """The reply's text in pieces. Backends that cannot stream yield the whole completion once."""
        self._count(1)
        yield cut_at_stop(self._complete([messages], temperature, max_tokens, stop)[0].text, stop).strip()

    def count_tokens(self, text: str) -> int:
        """Tokens in `text`, for cost counts where a call's own usage is not reported. Backends with
        a tokenizer override this; the default is an estimate of 4 characters a token."""
        return (len(text) + 3) // 4

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of the prompt `messages` make (backends with a chat template override this)."""
        return sum(self.count_tokens(m.content) for m in messages)

    def _report(self, messages: list[Message], prompt_tokens: int, text: str, completion_tokens: int) -> None:
        """One call's usage to the active cost meters; counts the backend did not give are taken
        from the tokenizer (only when something is measuring)."""
        if not cost.active():
            return
        prompt_tokens = prompt_tokens or self.count_prompt_tokens(messages)
        completion_tokens = completion_tokens or (self.count_tokens(text) if text else 0)
        cost.record(1, prompt_tokens, completion_tokens)

    def _report_scoring(self, requests: list[tuple[list[Message], list[str]]]) -> None:
        """Scoring requests to the cost meters: one call each, the prompt and the candidates as
        prompt tokens (nothing is generated)."""
        if not cost.active():
            return
        for messages, candidates in requests:
            cost.record(1, self.count_prompt_tokens(messages) + sum(self.count_tokens(c) for c in candidates), 0)

    def clear_prompt_cache(self) -> None:
        """Forget the state kept for recently run prompts (the local backend keeps their KV cache so
        that prompts extending them run only their new tokens); a no-op for other backends."""

    # -- the protocol ------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        """Model calls so far (a batch of n conversations counts n)."""
        return self._calls

    def _count(self, n: int) -> None:
        with self._lock:
            self._calls += n

    def chat(
        self,
        messages: Sequence[Message] | Sequence[dict] | str,
        *,
        temperature: float = 0.8,
        max_tokens: int = 200,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        return self.chat_batch([messages], temperature=temperature, max_tokens=max_tokens, stop=stop)[0]

    def chat_batch(
        self,
        batch: Sequence[Sequence[Message] | Sequence[dict] | str],
        *,
        temperature: float = 0.8,
        max_tokens: int = 200,
        stop: Sequence[str] | None = None,
        logprobs: bool = False,
    ) -> list[Completion]:
        """Several independent completions; local backends run them as one padded batch, endpoints
        as concurrent requests. `logprobs`: ask for the generated tokens' log-probabilities
        (`Completion.token_logprobs`); backends that cannot report them leave it None."""
        if not batch:
            return []
        stopping.check()
        convs = [as_messages(m) for m in batch]
        self._count(len(convs))
        if logprobs and self.reports_logprobs:
            out = self._complete(convs, temperature, max_tokens, stop, logprobs=True)
        else:
            out = self._complete(convs, temperature, max_tokens, stop)
        for conv, c in zip(convs, out):
            self._report(conv, c.prompt_tokens, c.text, c.completion_tokens)
        return [replace(c, text=cut_at_stop(c.text, stop).strip()) for c in out]

    def stream(self, messages, *, temperature: float = 0.8, max_tokens: int = 200, stop: Sequence[str] | None = None,
               cancel: threading.Event | None = None) -> Iterator[str]:
        """The reply's text in pieces as it is generated. Backends that cannot stream yield the
        whole completion once; `cancel` stops a backend that can. Counted when it ends (a stopped
        stream counts what was generated)."""
        stopping.check()
        convs = as_messages(messages)
        pieces: list[str] = []
        stop_event = cancel or stopping.current_event()  # a stopped reply stops its stream too
        try:
            for piece in self._stream(convs, temperature=temperature, max_tokens=max_tokens, stop=stop, cancel=stop_event):
                pieces.append(piece)
                yield piece
        finally:
            self._report(convs, 0, "".join(pieces), 0)

    def score(self, messages: Sequence[Message] | Sequence[dict] | str, candidates: Sequence[str]) -> list[float]:
        """Total log-likelihood of each candidate as the assistant's reply to `messages`."""
        if not candidates:
            return []
        stopping.check()
        self._count(1)
        request = (as_messages(messages), list(candidates))
        self._report_scoring([request])
        return self._score(*request)

    def score_batch(self, requests: Sequence[tuple[Sequence[Message] | Sequence[dict] | str, Sequence[str]]]) -> list[list[float]]:
        """`score` for several (messages, candidates) requests at once (counts one call each)."""
        reqs = [(as_messages(m), list(c)) for m, c in requests]
        if not reqs:
            return []
        stopping.check()
        self._count(len(reqs))
        self._report_scoring(reqs)
        return self._score_batch(reqs)

    def choose(self, messages, options: Sequence[str]) -> tuple[int, list[float]]:
        """Index of the most likely option (mean log-likelihood per character, so long options are
        not penalised for length) and the per-option scores."""
        raw = self.score(messages, options)
        norm = [s / max(1, len(o)) for s, o in zip(raw, options)]
        return max(range(len(options)), key=norm.__getitem__), norm

    def json(
        self,
        messages: Sequence[Message] | Sequence[dict] | str,
        schema: dict,
        *,
        temperature: float = 0.0,
        max_tokens: int = 400,
        retries: int = 1,
    ):
        """Parse the reply as JSON and validate it against `schema` (JSON Schema); retry with the
        error fed back, then raise LLMOutputError. Callers fall back to a symbolic path on it."""
        import jsonschema

        convs = as_messages(messages)
        last_error = ""
        for _ in range(retries + 1):
            stopping.check()
            attempt = convs if not last_error else convs + [Message("user", f"Your last answer was invalid ({last_error}). Reply with JSON only.")]
            self._count(1)
            out = self._json_text(attempt, schema, temperature, max_tokens)
            text = out.text if isinstance(out, Completion) else out
            self._report(attempt, getattr(out, "prompt_tokens", 0), text, getattr(out, "completion_tokens", 0))
            try:
                value = extract_json(text)
                jsonschema.validate(value, schema)
                return value
            except (LLMOutputError, jsonschema.ValidationError) as err:
                last_error = str(err).splitlines()[0][:200]
        raise LLMOutputError(f"model output failed the schema after {retries + 1} tries: {last_error}")

    def _json_text(self, messages: list[Message], schema: dict, temperature: float, max_tokens: int) -> Completion | str:
        """The raw answer (a Completion, with its usage, or bare text) to a JSON request. Backends
        that can constrain output to `schema` (llama.cpp grammars, OpenAI structured outputs)
        override this; the result is validated either way."""
        return self._complete([messages], temperature, max_tokens, None)[0]

    def ping(self) -> Completion:
        """A tiny request that proves the backend answers (raises LLMError if not)."""
        return self.chat("Say OK.", temperature=0.0, max_tokens=4)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0
