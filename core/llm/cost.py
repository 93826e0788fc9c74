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


class Meter:
    """Usage per stage, in the order stages first appeared. Thread-safe."""

    def __init__(self) -> None:
        self._stages: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def add(self, stage_name: str, usage: Usage) -> None:
        with self._lock:
            self._stages[stage_name] = self._stages.get(stage_name, Usage()) + usage

    def total(self) -> Usage:
        with self._lock:
            return sum(self._stages.values(), Usage())

    def as_dict(self) -> dict[str, dict[str, int]]:
        """stage -> {"llm_calls", "prompt_tokens", "completion_tokens"} (plain data, for JSON)."""
        with self._lock:
            return {name: usage.as_dict() for name, usage in self._stages.items()}


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


def current_stage() -> str:
    return _STAGE.get()


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


def merge(into: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Per-stage sums of two `Meter.as_dict()` results (a new dict)."""
    out = {name: dict(counts) for name, counts in into.items()}
    for name, counts in more.items():
        row = out.setdefault(name, dict.fromkeys(KEYS, 0))
        for key in KEYS:
            row[key] = row.get(key, 0) + int(counts.get(key, 0))
    return out


def totals(cost: dict[str, dict[str, int]]) -> dict[str, int]:
    """The three counts summed over stages."""
    return {key: sum(int(row.get(key, 0)) for row in cost.values()) for key in KEYS}


def active() -> bool:
    """Whether anything is measuring in this context (backends skip tokenizing when not)."""
    return bool(_METERS.get())
