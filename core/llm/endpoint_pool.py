"""Several servers of one model that the app addresses itself (issue 54): `WORKBENCH_LLM_BASE_URL`
may list them, comma-separated, e.g. `http://gpu0:8000/v1,http://gpu1:8000/v1`.

Why the app and not nginx's least_conn: a balancer counts requests, not their work. With one
person's Compare on long pasted messages holding a server with a 3,000-token prefill, least_conn
sends the next short reply there as soon as the other server holds one reply too, and that reply's
first words wait for the long prefill (5-17 s on the load test's CPU servers, against 1.5 s alone).
The fair queue knows every request's size, so it places each one (core.llm.fair_queue, "servers").

This module holds what is shared by every client of one pool in the process: which server is
down (a refused connection, a 502/503 from a proxy in front of a dead server: skipped for
`DOWN_S` seconds), how many requests each serves now (for clients not behind the queue: the
least busy first), and the server the queue chose for the request being sent (`prefer_server`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from core.llm.base import LLMError

DOWN_S = 10.0  # a server that refused is tried last for this long (nginx's fail_timeout in deploy/nginx)


class ServerUnreachable(LLMError):
    """A server of the pool did not take the request (refused, or its proxy answered 502 / 503):
    nothing was generated, so another server may be asked."""


def split_urls(base_url: str) -> tuple[str, ...]:
    """The servers a base URL names: one, or several separated by commas."""
    return tuple(u.strip() for u in (base_url or "").split(",") if u.strip()) or ("",)


class ServerPool:
    """Health and load of the servers of one pool, shared by the process's clients of it."""

    def __init__(self, urls: tuple[str, ...], clock: Callable[[], float] = time.monotonic) -> None:
        self.urls, self.clock = urls, clock
        self._in_flight = [0] * len(urls)
        self._down_until = [0.0] * len(urls)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.urls)

    def is_up(self, k: int) -> bool:
        with self._lock:
            return self.clock() >= self._down_until[k]

    def mark_down(self, k: int, seconds: float = DOWN_S) -> None:
        with self._lock:
            self._down_until[k] = self.clock() + seconds

    def order(self, preferred: int | None = None) -> list[int]:
        """The servers to try, in order: the preferred one (the queue's choice) when it is up, then
        those up by fewest requests in flight, then those down (soonest back first): a request is
        never refused while a server might answer."""
        with self._lock:
            now = self.clock()
            up = sorted((k for k in range(len(self.urls)) if now >= self._down_until[k]),
                        key=lambda k: (self._in_flight[k], k))
            down = sorted((k for k in range(len(self.urls)) if now < self._down_until[k]),
                          key=lambda k: self._down_until[k])
        if preferred is not None and preferred in up:
            up.remove(preferred)
            up.insert(0, preferred)
        return up + down

    @contextmanager
    def serving(self, k: int) -> Iterator[None]:
        with self._lock:
            self._in_flight[k] += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight[k] -= 1


_POOLS: dict[tuple[str, ...], ServerPool] = {}
_POOLS_LOCK = threading.Lock()


def pool_for(urls: tuple[str, ...]) -> ServerPool:
    """The process's pool of these servers: every session's client of it sees the same health."""
    with _POOLS_LOCK:
        found = _POOLS.get(urls)
        if found is None:
            found = _POOLS[urls] = ServerPool(urls)
        return found


_PREFERRED: ContextVar[int | None] = ContextVar("llm_server", default=None)


@contextmanager
def prefer_server(k: int | None) -> Iterator[None]:
    """Requests sent in this block go to server `k` first (the fair queue's placement)."""
    token = _PREFERRED.set(k)
    try:
        yield
    finally:
        _PREFERRED.reset(token)


def preferred_server() -> int | None:
    return _PREFERRED.get()
