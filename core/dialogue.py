"""Dialogue data types shared by every method, page and benchmark.

A `Turn` is one utterance; a round is a user turn and the reply to it; a `Session` groups turns of
one sitting (benchmarks such as LoCoMo and LongMemEval have many); a `Dialogue` is the whole
conversation. `Reply` is what a method returns: the answer, the evidence it used, its trace and
timings. Traces are data, never HTML: the UI renders them.
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Iterator

USER, ASSISTANT = "user", "assistant"


def chat_day() -> str:
    """The day a chat turn is said (ISO, the server's clock). Chat turns carry it as their date, so
    a memory can resolve "yesterday" against it (core.timeref)."""
    return datetime.date.today().isoformat()


@dataclass(frozen=True)
class Turn:
    role: str  # "user" or "assistant"
    text: str
    turn_id: str = ""  # stable id, e.g. LoCoMo's "D1:3"; "" for chat turns until stored
    session: int = 0
    speaker: str = ""  # a name where the data has one (LoCoMo), else the role
    date: str = ""

    @property
    def who(self) -> str:
        return self.speaker or self.role


@dataclass
class Session:
    index: int
    date: str = ""
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Dialogue:
    """Mutable: the chat appends turns. Methods read it; they keep their own memory."""

    id: str = ""
    sessions: list[Session] = field(default_factory=list)

    @classmethod
    def from_turns(cls, turns: list[Turn], id: str = "") -> "Dialogue":
        d = cls(id=id)
        for t in turns:
            d.add(t)
        return d

    def add(self, turn: Turn) -> Turn:
        """Append `turn` to its session (created when new); fills in a turn id if missing."""
        if not self.sessions or self.sessions[-1].index != turn.session:
            self.sessions.append(Session(turn.session, turn.date))
        session = self.sessions[-1]
        if not turn.turn_id:
            turn = Turn(turn.role, turn.text, f"S{turn.session}:{len(session.turns)}", turn.session, turn.speaker, turn.date)
        session.turns.append(turn)
        return turn

    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    def __len__(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def rounds(self) -> Iterator[tuple[Turn, ...]]:
        """Consecutive turns grouped so each round ends with a reply to its first turn."""
        for s in self.sessions:
            current: list[Turn] = []
            for t in s.turns:
                if current and t.role == USER and current[-1].role != USER:
                    yield tuple(current)
                    current = []
                current.append(t)
            if current:
                yield tuple(current)

    @property
    def next_session(self) -> int:
        return self.sessions[-1].index if self.sessions else 0


# The kinds of evidence and trace, as constants: the methods that make them and the pages that draw
# them name the same value, and a page finds a trace's view by its kind (ui.screens), so a misspelt
# kind fails where it is written instead of silently showing the plain table.
EVIDENCE_TURN: Final = "turn"  # a dialogue turn (also a retrieval chunk level, core.retrieval)
EVIDENCE_ROUND: Final = "round"  # a turn and the replies to it
EVIDENCE_SESSION: Final = "session"  # a whole session
EVIDENCE_SENTENCE: Final = "sentence"  # a DSM memory sentence
EVIDENCE_FACT: Final = "fact"  # a fact of a reasoning tree (dsmart / rt) or an SGMem generated fact
EVIDENCE_TRIPLE: Final = "triple"  # a knowledge-graph triple (kgaug; a dsmart link's triple)
EVIDENCE_SUMMARY: Final = "summary"  # an SGMem session summary
EVIDENCE_INSIGHT: Final = "insight"  # an SGMem insight over many sessions
EVIDENCE_KNOWLEDGE: Final = "knowledge"  # a sentence of an MCTS knowledge base
EVIDENCE_MEMORY: Final = "memory"  # a mem0 memory
EVIDENCE_KINDS: Final = frozenset({EVIDENCE_TURN, EVIDENCE_ROUND, EVIDENCE_SESSION, EVIDENCE_SENTENCE, EVIDENCE_FACT,
                                   EVIDENCE_TRIPLE, EVIDENCE_SUMMARY, EVIDENCE_INSIGHT, EVIDENCE_KNOWLEDGE, EVIDENCE_MEMORY})

TRACE_PROMPT: Final = "prompt"  # only the messages sent (the default of core.methods.Method)
TRACE_STEPS: Final = "steps"  # a list of retrieval steps (sgmem, mem0)
TRACE_TREE: Final = "tree"  # a reasoning tree (dsmart / rt)
TRACE_MCTS: Final = "mcts"  # MCTS search trees over a knowledge base
TRACE_KG: Final = "kg"  # the stages of a KG-augmented retrieval (kgaug / kgaug-c)
TRACE_KINDS: Final = frozenset({TRACE_PROMPT, TRACE_STEPS, TRACE_TREE, TRACE_MCTS, TRACE_KG})


@dataclass(frozen=True)
class Evidence:
    """One retrieved item: a turn, sentence, chunk, triple, summary ... with its score."""

    text: str
    score: float
    source: str  # where it came from: a turn id, a session id, a triple's subject ...
    kind: str = EVIDENCE_TURN  # one of EVIDENCE_KINDS
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceNode:
    """One step or tree node of a method's reasoning. `parent` is None for roots."""

    id: str
    label: str
    parent: str | None = None
    value: float | None = None
    depth: int = 0
    chosen: bool = False
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Trace:
    kind: str  # one of TRACE_KINDS (a stored reply keeps what its version wrote)
    nodes: tuple[TraceNode, ...] = ()
    prompt: tuple[dict[str, str], ...] = ()  # the messages sent for the final answer

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Trace | None":
        if not data:
            return None
        return cls(
            kind=data["kind"],
            nodes=tuple(TraceNode(**n) for n in data.get("nodes", ())),
            prompt=tuple(data.get("prompt", ())),
        )


@dataclass(frozen=True)
class Reply:
    text: str
    method: str
    model: str
    evidence: tuple[Evidence, ...] = ()
    trace: Trace | None = None
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    llm_calls: int = 0
    cost: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> llm_calls, prompt/completion tokens
    stopped: bool = False  # cut short (Stop, or another message sent while it was written): `text` is what came
    draft: str = ""  # the method's own text where the reply check (core.reply_check) changed it; "" = unchanged

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Reply":
        return cls(
            text=data["text"],
            method=data["method"],
            model=data["model"],
            evidence=tuple(Evidence(**e) for e in data.get("evidence", ())),
            trace=Trace.from_dict(data.get("trace")),
            timings=dict(data.get("timings", {})),
            llm_calls=int(data.get("llm_calls", 0)),
            cost={k: dict(v) for k, v in data.get("cost", {}).items()},
            stopped=bool(data.get("stopped", False)),
            draft=str(data.get("draft", "")),
        )
