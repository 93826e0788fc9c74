"""Where each QA method's context comes from, and how it is cut to the shared budget.

Every method turns (conversation, question) into ranked pieces: dialogue turns (from the chunks a
retriever returns, expanded turn by turn in rank order) or memory lines (triples, generated facts).
`pack` keeps pieces in rank order while they fit the budget in tokens (the first piece that
would overflow ends the list, as `tok_recall@B` in the retrieval benchmarks); the reader then sees
the kept turns in dialogue order under their session dates, memory lines after them.

Sources:
- `base`: the most recent turns that fit the budget (a plain LLM sees the end of the history).
- `full`: every turn, when the whole conversation fits the reader's window; otherwise the method
  reports "no_fit" for that question (never a cut history under the name "full").
- any retriever name (`rag-t`, `bm25-r`, `hybrid-t`, `sgmem-t+h`, `mcts-t`, `rag-tf` ...):
  core.methods.retrievers over the conversation, asked for enough chunks to fill the budget.
- `dsm`, `dsmart`: the D-SMART memory graph built by observing the conversation (one build shared
  by both): `dsm` serialises the graph (the paper's ablation), `dsmart` the facts around the
  entities the question links to (the reasoning tree's first expansion, without the tree).
- `mem0`: the mem0 library's memories of the conversation (core.methods.mem0, built by the reader
  model round by round), its search results in rank order, each dated by the session it came from.

Time anchoring is a rendering step of the harness, not of any one method: with `anchor_time`
(`--anchor-time on`, the default) every turn and every dated memory line reaches the reader with
its relative time expressions resolved against the day it was said ("yesterday (7 May 2023)",
core.timeref), whichever method found it; `off` shows them as said. Before, only SGMem's memory
did this, so a difference between SGMem and the chunk retrievers was partly one of rendering.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from core.dialogue import Dialogue, Evidence, Turn
from core.retrieval.base import DIALOGUE_KINDS, line_tokens, turn_line
from core.text import approx_tokens
from core.timeref import anchor_dated, anchor_turn

# Short names of the method list -> the retriever that implements them here.
ALIASES = {"rag": "rag-t", "bm25": "bm25-t", "hybrid": "hybrid-t", "sgmem": "sgmem-t", "mcts": "mcts-t"}
NOT_APPLICABLE = {
    "kgaug": "answers from an external knowledge graph (OpenDialKG); these conversations come with none",
    "kgaug-c": "answers from an external knowledge graph (OpenDialKG); these conversations come with none",
    "rt": "the reasoning tree over an empty memory: no memory of the conversation to answer from",
}


@dataclass(frozen=True)
class Piece:
    """One unit of context: a dialogue turn, or a memory line (turn is None)."""

    text: str
    tokens: int
    source: str
    turn: Turn | None = None
    date: str = ""  # a memory line's day (the session it came from), for time anchoring


def turn_piece(turn: Turn) -> Piece:
    return Piece(turn_line(turn), line_tokens(turn_line(turn)), turn.turn_id, turn)


def memory_piece(e: Evidence) -> Piece:
    return Piece(e.text, approx_tokens(e.text), f"{e.kind}:{e.source}")


def shown(pieces: Sequence[Piece], anchor_time: bool) -> list[Piece]:
    """The pieces as the reader sees them: with `anchor_time`, each turn's and each dated memory
    line's relative time expressions resolved against the day it was said; else as said."""
    if not anchor_time:
        return list(pieces)
    out = []
    for p in pieces:
        if p.turn is not None:
            turn = anchor_turn(p.turn)
            out.append(p if turn is p.turn else turn_piece(turn))
        elif p.date:
            text = anchor_dated(p.text, p.date)
            out.append(p if text == p.text else replace(p, text=text, tokens=approx_tokens(text)))
        else:
            out.append(p)
    return out


def pieces_of(evidence: Sequence[Evidence], turns_by_id: dict[str, Turn]) -> list[Piece]:
    """Ranked evidence as pieces: chunks expanded to their turns, other kinds as memory lines."""
    out: list[Piece] = []
    seen: set[str] = set()
    for e in evidence:
        if e.kind in DIALOGUE_KINDS:
            for tid in e.meta.get("turn_ids", ()) or (e.source,):
                if tid in turns_by_id and tid not in seen:
                    seen.add(tid)
                    out.append(turn_piece(turns_by_id[tid]))
        elif e.text not in seen:
            seen.add(e.text)
            out.append(memory_piece(e))
    return out


def pack(pieces: Sequence[Piece], budget: int) -> tuple[list[Piece], bool]:
    """The ranked pieces that fit `budget` tokens, in rank order; True when some were left out."""
    kept, used = [], 0
    for p in pieces:
        if used + p.tokens > budget:
            return kept, True
        kept.append(p)
        used += p.tokens
    return kept, False


class Source:
    """Context of one method over one conversation at a time."""

    name: str = ""
    needs_budget = True  # False: the whole memory or nothing (full)

    def prepare(self, dialogue: Dialogue) -> None:
        """Build the memory of `dialogue` (timed by the caller)."""

    def pieces(self, query: str, budget: int) -> list[Piece]:
        raise NotImplementedError

    def settings(self) -> dict:
        return {}


class RecentSource(Source):
    """`base`: the end of the history, newest first (pack keeps what fits; the reader sees it in order)."""

    def __init__(self, name: str = "base") -> None:
        self.name = name
        self.turns: list[Turn] = []

    def prepare(self, dialogue: Dialogue) -> None:
        self.turns = dialogue.turns()

    def pieces(self, query: str, budget: int) -> list[Piece]:
        return [turn_piece(t) for t in reversed(self.turns)]

    def settings(self) -> dict:
        return {"context": "most recent turns within the budget"}


class FullSource(RecentSource):
    """`full`: the whole conversation; the runner checks it against the reader's window."""

    needs_budget = False

    def __init__(self) -> None:
        super().__init__("full")

    def pieces(self, query: str, budget: int) -> list[Piece]:
        return [turn_piece(t) for t in self.turns]

    def settings(self) -> dict:
        return {"context": "the whole conversation, when it fits the reader's window"}


class RetrieverSource(Source):
    def __init__(self, name: str, retriever) -> None:
        self.name = name
        self.retriever = retriever
        self.turns_by_id: dict[str, Turn] = {}

    def prepare(self, dialogue: Dialogue) -> None:
        self.retriever.index(dialogue)
        # the turns as said: time anchoring is the harness's rendering step (`shown`), the same for all
        self.turns_by_id = {t.turn_id: t for t in dialogue.turns()}

    def pieces(self, query: str, budget: int) -> list[Piece]:
        # enough chunks to fill the budget even with short turns (about 8 tokens is a short turn)
        k = max(5, min(200, budget // 8))
        return pieces_of(self.retriever.retrieve(query, k), self.turns_by_id)

    def settings(self) -> dict:
        return {"retriever": self.retriever.name, **self.retriever.settings()}


class DsmSource(Source):
    """`dsm` / `dsmart` over one shared D-SMART memory per conversation (`shared` holds it)."""

    def __init__(self, name: str, shared: "DsmMemory") -> None:
        self.name = name
        self.shared = shared

    def prepare(self, dialogue: Dialogue) -> None:
        self.shared.build(dialogue)

    def pieces(self, query: str, budget: int) -> list[Piece]:
        method = self.shared.method
        if self.name == "dsm":
            from core.methods.dsmart.dsm_method import memory_lines

            lines = memory_lines(method.memory.graph, 10_000)
        else:
            lines = [e.text for e in method.retrieve(self.shared.dialogue, query, 10_000)]
        lines = [named(line, self.shared.names) for line in lines]
        return [Piece(line, approx_tokens(line), self.name) for line in lines]

    def settings(self) -> dict:
        return {"memory": "D-SMART graph (symbolic extractor with a weak LLM)",
                "context": "whole graph, user facts first" if self.name == "dsm" else "facts around linked entities"}


class Mem0Source(Source):
    """`mem0`: a fresh mem0 memory per conversation, built with the reader model; the memories its
    search returns for the question, ranked, as memory lines dated by their round's session."""

    name = "mem0"

    def __init__(self, make_tools: Callable[[], object]) -> None:
        self.make_tools = make_tools
        self.method = None
        self.records: list = []  # every conversation's added rounds (the cost table of docs/peers.md)
        self.search_seconds: list[float] = []

    def prepare(self, dialogue: Dialogue) -> None:
        from dataclasses import replace

        from core.methods import create_method

        if self.method is not None:
            self.search_seconds += self.method.search_seconds
        method = create_method("mem0", self.make_tools())
        method.config = replace(method.config, background=False)  # the benchmark waits for the whole build
        method.sync(dialogue)
        method.flush()
        self.method = method
        self.records += method.records

    def pieces(self, query: str, budget: int) -> list[Piece]:
        k = max(5, min(200, budget // 8))  # as a retriever: enough memories to fill the budget
        found = self.method.search(query, k)
        lines = [(f"[{e.meta['date']}] {e.text}" if e.meta.get("date") else e.text, e.meta.get("date", "")) for e in found]
        return [Piece(line, approx_tokens(line), "mem0", date=date) for line, date in lines]

    def settings(self) -> dict:
        from core.methods.mem0.method import summarise

        searches = self.search_seconds + (self.method.search_seconds if self.method is not None else [])
        return {"memory": "mem0ai 2.2.1: add-only extraction by the reader model, Qdrant in memory",
                "context": "mem0's search results (threshold 0.1), ranked, dated by session",
                "build": summarise(self.records, searches)}


def speaker_names(dialogue: Dialogue) -> dict[str, str]:
    """role -> the speaker who plays it (benchmark dialogues between two named people)."""
    names: dict[str, str] = {}
    for t in dialogue.turns():
        if t.speaker and t.speaker != t.role:
            names.setdefault(t.role, t.speaker)
    return names


def named(line: str, names: dict[str, str]) -> str:
    """A memory line with the graph's role nodes ("user", "user's sister") read as the speakers'
    names: between two people the roles say nothing about who is who."""
    fields = []
    for f in line.split(" | "):
        for role, name in names.items():
            if f == role:
                f = name
            elif f.startswith(role + "'s "):
                f = name + f[len(role):]
        fields.append(f)
    return " | ".join(fields)


class DsmMemory:
    """One D-SMART memory per conversation, built once for both `dsm` and `dsmart`."""

    def __init__(self, make_method: Callable[[], object]) -> None:
        self.make_method = make_method
        self.dialogue: Dialogue | None = None
        self.method = None
        self.seconds = 0.0
        self.names: dict[str, str] = {}

    def build(self, dialogue: Dialogue) -> None:
        if self.dialogue is dialogue:
            return  # the other D-SMART method already built it
        t0 = time.perf_counter()
        self.method = self.make_method()
        self.method.sync(dialogue)
        self.method.flush()
        self.method.wait()
        self.dialogue = dialogue
        self.names = speaker_names(dialogue)
        self.seconds = time.perf_counter() - t0


def retriever_names(names: Sequence[str]) -> list[str]:
    """The retrievers among `names` (aliases resolved)."""
    from core.methods.retrievers import RETRIEVERS

    targets = [ALIASES.get(n, n) for n in names if n not in NOT_APPLICABLE and n not in ("base", "full", "dsm", "dsmart", "mem0")]
    return [t for t in targets if t.partition("-")[0] in RETRIEVERS]


def make_sources(names: Sequence[str], retriever_context, make_tools: Callable[[], object] | None) -> tuple[list[Source], dict[str, str]]:
    """The sources for `names` and {name: why it does not apply} for the ones left out."""
    from core.methods.retrievers import RETRIEVERS, make_retriever

    sources: list[Source] = []
    skipped: dict[str, str] = {}
    shared: DsmMemory | None = None
    for name in names:
        if name in NOT_APPLICABLE:
            skipped[name] = NOT_APPLICABLE[name]
        elif name == "base":
            sources.append(RecentSource())
        elif name == "full":
            sources.append(FullSource())
        elif name == "mem0":
            if make_tools is None:
                raise ValueError("mem0 needs an LLM toolkit")
            sources.append(Mem0Source(make_tools))
        elif name in ("dsm", "dsmart"):
            if make_tools is None:
                raise ValueError(f"{name} needs an LLM toolkit")
            if shared is None:
                shared = DsmMemory(_dsmart_factory(make_tools))
            sources.append(DsmSource(name, shared))
        else:
            target = ALIASES.get(name, name)
            if target.partition("-")[0] not in RETRIEVERS:
                raise ValueError(f"unknown QA method {name!r}: base, full, dsm, dsmart, mem0 or a retriever name (rag-t, ...)")
            sources.append(RetrieverSource(name, make_retriever(target, retriever_context)))
    return sources, skipped


def _dsmart_factory(make_tools):
    def make():
        from dataclasses import replace

        from core.methods import create_method

        method = create_method("dsmart", make_tools())
        # maintenance in this thread: the benchmark waits for the whole conversation anyway
        method.config = replace(method.config, memory=replace(method.config.memory, background=False))
        method.init_memory()
        return method

    return make
