"""`dsm`: chat with the Dynamic Structured Memory serialised in the prompt (the paper's "w/o RT"
ablation). The memory part (`DsmMemoryMixin`) pairs turns into rounds and maintains the graph in
the background; the Reasoning-Tree method reuses it and replaces only `respond`."""

from __future__ import annotations

from rdflib import RDF, Graph

from core.dialogue import USER, Dialogue, Evidence, Reply, Turn
from core.llm.prompts import render_prompt
from core.methods.dsmart.config import DSMConfig, DsmMethodConfig
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.vocab import label_of
from core.methods.method import Method, Stopwatch, chat_prompt, recent_turns

STATE_VERSION = b"DSM1"


class DsmMemoryMixin:
    """Memory maintenance shared by `dsm` and `dsmart`: needs `self.tools`, `self.observed` and a
    `memory_config()`; provides `observe`, `wait`, `save_state`, `load_state` and `self.memory`."""

    keeps_memory_graph = True  # the Memory graph page draws `self.memory`
    memory: DynamicStructuredMemory
    _pending_user: Turn | None

    def memory_config(self) -> DSMConfig:
        return self.config.memory

    def init_memory(self) -> None:
        self.memory = DynamicStructuredMemory(self.tools.llm, strong=self.tools.strong, config=self.memory_config(),
                                              spacy_model=self.tools.spacy_model, embedder=self.tools.embedder)
        self._pending_user = None
        self._rounds = 0

    def observe(self, turn: Turn) -> None:
        """A user turn waits for its reply; the pair (q_t, r_t) is one maintenance round."""
        self.observed += 1
        if turn.role == USER:
            if self._pending_user is not None:  # two user turns in a row: the first had no reply
                self._submit(self._pending_user.text, "")
            self._pending_user = turn
            return
        question = self._pending_user.text if self._pending_user is not None else ""
        self._pending_user = None
        self._submit(question, turn.text)

    def _submit(self, question: str, answer: str) -> None:
        index = self._rounds
        self._rounds += 1
        if self.memory_config().background:
            self.memory.submit_round(question, answer, index)
        else:
            self.memory.observe_round(question, answer, index)

    def flush(self) -> None:
        """Maintain a trailing user turn that never got a reply (end of a benchmark dialogue)."""
        if self._pending_user is not None:
            turn, self._pending_user = self._pending_user, None
            self._submit(turn.text, "")

    def wait(self) -> None:
        self.memory.wait()

    def save_state(self) -> bytes | None:
        return pack_state(self.memory.save(), self._pending_user.text if self._pending_user is not None else "")

    def load_state(self, data: bytes, observed: int) -> None:
        pending, memory = split_state(data)
        self.memory.load(memory)
        self._pending_user = Turn(USER, pending) if pending else None
        self._rounds = len(self.memory.history)
        self.observed = observed


def pack_state(memory: bytes, pending: str = "") -> bytes:
    """Method state: header, the user turn still waiting for its reply, the memory's bytes."""
    text = pending.encode("utf-8")
    return STATE_VERSION + len(text).to_bytes(4, "little") + text + memory


def split_state(data: bytes) -> tuple[str, bytes]:
    """(pending user text, memory bytes) of what `save_state` wrote."""
    if not data.startswith(STATE_VERSION):
        raise ValueError("not a saved D-SMART memory (unknown header)")
    n = int.from_bytes(data[4:8], "little")
    return data[8 : 8 + n].decode("utf-8"), data[8 + n :]


def memory_from_state(data: bytes, **kwargs) -> DynamicStructuredMemory:
    """A read-only view of a stored method state (the Memory Graph page, without a method)."""
    return DynamicStructuredMemory.from_bytes(split_state(data)[1], **kwargs)


def memory_lines(graph: Graph, limit: int) -> list[str]:
    """Facts as 'subject | relation | object' lines with human labels (types of minted classes
    read 'is a'); when over `limit`, the facts about the user come first."""
    lines = []
    for s, p, o in sorted(graph):
        if not is_fact((s, p, o)):
            continue
        relation = "is a" if p == RDF.type else label_of(graph, p)
        lines.append(f"{label_of(graph, s)} | {relation} | {label_of(graph, o)}")
    user_first = sorted(lines, key=lambda line: not line.startswith("user |"))
    return user_first[:max(limit, 0)]  # a negative limit would slice from the end


class DsmMethod(DsmMemoryMixin, Method):
    name = "dsm"
    label = "D-SMART memory (w/o RT)"
    description = ("An OWL knowledge graph of the dialogue with conflict pruning, serialised whole into the "
                   "prompt (the paper's ablation without the Reasoning Tree).")

    def __init__(self, tools, config: DsmMethodConfig | None = None) -> None:
        super().__init__(tools, config)
        self.init_memory()

    @classmethod
    def default_config(cls) -> DsmMethodConfig:
        return DsmMethodConfig()

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        """The memory's facts (no ranking: this ablation puts the whole DSM in the prompt)."""
        graph = self.memory.graph
        return [Evidence(text=line, score=1.0, source="dsm", kind="triple")
                for line in memory_lines(graph, k)]

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        cfg, gen = self.config, self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        with watch("read_memory"):
            graph = self.memory.graph  # the last finished snapshot: never half-merged
            lines = memory_lines(graph, cfg.max_memory_facts)
        with watch("build_prompt"):
            system = render_prompt("dsmart_answer", memory="\n".join(lines) or "(empty)")
            messages = chat_prompt(system, recent_turns(dialogue, cfg.recent_turns), query, gen.max_history_chars)
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        evidence = [Evidence(text=line, score=1.0, source="dsm", kind="triple") for line in lines]
        return self._reply(text, watch, calls0, messages, evidence)


__all__ = ["DsmMemoryMixin", "DsmMethod", "memory_from_state", "memory_lines", "pack_state", "split_state"]
