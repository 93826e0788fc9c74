"""A conversation's graph memory (D-SMART's Dynamic Structured Memory, kept by the methods whose
class says `keeps_memory_graph`) as the Memory graph page draws it: found in the session's live
method instance or in the stored memory artifact, read round by round, changed by an RDF import
and kept; and rebuilt round by round from the stored turns for a conversation held with another
method. The page gets a `GraphMemory` and draws it; how the methods pack their state stays here.

The conversation service (core.conversation.ConversationService) exposes these as `graph_memory`
and `rebuild_graph_memory`.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from core.memory_artifact import load_memory, save_memory
from core.methods import METHODS, method_class
from core.store import Store

if TYPE_CHECKING:  # annotations only: loading D-SMART (rdflib, its rules) waits for a graph to draw
    from rdflib import Graph

    from core.llm import LLM
    from core.methods.dsmart.findings import Finding
    from core.methods.dsmart.memory import DynamicStructuredMemory, TurnRecord

GRAPH_METHODS = tuple(name for name in METHODS if method_class(name).keeps_memory_graph)  # dsm, dsmart


def rdf_formats() -> tuple[str, ...]:
    """The file extensions `GraphMemory.import_rdf` reads (".ttl", ".trig", ...)."""
    from core.methods.dsmart.rdf_import import FORMATS

    return tuple(FORMATS)


class MemoryHost(Protocol):
    """What the replay needs of the conversation service (core.conversation.ConversationService);
    a protocol, so that this module does not import the service that imports it."""

    store: Store
    owner: str
    instances: MutableMapping

    @staticmethod
    def instance_key(cid: str, method_name: str) -> str: ...


@dataclass
class GraphMemory:
    """One conversation's graph memory, to draw: its rounds (`history`), the graph after any of
    them, the reasoner's findings in words, who said each fact; `import_rdf` changes and keeps it."""

    memory: DynamicStructuredMemory
    source: str  # where it came from, in words: "live `dsm` session", "stored `dsm` memory"
    method_name: str
    save: Callable[[], None] = field(repr=False)  # keeps the memory as it is now (after an import)

    @property
    def history(self) -> tuple[TurnRecord, ...]:
        return self.memory.history

    def graph_after(self, rounds: int) -> Graph:
        """The graph after the first `rounds` rounds (the latest graph itself after all of them)."""
        return self.memory.graph if rounds == len(self.history) else self.memory.graph_at(rounds)

    def findings(self, rounds: int) -> list[Finding]:
        """The reasoner's messages of round `rounds` (counted from 1) in words, about the graph after it."""
        from core.methods.dsmart.findings import findings

        history = self.history[:rounds]
        return findings(self.graph_after(rounds), history, history[-1].errors if history else ())

    def said_by_fact(self, graph: Graph | None = None) -> dict:
        """Each fact of `graph` (the latest graph when None) -> the words of the turn it came from."""
        from core.methods.dsmart.recall import said_by_fact

        return said_by_fact(self.memory, graph)

    def import_rdf(self, data: bytes, filename: str) -> TurnRecord:
        """Merge an RDF file (format by its extension, `rdf_formats()`) into the memory as a round of its
        own and keep it; ValueError, and the memory unchanged, when the file does not read."""
        from core.methods.dsmart.rdf_import import parse_rdf

        fragment = parse_rdf(data, filename)  # the whole file is checked before the memory changes
        record = self.memory.import_turtle(fragment.serialize(format="nt"))
        self.save()
        return record


def graph_memory(host: MemoryHost, cid: str) -> GraphMemory | None:
    """The conversation's graph memory: the owner's live method instance first (its maintenance
    waited for: a finished graph, never a half-merged one), else the memory stored with the
    conversation; None when no graph method has one."""
    from core.methods.dsmart.dsm_method import memory_from_state, pack_state, split_state

    store, owner = host.store, host.owner
    for name in GRAPH_METHODS:
        method = host.instances.get(host.instance_key(cid, name))
        if method is not None:
            method.wait()
            return GraphMemory(method.memory, f"live `{name}` session", name,
                               lambda m=method, n=name: save_memory(store, cid, n, m.observed, m.save_state(), owner=owner))
    for name in GRAPH_METHODS:
        saved = load_memory(store, cid, name, owner=owner)
        if saved is not None:
            memory = memory_from_state(saved.state)
            pending = split_state(saved.state)[0]  # a user turn still waiting for its reply stays waiting

            def save(m=memory, n=name, s=saved, p=pending) -> None:
                save_memory(store, cid, n, s.observed, pack_state(m.save(), p), owner=owner)

            return GraphMemory(memory, f"stored `{name}` memory", name, save)
    return None


def rebuild_graph_memory(host: MemoryHost, cid: str, llm: LLM | None, *, strong: bool) -> None:
    """Replay the stored turns round by round through memory maintenance (for a conversation held
    with another method) and store the result as the first graph method's memory, so chatting with
    it continues from it. `llm` maintains the memory only with a strong endpoint (`strong`)."""
    from core.methods.dsmart.dsm_method import pack_state
    from core.methods.dsmart.memory import DynamicStructuredMemory

    memory = DynamicStructuredMemory(llm, strong=strong)
    dialogue = host.store.dialogue(cid, owner=host.owner)
    for index, group in enumerate(dialogue.rounds()):
        question = " ".join(t.text for t in group if t.role == "user")
        answer = " ".join(t.text for t in group if t.role != "user")
        memory.observe_round(question, answer, index)
    save_memory(host.store, cid, GRAPH_METHODS[0], len(dialogue), pack_state(memory.save()), owner=host.owner)
