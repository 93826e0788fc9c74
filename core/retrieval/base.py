"""The retriever interface shared by the comparison page and the retrieval benchmarks.

A `Retriever` indexes one dialogue and returns `Evidence` for a query. Every evidence item drawn
from the dialogue itself carries, in `meta`, the chunk id and the ids of the turns it covers, so a
benchmark can match gold evidence turns (LoCoMo's `D<session>:<turn>`) whatever the granularity.

Chunks come at three levels, as in SGMem: a turn, a round (a turn and the replies to it), a
session. Ids are stable while a dialogue grows: a turn's id, `round:<first turn id>`, and the
session key (a turn id without its last `:<n>` part: `D3` for `D3:7`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Literal

from core.dialogue import EVIDENCE_ROUND, EVIDENCE_SESSION, EVIDENCE_TURN, USER, Dialogue, Evidence, Turn
from core.text import approx_tokens

ChunkLevel = Literal["turn", "round", "session"]
LEVELS: tuple[ChunkLevel, ...] = (EVIDENCE_TURN, EVIDENCE_ROUND, EVIDENCE_SESSION)  # a chunk's level is its evidence's kind
LEVEL_LETTER = {"turn": "t", "round": "r", "session": "s"}
DIALOGUE_KINDS = frozenset(LEVELS)  # evidence kinds that point at dialogue turns


def turn_line(turn: Turn) -> str:
    return f"{turn.speaker or turn.role.capitalize()}: {turn.text}"


@lru_cache(maxsize=200_000)
def line_tokens(line: str) -> int:
    """approx_tokens, memoised: every retrieval reports the tokens of each turn it returns."""
    return approx_tokens(line)


def session_key(turn: Turn) -> str:
    return turn.turn_id.rsplit(":", 1)[0] if ":" in turn.turn_id else f"S{turn.session}"


@dataclass(frozen=True)
class Chunk:
    id: str
    level: ChunkLevel
    turns: tuple[Turn, ...]

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(t.turn_id for t in self.turns)

    @property
    def date(self) -> str:
        return self.turns[0].date if self.turns else ""

    @property
    def text(self) -> str:
        """What is embedded and what goes into a prompt: speaker-prefixed lines; a session opens
        with its date, since many questions are about when things happened."""
        lines = "\n".join(turn_line(t) for t in self.turns)
        if self.level == "session" and self.date:
            return f"[{self.date}]\n{lines}"
        return lines

    def evidence(self, score: float, **meta) -> Evidence:
        return Evidence(
            text=self.text,
            score=float(score),
            source=self.id,
            kind=self.level,
            meta={"chunk_id": self.id, "turn_ids": list(self.turn_ids), "date": self.date,
                  "turn_tokens": [line_tokens(turn_line(t)) for t in self.turns], **meta},
        )


class ChunkTracker:
    """Assigns each turn, as it arrives, to its round and session: the same grouping as
    `Dialogue.rounds()` (a new round starts at a user turn that follows a non-user turn)."""

    def __init__(self) -> None:
        self.members: dict[str, list[Turn]] = {}  # chunk id -> turns, for all three levels
        self.order: dict[ChunkLevel, list[str]] = {level: [] for level in LEVELS}
        self._last: Turn | None = None
        self._round = ""

    def add(self, turn: Turn) -> dict[ChunkLevel, str]:
        same_session = self._last is not None and self._last.session == turn.session
        if not same_session or (turn.role == USER and self._last.role != USER):
            self._round = f"round:{turn.turn_id}"
        self._last = turn
        ids: dict[ChunkLevel, str] = {"turn": turn.turn_id, "round": self._round, "session": session_key(turn)}
        for level, cid in ids.items():
            if cid not in self.members:
                self.members[cid] = []
                self.order[level].append(cid)
            self.members[cid].append(turn)
        return ids

    def chunk(self, level: ChunkLevel, cid: str) -> Chunk:
        return Chunk(cid, level, tuple(self.members[cid]))

    def chunks(self, level: ChunkLevel) -> list[Chunk]:
        return [self.chunk(level, cid) for cid in self.order[level]]


def dialogue_chunks(dialogue: Dialogue, level: ChunkLevel) -> list[Chunk]:
    tracker = ChunkTracker()
    for turn in dialogue.turns():
        tracker.add(turn)
    return tracker.chunks(level)


def check_level(level: str) -> ChunkLevel:
    if level not in LEVELS:
        raise ValueError(f"chunk level must be one of {', '.join(LEVELS)}, not {level!r}")
    return level  # type: ignore[return-value]


class Retriever(ABC):
    """Index one dialogue, then answer queries with ranked evidence."""

    name: str = "retriever"  # as it appears in benchmark summaries, e.g. "rag-t", "sgmem-s"
    label: str = ""

    @abstractmethod
    def index(self, dialogue: Dialogue) -> None:
        """(Re)build the index over all turns of `dialogue`."""

    @abstractmethod
    def retrieve(self, query: str, k: int) -> list[Evidence]:
        """The top-k dialogue chunks (best first), then any generated memories (top-k of each kind)."""

    def settings(self) -> dict:
        """What a benchmark summary records about this retriever."""
        return {}

    def nbytes(self) -> int | None:
        """Memory held by the index structures (vectors, graph, sparse matrices), when known."""
        return None

    def stored_turn(self, turn: Turn) -> Turn:
        """`turn` as this memory shows it to a reader (a memory may rewrite what it stores, e.g.
        resolve "yesterday" to a date); plain chunk retrievers store turns as said."""
        return turn


def retrieved_turn_ids(evidence: Iterable[Evidence]) -> list[str]:
    """Turn ids covered by the dialogue chunks among `evidence`, in rank order, without repeats."""
    out: dict[str, None] = {}
    for e in evidence:
        if e.kind in DIALOGUE_KINDS:
            for tid in e.meta.get("turn_ids", ()):
                out.setdefault(tid, None)
    return list(out)
