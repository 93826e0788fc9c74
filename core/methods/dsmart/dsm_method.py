"""`dsm`: chat with the Dynamic Structured Memory serialised in the prompt (the paper's "w/o RT"
ablation). The memory part (`DsmMemory`, held by every `DsmBacked` method) pairs turns into rounds
and maintains the graph in the background; the Reasoning-Tree method holds the same part and
replaces only `respond`."""

from __future__ import annotations

from collections.abc import Sequence

from rdflib import RDF, Graph

from core.dialogue import EVIDENCE_SENTENCE, USER, Dialogue, Evidence, Reply, Turn
from core.llm.prompts import render_prompt
from core.methods.dsmart.config import DSMConfig, DsmMethodConfig
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.recall import Recalled, SentenceRanker, memory_text, plain_text, shown_already, sourced_facts
from core.methods.dsmart.vocab import label_of
from core.methods.layout import asks_what_was_told, conversation_window, layout_prompt, memory_message, window_messages
from core.methods.method import Method, Stopwatch
from core.methods.render import chat_system

STATE_VERSION = b"DSM1"


class DsmMemory:
    """The DSM part of a method (`dsm`, `dsmart`): pairs turns into rounds (q_t, r_t), maintains the
    graph (in the background worker when configured), persists it. Held by `DsmBacked`, not
    inherited: the methods compose it with their own way of answering."""

    def __init__(self, tools, config: DSMConfig) -> None:
        self.config = config
        self.memory = DynamicStructuredMemory(tools.llm, strong=tools.strong, config=config,
                                              spacy_model=tools.spacy_model, embedder=tools.embedder)
        self._pending_user: Turn | None = None
        self._rounds = 0

    def observe(self, turn: Turn) -> None:
        """A user turn waits for its reply; the pair (q_t, r_t) is one maintenance round, dated by
        the user's turn."""
        if turn.role == USER:
            if self._pending_user is not None:  # two user turns in a row: the first had no reply
                self._submit(self._pending_user, "")
            self._pending_user = turn
            return
        user, self._pending_user = self._pending_user, None
        self._submit(user, turn.text, turn.date)

    def _submit(self, user: Turn | None, answer: str, date: str = "") -> None:
        question = user.text if user is not None else ""
        date = (user.date if user is not None else "") or date
        index = self._rounds
        self._rounds += 1
        if self.config.background:
            self.memory.submit_round(question, answer, index, date)
        else:
            self.memory.observe_round(question, answer, index, date)

    def flush(self) -> None:
        """Maintain a trailing user turn that never got a reply (end of a benchmark dialogue)."""
        if self._pending_user is not None:
            turn, self._pending_user = self._pending_user, None
            self._submit(turn, "")

    def wait(self) -> None:
        self.memory.wait()

    def save_state(self) -> bytes:
        return pack_state(self.memory.save(), self._pending_user.text if self._pending_user is not None else "")

    def load_state(self, data: bytes) -> None:
        pending, memory = split_state(data)
        self.memory.load(memory)
        self._pending_user = Turn(USER, pending) if pending else None
        self._rounds = len(self.memory.history)


class DsmBacked(Method):
    """A method whose memory is the DSM: turns go to its `DsmMemory` part; the answer prompt reads
    the facts as their source sentences, ranked for the question (recall.py)."""

    keeps_memory_graph = True  # the Memory graph page draws `self.memory`

    def __init__(self, tools, config=None) -> None:
        super().__init__(tools, config)
        self.ranker = SentenceRanker(tools.recall_model)
        self.init_memory()

    def init_memory(self) -> None:
        """A fresh, empty memory part under the current `config.memory` (a benchmark that changes
        the config after construction calls it again)."""
        self.dsm = DsmMemory(self.tools, self.config.memory)

    @property
    def memory(self) -> DynamicStructuredMemory:
        return self.dsm.memory

    def observe(self, turn: Turn) -> None:
        self.observed += 1
        self.dsm.observe(turn)

    def flush(self) -> None:
        self.dsm.flush()

    def wait(self) -> None:
        self.dsm.wait()

    def save_state(self) -> bytes | None:
        return self.dsm.save_state()

    def load_state(self, data: bytes, observed: int) -> None:
        self.dsm.load_state(data)
        self.observed = observed

    def recall(self, query: str, graph: Graph, triples, priors=None, prior_weight: float = 0.0,
               shown: Sequence[str] = ()) -> list[Recalled]:
        """`triples` as their source sentences, the most relevant to `query` first, within the
        configured token budget; a sentence the prompt's recent turns (`shown`) already hold is not
        repeated."""
        said = plain_text(shown)
        facts = [f for f in sourced_facts(graph, self.memory.history, triples) if not shown_already(f, said)]
        return self.ranker.rank(query, facts, graph, self.config.recall.budget_tokens, priors, prior_weight)


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


class DsmMethod(DsmBacked):
    name = "dsm"
    label = "D-SMART memory (w/o RT)"
    description = ("An OWL knowledge graph of the dialogue with conflict pruning; the answer prompt shows the "
                   "facts as the sentences they came from, the most relevant first (the paper's ablation "
                   "without the Reasoning Tree).")

    @classmethod
    def default_config(cls) -> DsmMethodConfig:
        return DsmMethodConfig()

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        """The memory's facts as source sentences, the most relevant to `query` first."""
        graph = self.memory.graph
        lines = self.recall(query, graph, [t for t in graph if is_fact(t)])
        return [Evidence(text=line.text, score=line.score, source="dsm", kind=EVIDENCE_SENTENCE) for line in lines[:k]]

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        gen = self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        with watch("read_memory"):
            graph = self.memory.graph  # the last finished snapshot: never half-merged
            facts = [t for t in graph if is_fact(t)]
        turns = dialogue.turns()
        with watch("rank"):  # the turns the conversation window shows are not repeated as memory lines (but to a question of what was told)
            shown = [] if asks_what_was_told(turns, query) else \
                [m.content for m in window_messages(conversation_window(turns, gen.max_history_chars))]
            lines = self.recall(query, graph, facts, shown=shown)
        with watch("build_prompt"):
            messages = layout_prompt(chat_system(gen.reply_sentences), turns, query, gen.max_history_chars,
                                     memory_message(memory_text(lines), header=render_prompt("dsmart_answer")))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        evidence = [Evidence(text=line.text, score=line.score, source="dsm", kind=EVIDENCE_SENTENCE) for line in lines]
        return self._reply(text, watch, calls0, messages, evidence)


__all__ = ["DsmBacked", "DsmMemory", "DsmMethod", "memory_from_state", "memory_lines", "pack_state", "split_state"]
