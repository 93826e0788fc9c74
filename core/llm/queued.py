"""The shared model behind its fair queue (core.llm.fair_queue): `QueuedLLM` wraps a backend so that
every public call (chat, batch, stream, score, JSON) first waits for a slot as the context's
caller, then runs on the backend and gives the slot back with what it measured.

`queued(llm, settings)` is how the app and the command line get their model: one scheduler per
embedded model instance, one per endpoint (base URL and model) however many sessions hold a client
of it. WORKBENCH_LLM_QUEUE=off switches the queue off (requests go straight to the backend, for
comparison); WORKBENCH_LLM_QUEUE_SLOTS sets an endpoint's capacity (the slots of the servers behind
it), WORKBENCH_LLM_QUEUE_PER_OWNER and WORKBENCH_LLM_QUEUE_MAX the limits; WORKBENCH_LLM_QUEUE_TRACE
names a file that gets one JSON line per request served (owner, server, seconds queued, to the first
piece, in all: the load test reads it). An endpoint whose base URL lists several servers
(core.llm.endpoint_pool) has its capacity split between them, and each request is sent to the
server the queue placed it on.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, Sequence

from core.llm.base import LLM, Completion, Message, as_messages
from core.llm.endpoint_pool import pool_for, prefer_server, split_urls
from core.llm.fair_queue import FairScheduler, QueueSettings, Ticket, scheduler_for

CHARS_PER_TOKEN = 4  # a prompt's size for the wait estimate, without a tokenizer call


def prompt_size(messages: Sequence[Message]) -> int:
    return sum(len(m.content) for m in messages) // CHARS_PER_TOKEN + 8


class QueuedLLM(LLM):
    """`inner` behind `scheduler`. Everything but the protocol's calls (tokenizer, options, the
    prompt cache) is the backend's own."""

    def __init__(self, inner: LLM, scheduler: FairScheduler) -> None:
        super().__init__()
        self.inner, self.scheduler = inner, scheduler

    # asked of the backend when needed, not at wrapping: an endpoint finds out by probing the
    # server (a scoring request), which a chat that never scores must not send
    @property
    def supports_scoring(self) -> bool:  # type: ignore[override]
        return self.inner.supports_scoring

    @property
    def reports_logprobs(self) -> bool:  # type: ignore[override]
        return self.inner.reports_logprobs

    def __getattr__(self, name: str):  # only for what this class does not define: the backend's extras
        if name in ("inner", "scheduler"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.inner.name

    @property
    def calls(self) -> int:
        return self.inner.calls

    def pending(self) -> int:
        """Requests served or waiting now, all users."""
        return self.scheduler.pending()

    def _complete(self, batch, temperature, max_tokens, stop, **kwargs) -> list[Completion]:
        return self.inner._complete(batch, temperature, max_tokens, stop, **kwargs)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return self.inner.count_prompt_tokens(messages)

    def clear_prompt_cache(self) -> None:
        self.inner.clear_prompt_cache()

    # -- one slot per request ------------------------------------------------------------------------
    def _server(self, ticket: Ticket):
        """Requests sent in this block go to the server the queue placed `ticket` on (a pool)."""
        placed = self.scheduler.settings.servers > 1 and self.scheduler.settings.enabled  # off: the pool's least busy
        return prefer_server(ticket.server if placed else None)

    def _run(self, prompt_tokens: int, max_tokens: int, call):
        ticket = self.scheduler.acquire(prompt_tokens, max_tokens)
        t0 = time.perf_counter()
        try:
            with self._server(ticket):
                out = call()
        except BaseException:
            self.scheduler.release(ticket)
            raise
        completions = out if isinstance(out, list) and all(isinstance(c, Completion) for c in out) else []
        generated = sum(c.completion_tokens for c in completions)
        used = sum(c.prompt_tokens for c in completions) or prompt_tokens
        self.scheduler.release(ticket, used, generated, None, time.perf_counter() - t0)
        return out

    def chat_batch(self, batch, *, temperature: float = 0.8, max_tokens: int = 200, stop=None,
                   logprobs: bool = False) -> list[Completion]:
        convs = [as_messages(m) for m in batch]
        if len(convs) <= 1 or getattr(self.inner, "one_pass_batches", False):
            # one request (a transformers batch is one padded forward pass: one slot)
            return self._run(sum(map(prompt_size, convs)), max_tokens, lambda: self.inner.chat_batch(
                convs, temperature=temperature, max_tokens=max_tokens, stop=stop, logprobs=logprobs))
        # several: each conversation waits for its own slot, as the backend would serve them anyway
        with ThreadPoolExecutor(max_workers=len(convs), thread_name_prefix="queued") as pool:
            futures = [pool.submit(contextvars.copy_context().run, self.chat_batch, [c], temperature=temperature,
                                   max_tokens=max_tokens, stop=stop, logprobs=logprobs) for c in convs]
            return [f.result()[0] for f in futures]

    def stream(self, messages, *, temperature: float = 0.8, max_tokens: int = 200, stop=None,
               cancel: threading.Event | None = None) -> Iterator[str]:
        convs = as_messages(messages)
        size = prompt_size(convs)
        ticket: Ticket = self.scheduler.acquire(size, max_tokens, streaming=True)
        t0 = time.perf_counter()
        first: float | None = None
        pieces = 0
        pieces_of = None
        try:
            pieces_of = iter(self.inner.stream(convs, temperature=temperature, max_tokens=max_tokens, stop=stop,
                                               cancel=cancel))
            while True:
                with self._server(ticket):  # set and reset within one step: the caller's context is not left changed
                    piece = next(pieces_of, None)
                if piece is None:
                    break
                if first is None:
                    first = time.perf_counter() - t0
                    self.scheduler.first_piece(ticket)
                pieces += 1  # llama.cpp and OpenAI streams send one token a piece
                yield piece
        finally:
            # a stopped reply closes the backend's stream now: its connection, its server's count
            getattr(pieces_of, "close", lambda: None)()
            finished = pieces > 0
            self.scheduler.release(ticket, size, pieces, first if finished else None,
                                   time.perf_counter() - t0 if finished else None)

    def score(self, messages, candidates) -> list[float]:
        convs = as_messages(messages)
        size = prompt_size(convs) + sum(len(c) for c in candidates) // CHARS_PER_TOKEN
        return self._run(size, 0, lambda: self.inner.score(convs, candidates))

    def score_batch(self, requests) -> list[list[float]]:
        reqs = [(as_messages(m), list(c)) for m, c in requests]
        size = sum(prompt_size(m) for m, _ in reqs)
        return self._run(size, 0, lambda: self.inner.score_batch(reqs))

    def json(self, messages, schema: dict, *, temperature: float = 0.0, max_tokens: int = 400, retries: int = 1):
        convs = as_messages(messages)
        return self._run(prompt_size(convs), max_tokens, lambda: self.inner.json(
            convs, schema, temperature=temperature, max_tokens=max_tokens, retries=retries))


def backend_of(llm: LLM) -> LLM:
    """The backend behind the queue (for "is this an endpoint?" checks); `llm` itself when not queued."""
    return llm.inner if isinstance(llm, QueuedLLM) else llm


def queue_settings(capacity: int, env: Mapping[str, str] = os.environ, per_owner: int = 0, servers: int = 1) -> QueueSettings:
    """The queue's settings from the environment (see the module's doc), for a backend of `capacity`
    slots over `servers` servers."""
    return QueueSettings(capacity=max(1, int(env.get("WORKBENCH_LLM_QUEUE_SLOTS") or capacity)),
                         per_owner=int(env.get("WORKBENCH_LLM_QUEUE_PER_OWNER") or per_owner),
                         max_waiting=int(env.get("WORKBENCH_LLM_QUEUE_MAX") or QueueSettings.max_waiting),
                         enabled=env.get("WORKBENCH_LLM_QUEUE", "on").strip().lower() not in ("off", "0", "false", "no"),
                         servers=servers, trace=env.get("WORKBENCH_LLM_QUEUE_TRACE", ""))


_WRAPPED: dict[int, QueuedLLM] = {}
_WRAPPED_LOCK = threading.Lock()


def queued(llm: LLM, settings, env: Mapping[str, str] = os.environ, per_owner: int = 0) -> QueuedLLM:
    """`llm` (built from core.config.LLMSettings `settings`) behind its process-wide queue. An
    embedded model (one instance serves every session) gets one wrapper, so callers can compare
    identities; an endpoint client (one per session) shares the endpoint's scheduler. `per_owner`:
    the owner limit (0: a quarter of the slots; a command line alone on the model gives it every slot)."""
    if isinstance(llm, QueuedLLM):
        return llm
    if settings.backend == "openai":
        key = f"openai:{settings.base_url}|{settings.model}"
        urls = split_urls(settings.base_url)
        qs = queue_settings(settings.slots * len(urls), env, per_owner, servers=len(urls))
        return QueuedLLM(llm, scheduler_for(key, qs, pool_for(urls).is_up if len(urls) > 1 else None))
    options = getattr(llm, "options", None)
    capacity = getattr(options, "slots", 0) or settings.slots
    qs = queue_settings(capacity, {k: v for k, v in env.items() if k != "WORKBENCH_LLM_QUEUE_SLOTS"}, per_owner)
    with _WRAPPED_LOCK:
        found = _WRAPPED.get(id(llm))
        if found is None or found.inner is not llm or found.scheduler.settings != qs:
            found = _WRAPPED[id(llm)] = QueuedLLM(llm, scheduler_for(f"embedded:{id(llm)}", qs))
        return found
