"""The tree methods: `dsmart` (the full D-SMART: Dynamic Structured Memory + Reasoning Tree) and
`rt` (the paper's "w/o DSM" ablation: the same tree over an empty graph, so it can only THINK and
ANSWER).

A reply runs the tree over the last finished memory graph G_{t-1}; the answer prompt shows the
facts the tree reached as their source sentences, ranked for the question (recall.py). Memory
maintenance for the round runs after the reply, in the DSM's background worker (the `DsmMemory`
part every `DsmBacked` method holds), off the critical path. The whole tree is returned as a
`Trace(kind="tree")` of plain data for the UI. The search and the answer are a `TreeResponder`
both methods hold, given the toolkit, the config and the method's callbacks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from rdflib import Graph

from core.config import GenerationSettings
from core.dialogue import (
    EVIDENCE_FACT,
    EVIDENCE_SENTENCE,
    EVIDENCE_TRIPLE,
    TRACE_TREE,
    Dialogue,
    Evidence,
    Reply,
    Trace,
    TraceNode,
)
from core.llm import cancel as stopping
from core.llm.base import Message
from core.llm.cost import totals
from core.methods.dsmart.config import DSMConfig, RecallConfig
from core.methods.dsmart.dsm_method import DsmBacked
from core.methods.dsmart.reasoning_tree import ReasoningTree, RTConfig, SearchResult, State, path_to
from core.methods.dsmart.recall import Recalled, memory_text, render, sourced_facts
from core.methods.dsmart.rt_graph import EntityLinker, MemoryView
from core.methods.dsmart.rt_llm import TextVectors, TreeModel, TurnsInAnswer
from core.methods.layout import asks_what_was_told, conversation_window, window_messages
from core.methods.method import Method, Progress, Stopwatch, Toolkit
from core.paths import MissingResource


@dataclass(frozen=True)
class DsmartConfig:
    memory: DSMConfig = DSMConfig()
    tree: RTConfig = RTConfig()
    recall: RecallConfig = RecallConfig()  # the reached facts' source sentences in the answer prompt
    # Where the answer prompt shows the conversation (the window every chat method shows,
    # core.methods.layout): as chat turns before the Appendix E prompt, so the server's cache keeps
    # them between replies (issue 53), with the question asked again just before "Answer:". As a
    # section of the prompt ("prompt", the layout of issue 40) it is computed again every reply;
    # "none" is Appendix E as written: a follow-up ("shorter, please") loses what it follows
    # (docs/dsm-memory.md)
    turns_in_answer: TurnsInAnswer = "messages"
    generation: GenerationSettings = GenerationSettings()


@dataclass(frozen=True)
class RtOnlyConfig:
    # Over an empty graph the tree can only THINK and ANSWER; the embedding scorer cannot value a
    # thought, so `rt` asks the LLM (the choice policy and digit value for weak models).
    tree: RTConfig = RTConfig(scorer="llm")
    # the turns are all `rt` has: it keeps them as chat turns (not measured with the section)
    turns_in_answer: TurnsInAnswer = "messages"
    generation: GenerationSettings = GenerationSettings()


TreeConfig = DsmartConfig | RtOnlyConfig


@dataclass
class TreeResponder:
    """A reply by Reasoning-Tree search over a graph: the part of `dsmart` and `rt` that answers,
    held by each (not inherited, so neither method has two project bases) and given what it reads."""

    tools: Toolkit
    # read at every reply, not once: a benchmark or a test replaces a method's config after
    # construction (`method.config = replace(...)`), and the tree must search under the new one
    config: Callable[[], TreeConfig]
    method: str  # the name its replies carry
    progress: Callable[[Progress], None]  # what the reply is doing, for a page that watches it
    write: Callable[[list[Message], float, int], str]  # the answer's text, streamed where one watches
    # the evidence of the chosen state; None: its facts (`tree_evidence`). `dsmart` gives its own,
    # which adds who said each fact, from its memory
    evidence: Callable[[SearchResult, MemoryView], list[Evidence]] | None = None
    _linker: EntityLinker | None = field(default=None, init=False, repr=False)
    # the search's embeddings of fact lines and labels, kept from reply to reply (the graph changes little)
    _vectors: TextVectors = field(default_factory=TextVectors, init=False, repr=False)

    def reply(self, dialogue: Dialogue, query: str, graph: Graph, memory_note: dict | None = None,
              recall: Callable[[SearchResult, MemoryView, list[str]], list[Recalled]] | None = None) -> Reply:
        """The tree's reply; `recall(result, view, shown)` turns what the search reached into the
        lines the answer prompt shows, `shown` the recent turns that prompt already holds (default:
        the chosen state's triples)."""
        cfg = self.config()
        gen, llm = cfg.generation, self.tools.llm
        watch = Stopwatch()
        calls0 = llm.calls
        with watch("read_memory"):
            view = MemoryView(graph)
        with watch("link"):
            links = self.linker().link(query, view, cfg.tree.max_linked) if view.facts else []
        model = TreeModel(llm, view, cfg.tree, strong=self.tools.strong,
                          context=window_messages(conversation_window(dialogue.turns(), gen.max_history_chars)),
                          generation=gen, embedder=self.tools.embedder, turns_in_answer=cfg.turns_in_answer,
                          vectors=self._vectors)
        started = watch.started
        self.progress(Progress("tree", _search_line(view, links, cfg.tree), 0.0))
        tree = ReasoningTree(view, model, cfg.tree,
                             on_depth=lambda states, beam, depth: self.progress(
                                 tree_progress(states, beam, depth, view, cfg.tree, started)))
        try:
            with stopping.deadline(cfg.tree.budget_s):
                result = tree.search(query, links)
            if not result.best.trajectory and (fallback := tree.linked_state(result.states, links)) is not None:
                result.states.append(fallback)
                result.best = fallback
            self.progress(tree_progress(result.states, [result.best], -1, view, cfg.tree, started, result.stop_reason))
            lines = None
            if recall is not None:
                with watch("rank"):
                    lines = recall(result, view, model.shown_turns())
            memory = memory_text(lines) if lines is not None else None
            text, messages = model.respond(query, result.best, write=self.write, memory=memory)
        finally:
            llm.clear_prompt_cache()  # the search's cached prompt states are not needed again
        info = {"memory_facts": len(view.facts), "notes": model.notes, **(memory_note or {})}
        # what the answer prompt showed (its memory lines), then the facts of the chosen state: what
        # the tree used, each with the words it came from (a short chat's lines may all be left out
        # of the prompt as its recent turns hold them, and the tree still used the facts)
        shown = () if lines is None else tuple(Evidence(line.text, line.score, "dsm", EVIDENCE_SENTENCE) for line in lines)
        return Reply(
            text=text,
            method=self.method,
            model=llm.name,
            evidence=shown + tuple((self.evidence or self.tree_evidence)(result, view)),
            trace=tree_trace(result, view, messages, cfg.tree, query, info, answer=text),
            timings={**watch.timings, **model.timings},
            llm_calls=llm.calls - calls0,
        )

    def warm(self, graph: Graph) -> int:
        """Embed, between replies, the fact lines and entity labels of `graph` that the next search
        and link would otherwise embed before the prompt (issue 53: most of `dsmart`'s time before
        its first word was embedding texts of an unchanged graph). At most WARM_TEXTS a call (a
        round adds a few dozen; a replayed haystack is left to its searches), and a graph of more
        texts than half the store holds is left to the search. Returns how many were embedded."""
        tree = self.config().tree
        if self.tools.embedder is None:
            return 0
        view = MemoryView(graph)
        if not view.facts:
            return 0
        lines = []  # what the search's embedding prior and values read (TreeModel.embedded)
        if tree.scorer == "embedding" or (tree.scorer == "auto" and not self.tools.strong):
            read = list(dict.fromkeys([*(view.fact_line(t) for t in view.facts), *(view.label(n) for n in view.entities())]))
            lines = self._vectors.missing(read) if len(read) <= self._vectors.capacity // 2 else []
        self.linker().lemmatise_labels(view)
        labels = self.linker().missing_labels(view)
        texts = list(dict.fromkeys(lines + labels))[:WARM_TEXTS]
        if not texts:
            return 0
        vectors = dict(zip(texts, self.tools.embedder.encode(texts)))
        for text in lines:
            if text in vectors:
                self._vectors.put(text, vectors[text])
        labels = [label for label in labels if label in vectors]
        self.linker().keep(labels, [vectors[label] for label in labels])
        return len(texts)

    def tree_evidence(self, result: SearchResult, view: MemoryView) -> list[Evidence]:
        """The facts of the chosen state, valued by it (a method with a memory adds their sources)."""
        return [Evidence(view.fact_line(t), float(result.best.value), "reasoning tree", EVIDENCE_FACT) for t in result.best.facts]

    def linker(self) -> EntityLinker:
        """The entity linker, made on first use (spaCy loads then) under the config of that time."""
        if self._linker is None:
            lemmatise, phrases = _spacy_helpers(self.tools.spacy_model)
            self._linker = EntityLinker(lemmatise, self.tools.embedder, self.config().tree.link_threshold, phrases)
        return self._linker


WARM_TEXTS = 128  # texts `TreeResponder.warm` embeds at most per call (~0.3 s on one CPU thread)


def _spacy_helpers(model: str):
    """(lemmatise, noun phrases) from spaCy; plain-text fall-backs when the model is missing."""
    from core.resources import load_spacy

    try:
        nlp = load_spacy(model)
    except MissingResource:
        return None, None
    return (lambda text: " ".join(t.lemma_ for t in nlp(text)),
            lambda text: [c.text for c in nlp(text).noun_chunks])


class DsmartMethod(DsmBacked):
    name = "dsmart"
    label = "D-SMART (memory graph + reasoning tree)"
    description = ("Beam search over graph actions (expand entity, find path, think, answer) on the dialogue's "
                   "OWL memory graph; the memory is updated after each reply, in the background.")

    def __init__(self, tools: Toolkit, config: DsmartConfig | None = None) -> None:
        super().__init__(tools, config)
        self.responder = TreeResponder(tools, lambda: self.config, self.name, self._progress, self._write,
                                       self.tree_evidence)

    @classmethod
    def default_config(cls) -> DsmartConfig:
        return DsmartConfig()

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        """Facts around the entities the query links to, strongest link first."""
        view = MemoryView(self.memory.graph)
        out: list[Evidence] = []
        for link in self.responder.linker().link(query, view, self.config.tree.max_linked):
            for t in view.expand(link.node, self.config.tree.expand_hops, self.config.tree.max_action_facts):
                line = view.fact_line(t)
                if all(e.text != line for e in out):
                    out.append(Evidence(line, link.score, view.label(link.node), EVIDENCE_TRIPLE, {"link": link.how}))
        return out[:k]

    def tree_evidence(self, result: SearchResult, view: MemoryView) -> list[Evidence]:
        """The facts of the chosen state with the words each came from, who said them and when."""
        facts = result.best.facts
        sourced = {f.triple: f for f in sourced_facts(view.graph, self.memory.history, facts)}
        out = []
        for triple in facts:
            found = sourced.get(triple)
            meta = {} if found is None else {"said": render(found), "said by": found.speaker,
                                             "round": None if found.turn_index is None else found.turn_index + 1}
            out.append(Evidence(view.fact_line(triple), float(result.best.value), "reasoning tree", EVIDENCE_FACT, meta))
        return out

    def wait(self) -> None:
        """The memory round done, and what the next search embeds of the new graph embedded (while
        the person reads the reply, not before the next one's first word)."""
        super().wait()
        self.responder.warm(self.memory.graph)

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        history = self.memory.history
        note = {"memory_rounds": len(history)}
        if history:
            note["memory_maintenance_s"] = round(history[-1].timings.get("maintenance", 0.0), 4)
            note["memory_maintenance_cost"] = totals(history[-1].cost)
        told = asks_what_was_told(dialogue.turns(), query)  # its memory lines are shown whole (core.methods.layout)
        return self.responder.reply(dialogue, query, self.memory.graph, note,
                                    lambda result, view, shown: self._recall_reached(query, result, view, () if told else shown))

    def _recall_reached(self, query: str, result: SearchResult, view: MemoryView, shown=()) -> list[Recalled]:
        """The facts of every state the search explored (or the whole graph, `recall.pool`), each
        valued by the best state that reached it, as ranked source sentences (not those the recent
        turns `shown` already hold)."""
        priors: dict = {}
        for state in result.states:
            for triple in state.facts:
                priors[triple] = max(priors.get(triple, 0.0), float(state.value))
        pool = view.facts if self.config.recall.pool == "graph" else list(priors)
        return self.recall(query, view.graph, pool, priors, self.config.recall.tree_weight, shown)


class RtMethod(Method):
    name = "rt"
    label = "Reasoning tree only (w/o DSM)"
    description = "The D-SMART reasoning tree over an empty memory graph: it can only think and answer."

    def __init__(self, tools: Toolkit, config: RtOnlyConfig | None = None) -> None:
        super().__init__(tools, config)
        self.responder = TreeResponder(tools, lambda: self.config, self.name, self._progress, self._write)

    @classmethod
    def default_config(cls) -> RtOnlyConfig:
        return RtOnlyConfig()

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        return self.responder.reply(dialogue, query, Graph())


def _search_line(view: MemoryView, links, config: RTConfig) -> str:
    linked = ", ".join(view.label(l.node) for l in links) or "none"
    return (f"Searching the memory graph ({len(view.facts)} facts; linked entities: {linked}); "
            f"beam {config.beam_width}, depth at most {config.max_depth}, budget {config.budget_s:g} s")


def tree_progress(states: list[State], beam: list[State], depth: int, view: MemoryView, config: RTConfig,
                  started: float, stop_reason: str = "") -> Progress:
    """The tree so far as lines a person reads: one per state (depth, action, value, new facts),
    beam states marked; `depth` -1 = the search ended (`stop_reason`)."""
    on_beam = {s.id for s in beam}
    lines = []
    for s in states[1:]:
        step = s.last
        mark = "*" if s.id in on_beam else " "
        what = f"{step.action.render(view)}"
        if step.text:
            what += f": {step.text[:80]}"
        lines.append(f"{mark} d{s.depth} {what}  (value {s.value:.2f})")
    elapsed = time.perf_counter() - started
    if depth < 0:
        text = f"Tree done in {elapsed:.1f} s ({stop_reason}); writing the answer"
        fraction = 1.0
    else:
        text = f"Depth {depth} of {config.max_depth}: {len(states) - 1} node(s), {elapsed:.1f} s"
        fraction = min(1.0, depth / config.max_depth)
    return Progress("tree", text, fraction, tuple(lines))


def tree_trace(result: SearchResult, view: MemoryView, messages, config: RTConfig, query: str, info: dict,
               answer: str = "") -> Trace:
    """The whole tree as plain data: every state, its action, value, depth, subgraph and
    trajectory; the path to the chosen state marked; `answer` (the reply) on a chosen ANSWER
    state whose answer was written only after the search."""
    chosen = {s.id for s in path_to(result.states, result.best)}
    beam = {s.id for s in result.final_beam}
    nodes = [_node(s, view, s.id in chosen, s.id in beam, s.id == result.best.id, answer) for s in result.states]
    root_detail = dict(nodes[0].detail)
    root_detail.update({
        "query": query,
        "links": [{"entity": view.label(l.node), "score": round(l.score, 3), "how": l.how} for l in result.links],
        "stop_reason": result.stop_reason,
        "expansions": result.expansions,
        "batches": result.batches,
        "config": asdict(config),
        **info,
    })
    nodes[0] = TraceNode(nodes[0].id, nodes[0].label, None, nodes[0].value, 0, True, root_detail)
    return Trace(TRACE_TREE, tuple(nodes), tuple({"role": m.role, "content": m.content} for m in messages))


def _node(state: State, view: MemoryView, chosen: bool, in_beam: bool, best: bool, answer: str) -> TraceNode:
    step = state.last
    if best and state.terminal and not step.text and answer:
        step = replace(step, text=answer)
    parent_facts = len(state.facts) - (step.added if step else 0)
    detail = {
        "action": step.action.kind if step else "ROOT",
        "entities": [view.label(e) for e in step.action.entities] if step else [],
        "text": (step.text or _UNWRITTEN.get(step.action.kind, "")) if step else "",
        "prior": round(step.prior, 4) if step else 1.0,
        "value": round(state.value, 4),
        "value_source": state.value_source,
        "terminal": state.terminal,
        "in_final_beam": in_beam,
        "best": best,
        "subgraph": [view.fact_line(t) for t in state.facts],
        "new_facts": [view.fact_line(t) for t in state.facts[parent_facts:]],
        "trajectory": [_step_line(s, view) for s in state.trajectory],
    }
    label = step.action.render(view) if step else "ROOT"
    return TraceNode(state.id, label, state.parent, round(state.value, 4), state.depth, chosen, detail)


_UNWRITTEN = {"THINK": "(thought not written: lazy thoughts are written when their state is expanded)",
              "ANSWER": "(answer not drafted: with lazy drafts only the chosen state's answer is written)"}


def _step_line(step, view: MemoryView) -> str:
    action = step.action.render(view)
    return f"{action}: {step.text}" if step.text else action


__all__ = ["DsmartConfig", "DsmartMethod", "RtMethod", "RtOnlyConfig", "TreeResponder", "tree_trace"]
