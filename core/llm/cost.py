"""What LLM work costs: calls and tokens, per named stage.

Every backend reports through the `LLM` base class (`record` after each chat, batch, stream, JSON
answer or scoring request); this module only keeps the counts. Counting is opt-in and local to the
code that asks for it:

    with measure() as meter:          # every LLM call in this context (this thread) is counted
        with stage("statement"):      # ... under this stage name
            llm.chat(...)
    meter.as_dict()  # {"statement": {"llm_calls": 1, "prompt_tokens": 57, "completion_tokens": 12}}

Meters nest (a benchmark's meter and one reply's meter both see the reply's calls), and they are
context-local (`contextvars`), so two users' replies on one shared model are counted apart. Work
handed to another thread is counted there only when it runs in a copy of the context
(`contextvars.copy_context().run`), as the D-SMART memory worker does.

Tokens are the backend's own counts where it gives them (llama.cpp and OpenAI `usage`, the local
tokenizer); otherwise the backend's `count_tokens` (the scripted fake counts words).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator

OTHER = "other"  # the stage of calls made outside any `stage(...)`
KEYS = ("llm_calls", "prompt_tokens", "completion_tokens")
# What the server did per request, where it says (llama.cpp's `timings`): requests sent (a scoring
# call walks a token trie, several one-token requests), prompt tokens run through the model,
# prompt tokens reused from its KV cache, tokens generated, the requests' wall time, and the server's
# own time computing the prompt (prefill) and writing the tokens (decode).
REQUEST_KEYS = ("requests", "processed_tokens", "cached_tokens", "generated_tokens", "request_s", "prefill_s", "decode_s")


@dataclass(frozen=True)
class Usage:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.llm_calls + other.llm_calls, self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        return {"llm_calls": self.llm_calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


@dataclass(frozen=True)
class Requests:
    """Server-side work of the requests behind calls (see REQUEST_KEYS)."""

    requests: int = 0
    processed_tokens: int = 0
    cached_tokens: int = 0
    generated_tokens: int = 0
    request_s: float = 0.0
    prefill_s: float = 0.0
    decode_s: float = 0.0

    def __add__(self, other: "Requests") -> "Requests":
        return Requests(self.requests + other.requests, self.processed_tokens + other.processed_tokens,
                        self.cached_tokens + other.cached_tokens, self.generated_tokens + other.generated_tokens,
                        self.request_s + other.request_s, self.prefill_s + other.prefill_s, self.decode_s + other.decode_s)

    def as_dict(self) -> dict[str, float]:
        return {"requests": self.requests, "processed_tokens": self.processed_tokens, "cached_tokens": self.cached_tokens,
                "generated_tokens": self.generated_tokens, "request_s": round(self.request_s, 4),
                "prefill_s": round(self.prefill_s, 4), "decode_s": round(self.decode_s, 4)}


class Meter:
    """Usage per stage, in the order stages first appeared. Thread-safe."""

    def __init__(self) -> None:
        self._stages: dict[str, Usage] = {}
        self._requests: dict[str, Requests] = {}
        self._lock = threading.Lock()

    def add(self, stage_name: str, usage: Usage) -> None:
        with self._lock:
            self._stages[stage_name] = self._stages.get(stage_name, Usage()) + usage

    def add_requests(self, stage_name: str, work: Requests) -> None:
        with self._lock:
            self._requests[stage_name] = self._requests.get(stage_name, Requests()) + work
            self._stages.setdefault(stage_name, Usage())

    def total(self) -> Usage:
        with self._lock:
            return sum(self._stages.values(), Usage())

    def as_dict(self) -> dict[str, dict[str, int]]:
        """stage -> {"llm_calls", "prompt_tokens", "completion_tokens"} (plain data, for JSON), plus
        the REQUEST_KEYS where the backend reported its requests."""
        with self._lock:
            return {name: {**usage.as_dict(), **(self._requests[name].as_dict() if name in self._requests else {})}
                    for name, usage in self._stages.items()}


_METERS: ContextVar[tuple[Meter, ...]] = ContextVar("llm_meters", default=())
_STAGE: ContextVar[str] = ContextVar("llm_stage", default=OTHER)


@contextmanager
def measure() -> Iterator[Meter]:
    """Count every LLM call made in this context until the block ends."""
    meter = Meter()
    token = _METERS.set(_METERS.get() + (meter,))
    try:
        yield meter
    finally:
        _METERS.reset(token)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Calls in this block count under `name` (the innermost stage wins)."""
    token = _STAGE.set(name)
    try:
        yield
    finally:
        _STAGE.reset(token)


def record(calls: int, prompt_tokens: int, completion_tokens: int) -> None:
    """Add one piece of LLM work to every meter active in this context (backends call this
    through the `LLM` base class, never directly)."""
    meters = _METERS.get()
    if not meters:
        return
    usage = Usage(int(calls), int(prompt_tokens), int(completion_tokens))
    name = _STAGE.get()
    for meter in meters:
        meter.add(name, usage)


def record_requests(processed: int, cached: int, generated: int, seconds: float, requests: int = 1,
                    prefill_s: float = 0.0, decode_s: float = 0.0) -> None:
    """What the server reported doing for one request (backends that know call this)."""
    meters = _METERS.get()
    if not meters:
        return
    work = Requests(int(requests), int(processed), int(cached), int(generated), float(seconds), float(prefill_s), float(decode_s))
    name = _STAGE.get()
    for meter in meters:
        meter.add_requests(name, work)


def _keys(*rows: dict) -> tuple[str, ...]:
    return KEYS + tuple(k for k in REQUEST_KEYS if any(k in row for row in rows))


def _add(a, b):
    total = a + b
    return round(total, 4) if isinstance(total, float) else total


def merge(into: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Per-stage sums of two `Meter.as_dict()` results (a new dict)."""
    out = {name: dict(counts) for name, counts in into.items()}
    for name, counts in more.items():
        row = out.setdefault(name, dict.fromkeys(KEYS, 0))
        for key in _keys(counts):
            row[key] = _add(row.get(key, 0), counts.get(key, 0))
    return out


def totals(cost: dict[str, dict[str, int]]) -> dict[str, int]:
    """The counts summed over stages (the request counts too, where any stage has them)."""
    rows = list(cost.values())
    out = {}
    for key in _keys(*rows):
        value = sum(row.get(key, 0) for row in rows)
        out[key] = round(value, 4) if isinstance(value, float) else int(value)
    return out


def active() -> bool:
    """Whether anything is measuring in this context (backends skip tokenizing when not)."""
    return bool(_METERS.get())
