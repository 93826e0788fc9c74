"""Stopping a reply's LLM work: the Stop button, a method switch or a closed page cancel a reply,
and every LLM request that reply would still send is refused, so the shared model is free for the
next user at once (issue: a stopped D-SMART reply kept the model busy for a minute).

A reply runs inside `cancellable(event)`; backends call `check()` before each request they send
(a scoring call is many one-token requests, so it stops within one of them). A deadline works the
same way for work that must end in time; the code that set it decides what to do with the
`Deadline` exception (the reasoning tree answers with the best state it has).

Context-local (`contextvars`), like the cost meters: one user's Stop never cancels another's reply
on the same model. Work handed to another thread sees the event only when it runs in a copy of the
context (`contextvars.copy_context().run`), as the backends' request pools do.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

_CANCEL: ContextVar[threading.Event | None] = ContextVar("llm_cancel", default=None)
_DEADLINE: ContextVar[float | None] = ContextVar("llm_deadline", default=None)


class Cancelled(Exception):
    """The reply was stopped; no further LLM request is sent for it. Not an LLMError: nothing failed."""


class DeadlinePassed(Exception):
    """The time set by `deadline(...)` is up; the code that set it answers with what it has."""


@contextmanager
def cancellable(event: threading.Event | None) -> Iterator[None]:
    """LLM requests in this block are refused once `event` is set (None: never)."""
    token = _CANCEL.set(event)
    try:
        yield
    finally:
        _CANCEL.reset(token)


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """LLM requests in this block raise DeadlinePassed once `seconds` have passed (None or <= 0:
    no deadline). An inner deadline never extends an outer one."""
    if not seconds or seconds <= 0:
        yield
        return
    at = time.perf_counter() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_event() -> threading.Event | None:
    """The cancel event of this context's reply (None outside `cancellable`)."""
    return _CANCEL.get()


def cancelled() -> bool:
    event = _CANCEL.get()
    return event is not None and event.is_set()


def check() -> None:
    """Raise Cancelled or DeadlinePassed if this context's reply may send no more requests."""
    if cancelled():
        raise Cancelled("the reply was stopped")
    at = _DEADLINE.get()
    if at is not None and time.perf_counter() >= at:
        raise DeadlinePassed("the time budget is spent")


def remaining() -> float | None:
    """Seconds left before this context's deadline (None: no deadline)."""
    at = _DEADLINE.get()
    return None if at is None else max(0.0, at - time.perf_counter())
