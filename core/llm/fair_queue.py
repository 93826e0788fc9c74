"""A fair queue in front of one shared model: every request says whose it is, and the model's
parallel slots go to owners in turn, not to whoever sent most (issue 54: one person's Compare with
four methods on long messages kept a second person's one-line message waiting behind all of it).

The rules, applied each time a slot frees or a request arrives:

- capacity: at most `capacity` requests are admitted to the backend at once (llama.cpp's parallel
  slots; for an endpoint, the slots of the servers behind it as this replica sees them);
- priority: an interactive request (a reply someone is waiting for) goes before page-started work
  (benchmarks, imports), whoever sent it;
- turns: among owners with a request of that priority waiting, the one served least recently goes
  next, so one owner's backlog never passes another owner's single message;
- per-owner limit: an owner has at most `per_owner` requests in flight (default a quarter of the
  slots, at least one: with llama.cpp's two, one slot stays free for the next person, who then
  starts at once instead of waiting for a reply; on a pool of four CPU slots a heavy owner holding
  two kept light users' first words at 19x a user alone, holding one at 3.9x: docs/operations.md);
- servers: an endpoint that is a pool of servers the app addresses itself (core.llm.endpoint_pool)
  has its slots split between them, and a request starts on the server where its first words are
  expected soonest: a free slot beside the least prefill still to do (a short reply beside another
  person's long pasted prompt shares that server's compute with its prefill and waits for it), and
  the server that served the owner last unless another is clearly sooner (it holds the owner's
  conversation in its prompt cache: elsewhere the whole prompt is computed again); a long prompt
  also counts the delay its prefill puts on the replies already on a server. A request does not
  start beside a prompt still being computed (a server computes one prompt at a time as fast as
  two together): it waits for that prompt's first piece, or for a slot on another server, and
  starts beside a prompt only when every server computes a long one. A long prompt does not start
  beside another person's short reply still being written either (for up to HOLD_S): a server
  computing a pasted note gives a reply beside it one token per step of that prefill, so a reply
  half a second from done took eight (docs/operations.md, "a paste waits for the replies on its
  server"); meanwhile the requests behind it in turn do not start on that server (they may on
  another; one ahead of it in turn still may, which the bound covers). A server the pool found
  down is not chosen while another is up;
- a bound: past `max_waiting` requests waiting (or `max_waiting_per_owner` of one owner) a new one
  is refused with `QueueFull`, an LLMError the page shows ("the model is busy"), not a silent wait.

Who is asking comes from a context variable (`caller(owner, priority, on_wait)`) that the
conversation service sets for a round and a page sets for the work it starts; outside one, requests
belong to `DEFAULT_OWNER` (the command line). Work handed to another thread keeps it when it runs in
a copy of the context, as the cost meters and the cancel event do.

A waiting request is told its place: `on_wait(QueuePlace)` each time its position or its estimated
wait changes, and once more when it starts. The estimate comes from moving averages of the prefill
and decode rates the scheduler measures on the requests it serves (see `Rates`). Stop (the reply's
cancel event, core.llm.cancel) takes a waiting request out of the queue; a request that ends for any
reason gives its slot back.
"""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from core.llm import cancel as stopping
from core.llm.base import LLMError

# a prompt this long (estimated tokens) still being computed holds its server's compute for seconds:
# a pasted note, not a chat turn (whose conversation is mostly in the server's cache)
LONG_PROMPT = 512
# how long a long prompt waits for the short replies being written on its server before it starts
# beside them anyway (their ends are not known in advance: a reply may run to its token limit)
HOLD_S = 10.0
INTERACTIVE = 0  # a reply someone is waiting for
BACKGROUND = 1  # work started from a page: benchmarks, imports
DEFAULT_OWNER = "cli"


class QueueFull(LLMError):
    """The model's queue is at its bound: the request was not queued (nothing was sent)."""


@dataclass(frozen=True)
class QueueSettings:
    capacity: int = 2  # requests admitted to the backend at once
    per_owner: int = 0  # requests one owner may have in flight; 0 = a quarter of the capacity (at least 1)
    max_waiting: int = 64  # requests waiting, all owners
    max_waiting_per_owner: int = 16
    enabled: bool = True  # False: every request goes straight to the backend (the old behaviour, for comparison)
    servers: int = 1  # servers the capacity is split between (a pool the app addresses itself)
    trace: str = ""  # a file to append one JSON line per request served (the load test reads it)

    @property
    def owner_limit(self) -> int:
        return self.per_owner if self.per_owner > 0 else max(1, self.capacity // 4)

    @property
    def server_slots(self) -> int:
        return max(1, -(-self.capacity // max(1, self.servers)))


@dataclass(frozen=True)
class QueuePlace:
    """Where a waiting request stands."""

    ahead: int  # requests that will start before it (0: it is next)
    waiting: int  # requests waiting, all owners
    wait_s: float  # estimated seconds until it starts
    started: bool = False  # it has its slot now (the last report of a wait)


@dataclass(frozen=True)
class Caller:
    owner: str = DEFAULT_OWNER
    priority: int = INTERACTIVE
    on_wait: Callable[[QueuePlace], None] | None = None


_CALLER: ContextVar[Caller] = ContextVar("llm_caller", default=Caller())


@contextmanager
def caller(owner: str, priority: int = INTERACTIVE, on_wait: Callable[[QueuePlace], None] | None = None) -> Iterator[None]:
    """LLM requests in this block are `owner`'s, of `priority`; `on_wait` hears where they stand."""
    token = _CALLER.set(Caller(owner, priority, on_wait))
    try:
        yield
    finally:
        _CALLER.reset(token)


def current_caller() -> Caller:
    return _CALLER.get()


@dataclass
class Rates:
    """Exponential moving averages of what served requests measured: prompt tokens per second of
    prefill, generated tokens per second of decoding (both as a request sees them with the other
    slots busy, which is what the next one will see), and tokens generated per request. The first
    values are the 1.5B model's on 2 cores (docs/speed.md), replaced by measurements within a few
    requests."""

    prefill_tps: float = 150.0
    decode_tps: float = 15.0
    completion_tokens: float = 120.0
    alpha: float = 0.3

    def _ema(self, old: float, new: float) -> float:
        return old + self.alpha * (new - old)

    def observe(self, prompt_tokens: int, completion_tokens: int, first_s: float | None, total_s: float) -> None:
        """One served request: `first_s` is the time to its first generated piece (prefill), when
        it streamed; otherwise the prefill share is taken from the current prefill rate."""
        if total_s <= 0:
            return
        if first_s is not None and prompt_tokens > 0 and first_s > 0:
            self.prefill_tps = self._ema(self.prefill_tps, prompt_tokens / first_s)
        elif completion_tokens == 0 and prompt_tokens > 0:  # scoring: all prefill
            self.prefill_tps = self._ema(self.prefill_tps, prompt_tokens / total_s)
        prefill_s = first_s if first_s is not None else prompt_tokens / self.prefill_tps
        decode_s = total_s - prefill_s
        if completion_tokens > 1 and decode_s > 0:
            self.decode_tps = self._ema(self.decode_tps, completion_tokens / decode_s)
        if completion_tokens > 0:
            self.completion_tokens = self._ema(self.completion_tokens, completion_tokens)

    def service_s(self, prompt_tokens: int, max_tokens: int) -> float:
        """Estimated seconds a request holds its slot."""
        generated = min(max_tokens, self.completion_tokens) if max_tokens > 0 else 0.0
        return prompt_tokens / self.prefill_tps + generated / self.decode_tps


@dataclass(eq=False)
class Ticket:
    """One request's place in the scheduler."""

    owner: str
    priority: int
    seq: int  # arrival order
    prompt_tokens: int = 0  # estimated, for the wait estimate
    max_tokens: int = 0
    thread: int = 0  # the thread that asked (a request made while it holds a slot does not wait for itself)
    server: int = 0  # where it was started (servers > 1)
    granted: bool = False
    submitted_at: float = 0.0
    started_at: float | None = None
    streaming: bool = False  # its first piece is reported (`first_piece`)
    first_at: float | None = None  # its first generated piece came: its prefill is done
    held_at: float | None = None  # a long prompt: when it first waited for the replies on its server
    done: bool = False


@dataclass
class _State:
    waiting: list[Ticket] = field(default_factory=list)  # arrival order
    in_flight: list[Ticket] = field(default_factory=list)
    last_served: dict[str, int] = field(default_factory=dict)  # owner -> grant number of its latest start
    # owner -> (server, prompt tokens) of its latest start: that server holds that prompt in its cache
    last_start: dict[str, tuple[int, int]] = field(default_factory=dict)
    grants: int = 0


def _next(waiting: list[Ticket], last_served: dict[str, int], eligible: Callable[[Ticket], bool]) -> Ticket | None:
    """The request to start next: the best priority among eligible ones, then the owner served least
    recently (an owner never served goes first), then arrival; an owner's own requests in order."""
    candidates = [t for t in waiting if eligible(t)]
    if not candidates:
        return None
    best = min(t.priority for t in candidates)
    heads: dict[str, Ticket] = {}
    for t in candidates:  # arrival order: the first of each owner at this priority
        if t.priority == best and t.owner not in heads:
            heads[t.owner] = t
    return min(heads.values(), key=lambda t: (last_served.get(t.owner, -1), t.seq))


class FairScheduler:
    """The queue of one model (or one replica of an endpoint). Thread-safe. `clock` is injectable
    so tests can build timelines by hand."""

    def __init__(self, settings: QueueSettings = QueueSettings(), clock: Callable[[], float] = time.monotonic,
                 server_up: Callable[[int], bool] | None = None) -> None:
        self.settings = settings
        self.rates = Rates()
        self.clock = clock
        self.server_up = server_up or (lambda k: True)  # the pool's health (core.llm.endpoint_pool)
        self._state = _State()
        self._cond = threading.Condition()
        self._seq = itertools.count()

    # -- counts, for pages and tests -----------------------------------------------------------------
    def in_flight(self) -> int:
        with self._cond:
            return len(self._state.in_flight)

    def waiting(self) -> int:
        with self._cond:
            return len(self._state.waiting)

    def pending(self) -> int:
        """Requests served or waiting now, all owners."""
        with self._cond:
            return len(self._state.in_flight) + len(self._state.waiting)

    # -- the non-blocking core (what the tests drive step by step) ------------------------------------
    def submit(self, owner: str, priority: int = INTERACTIVE, prompt_tokens: int = 0, max_tokens: int = 0,
               thread: int = 0, streaming: bool = False) -> Ticket:
        """Queue a request; it may start at once (`ticket.granted`). QueueFull past the bounds."""
        s, cfg = self._state, self.settings
        ticket = Ticket(owner, priority, next(self._seq), prompt_tokens, max_tokens, thread, streaming=streaming,
                        submitted_at=self.clock())
        with self._cond:
            holder = next((t for t in s.in_flight if thread and t.thread == thread and t.owner == owner), None)
            if not cfg.enabled or holder:  # off, or asked by a request that holds a slot: waiting for itself never ends
                self._grant(ticket, holder.server if holder else 0)
                return ticket
            s.waiting.append(ticket)
            self._dispatch()
            if not ticket.granted:
                mine = sum(t.owner == owner for t in s.waiting)
                if len(s.waiting) > cfg.max_waiting or mine > cfg.max_waiting_per_owner:
                    s.waiting.remove(ticket)
                    raise QueueFull(f"the model is busy: {len(s.waiting)} requests are waiting ({mine - 1} of them "
                                    f"yours); try again in a minute")
            return ticket

    def release(self, ticket: Ticket, prompt_tokens: int = 0, completion_tokens: int = 0,
                first_s: float | None = None, total_s: float | None = None) -> None:
        """The request ended (answered, failed or stopped): its slot goes to the next one. With
        `total_s`, its measured times update the rates."""
        with self._cond:
            if ticket.done:
                return
            ticket.done = True
            record = self._record(ticket, completion_tokens, total_s) if self.settings.trace else None
            if ticket in self._state.in_flight:
                self._state.in_flight.remove(ticket)
            elif ticket in self._state.waiting:
                self._state.waiting.remove(ticket)
            if total_s is not None:
                self.rates.observe(prompt_tokens, completion_tokens, first_s, total_s)
            self._dispatch()
            self._cond.notify_all()
        if record is not None:
            with open(self.settings.trace, "a", encoding="utf-8") as out:  # one short line: appended whole
                out.write(json.dumps(record) + "\n")

    def _record(self, t: Ticket, completion_tokens: int, total_s: float | None) -> dict:
        """What the trace keeps of a request that ended: who, where, and where its time went."""
        now = self.clock()
        started = t.started_at
        return {"end": round(time.time(), 3), "owner": t.owner, "priority": t.priority, "server": t.server,
                "prompt_tokens": t.prompt_tokens, "generated": completion_tokens, "served": total_s is not None,
                "queued_s": round((started if started is not None else now) - t.submitted_at, 3),
                "first_s": round(t.first_at - started, 3) if t.first_at is not None and started is not None else None,
                "total_s": round(total_s, 3) if total_s is not None else None}

    def first_piece(self, ticket: Ticket) -> None:
        """A streamed request's first piece came: its prefill no longer holds its server (a request
        waiting rather than start beside that prefill may start now)."""
        with self._cond:
            if ticket.first_at is None and not ticket.done:
                ticket.first_at = self.clock()
                self._dispatch()

    def withdraw(self, ticket: Ticket) -> None:
        """Take a request out (Stop while it waits); a request that started meanwhile is released."""
        self.release(ticket)

    def order(self) -> list[Ticket]:
        """The waiting requests in the order they are expected to start (the turn rules, with every
        slot assumed free for them: the per-owner limit only delays an owner's later requests)."""
        with self._cond:
            return self._order()

    def place(self, ticket: Ticket) -> QueuePlace | None:
        """Where `ticket` stands (None once it has started or ended)."""
        with self._cond:
            return self._place(ticket)

    # -- blocking use (the LLM wrapper) ----------------------------------------------------------------
    def acquire(self, prompt_tokens: int = 0, max_tokens: int = 0, who: Caller | None = None,
                poll_s: float = 0.25, streaming: bool = False) -> Ticket:
        """Wait for a slot as the context's caller (or `who`), telling `on_wait` where the request
        stands as that changes. Cancelled / DeadlinePassed (core.llm.cancel) take it out of the
        queue; QueueFull when the queue is at its bound."""
        who = who or current_caller()
        stopping.check()
        ticket = self.submit(who.owner, who.priority, prompt_tokens, max_tokens, thread=threading.get_ident(),
                             streaming=streaming)
        told: tuple[int, int] | None = None
        try:
            while True:
                with self._cond:
                    if ticket.granted:
                        break
                    place = self._place(ticket)
                shown = (place.ahead, round(place.wait_s))
                if who.on_wait is not None and shown != told:
                    who.on_wait(place)
                    told = shown
                stopping.check()  # Stop while waiting: out of the queue (the except below)
                with self._cond:
                    if not ticket.granted:
                        self._cond.wait(poll_s)  # woken by every start and release; the timeout notices Stop
        except BaseException:
            self.withdraw(ticket)
            raise
        if told is not None and who.on_wait is not None:
            who.on_wait(QueuePlace(0, self.waiting(), 0.0, started=True))
        return ticket

    # -- under the lock ---------------------------------------------------------------------------------
    def _grant(self, ticket: Ticket, server: int = 0) -> None:
        s = self._state
        s.grants += 1
        s.last_served[ticket.owner] = s.grants
        ticket.granted, ticket.started_at, ticket.server = True, self.clock(), server
        s.last_start[ticket.owner] = (server, ticket.prompt_tokens)
        s.in_flight.append(ticket)

    def _dispatch(self) -> None:
        s, cfg = self._state, self.settings
        reserved: set[int] = set()  # servers a long prompt waits on: nothing behind it starts there meanwhile
        passed: set[int] = set()  # those long prompts (seq): the requests behind them may start elsewhere
        while s.waiting and len(s.in_flight) < cfg.capacity:
            busy = {}
            for t in s.in_flight:
                busy[t.owner] = busy.get(t.owner, 0) + 1
            ticket = _next(s.waiting, s.last_served,
                           lambda t: busy.get(t.owner, 0) < cfg.owner_limit and t.seq not in passed)
            if ticket is None:
                break
            server = self._server_for(ticket, reserved)
            if server is None:  # no slot for it yet (or only beside a long prefill): it waits, and those behind it
                break
            if self._holds_for_replies(ticket, server):
                reserved.add(server)
                passed.add(ticket.seq)
                continue
            s.waiting.remove(ticket)
            self._grant(ticket, server)
        self._cond.notify_all()

    def _holds_for_replies(self, ticket: Ticket, server: int) -> bool:
        """Whether long prompt `ticket` waits before starting on `server` (of a pool) for the short
        replies of other owners being written there, as it does for HOLD_S at most."""
        if self.settings.servers < 2 or ticket.prompt_tokens < LONG_PROMPT:
            return False
        writing = [t for t in self._state.in_flight if t.server == server and t.owner != ticket.owner
                   and t.streaming and t.first_at is not None and t.prompt_tokens < LONG_PROMPT]
        if not writing:
            return False
        now = self.clock()
        if ticket.held_at is None:
            ticket.held_at = now
        return now - ticket.held_at < HOLD_S

    def _server_for(self, ticket: Ticket, reserved: set[int] = frozenset()) -> int | None:
        """Where `ticket` starts (None: it waits for a slot). On one server: its free slot. In a pool
        (not on the `reserved` servers, kept for a long prompt waiting there):

        - not beside a prompt still being computed (a stream whose first piece has not come): a
          server computes the prompts it holds together, so two started at once both have their
          first piece when the second alone would, and one after the other the first has it
          sooner and the second no later. When every free slot is beside one, the request
          waits: for a short prompt's first piece (a second or less), or for a slot on a server
          computing nothing long (a chat reply frees one in a second or two). Only where every
          server computes a long prompt (LONG_PROMPT tokens or more: seconds) does it start
          beside one. How long a prefill has left is not estimated: most prompts find their
          conversation in the server's cache, so the rates measured say little about the next one;
        - among the rest, the fewest seconds to its first words, estimated: the prefill still to do
          beside it, its own prompt (computed whole away from the server that served its owner
          last; there, only what goes past the owner's previous prompt, which that server holds in
          its cache), and the delay its own prefill puts on the requests already there (a long
          prompt goes where it slows fewest replies, and a heavy owner's next paste stays with
          its conversation rather than move to the server holding everyone else's)."""
        cfg, now, rates = self.settings, self.clock(), self.rates
        on: list[list[Ticket]] = [[] for _ in range(max(1, cfg.servers))]
        for t in self._state.in_flight:
            on[min(t.server, len(on) - 1)].append(t)
        if len(on) == 1:
            return 0 if len(on[0]) < cfg.server_slots else None

        def computing(k: int) -> list[Ticket]:  # prompts computing there: streamed, no first piece yet
            return [t for t in on[k] if t.streaming and t.first_at is None]

        def computing_long(k: int) -> bool:
            return any(t.prompt_tokens >= LONG_PROMPT for t in computing(k))

        cached_on, held = self._state.last_start.get(ticket.owner, (None, 0))

        def own(k: int) -> float:
            """Seconds of its own prompt to compute on server k: on the server that served its owner
            last, what goes past the owner's previous prompt (the rest is in that server's cache)."""
            cached = min(held, ticket.prompt_tokens) if k == cached_on else 0
            return (ticket.prompt_tokens - cached) / rates.prefill_tps

        def score(k: int) -> float:
            # prefill still to do there: none for a stream whose first piece came; else estimated
            ahead = sum(max(0.0, t.prompt_tokens / rates.prefill_tps - (now - t.started_at))
                        for t in on[k] if t.first_at is None)
            return ahead + own(k) * (len(on[k]) + 1)  # its own prefill, and the delay it puts on each there

        up = [k for k in range(len(on)) if self.server_up(k)] or list(range(len(on)))
        free = [k for k in up if len(on[k]) < cfg.server_slots and k not in reserved]
        if not free:
            return None
        candidates = [k for k in free if not computing_long(k)]
        if not candidates and any(not computing_long(k) for k in up):
            return None  # every free slot is beside a long prefill: wait for a slot on a server without one
        best = min(candidates or free, key=lambda k: (round(score(k), 2), len(on[k]), k))
        if candidates and computing(best):
            return None  # beside a short prompt computing: it starts there at that prompt's first piece
        return best

    def _order(self) -> list[Ticket]:
        waiting, last, grants = list(self._state.waiting), dict(self._state.last_served), self._state.grants
        out = []
        while waiting:
            ticket = _next(waiting, last, lambda t: True)
            waiting.remove(ticket)
            grants += 1
            last[ticket.owner] = grants
            out.append(ticket)
        return out

    def _place(self, ticket: Ticket) -> QueuePlace | None:
        if ticket.granted or ticket.done:
            return None
        order = self._order()
        ahead = order.index(ticket)
        # list scheduling over the slots: each frees when its request's estimated time is up
        now, rates = self.clock(), self.rates
        free = sorted(max(0.0, rates.service_s(t.prompt_tokens, t.max_tokens) - (now - t.started_at))
                      for t in self._state.in_flight if t.started_at is not None)
        slots = (free + [0.0] * self.settings.capacity)[:self.settings.capacity]
        heapq.heapify(slots)
        for t in order[:ahead]:
            heapq.heappush(slots, heapq.heappop(slots) + rates.service_s(t.prompt_tokens, t.max_tokens))
        return QueuePlace(ahead, len(order), round(slots[0], 1))


# -- one scheduler per model or endpoint in the process ---------------------------------------------------
_SCHEDULERS: dict[str, FairScheduler] = {}
_SCHEDULERS_LOCK = threading.Lock()


def scheduler_for(key: str, settings: QueueSettings, server_up: Callable[[int], bool] | None = None) -> FairScheduler:
    """The process's scheduler for `key` (a model instance or an endpoint): every session's client of
    one endpoint shares it. Settings that change (the queue switched off) give a new one."""
    with _SCHEDULERS_LOCK:
        found = _SCHEDULERS.get(key)
        if found is None or found.settings != settings:
            found = _SCHEDULERS[key] = FairScheduler(settings, server_up=server_up)
        return found
