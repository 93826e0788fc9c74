"""The Reasoning Tree (RT): beam search over graph actions, Algorithm 2 of the D-SMART paper.

A state S_i = (G~_i, Z_i, v_i, d_i): the local subgraph gathered so far, the trajectory of
actions, the value the LLM gave it, and its depth. Actions: EXPAND_ENTITY [e] and FIND_PATH [a] [b]
run deterministically against the DSM (`rt_graph.MemoryView`); THINK adds an intermediate thought;
ANSWER is terminal. Per depth, every non-terminal state on the beam proposes actions (the policy),
each action makes a child state, the value function scores the children, and the beam keeps the
top B of children plus the terminal states carried over (line 15: terminal states are kept). The
search stops at D_max, when the beam is all terminal, or when M_exp expansions are spent; the
answer comes from the highest-valued state.

Speed: all policy requests of a depth go to the model as one batch, all value requests as one
batch, all THINK texts as one batched generation (`rt_llm.TreeModel`); with a weak model a
thought is written only when its state is expanded (`RTConfig.thoughts`), and the prompts of a
state extend its parent's, so the local backend's prompt cache runs only each new step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Literal

from core.llm.cancel import DeadlinePassed
from core.methods.dsmart.rt_graph import Link, MemoryView

EXPAND, PATH, THINK, ANSWER = "EXPAND_ENTITY", "FIND_PATH", "THINK", "ANSWER"
NO_PATH, NO_FACTS = "no path found", "no facts"  # what a graph step that found nothing notes


@dataclass(frozen=True)
class RTConfig:
    """The paper's search settings (Appendix B: B=3, S=3, D_max=5, M_exp=12) and ours.

    policy: "choice" lists the legal actions as lettered options and reads the model's next-token
    distribution over the letters (weak models: one short request per state); "enumerated" scores
    every legal action's text by likelihood (a request per token of the actions' token trie);
    "prompted" parses the Appendix E prompt's free text (strong models); "auto" is prompted for strong
    models, choice for weak ones.
    value_scale: "digit" asks for a score 0-9 and reads the next-token distribution over the ten
    digits (one request a state); "decimal" scores the eleven "0.0" ... "1.0" (five requests: their
    token trie); "auto" is digit. Strong models write the Appendix E evaluation either way.
    scorer: "embedding" takes the policy prior and the state values from sentence-embedding similarity
    to the question (no LLM request during the search: a prior by how close each action's entities
    are to the question, a value by how close the state's best facts are; THINK, which needs the LLM
    to write a thought, is left out); "llm" asks the LLM as `policy` and `value_scale` say; "auto" is
    llm for strong models and embedding for weak ones (when an embedder is given). On 2 CPU cores
    one LLM request of the 0.5B model costs ~0.5 s, so an LLM-scored search of one depth already
    doubles a reply; docs/speed.md measures both on MT-Bench-101.
    budget_s: wall-clock seconds the search may take (0 = none). When it is spent the search stops
    and the reply comes from the best state valued so far; the trace says so. The paper sets no
    budget: its M_exp bounds expansions, not time, and on 2 CPU cores a search of M_exp=12 can take
    a minute (issue: a reply must show within seconds).
    answer_drafts: "eager" writes each ANSWER node's answer when it is made and scores it with the
    answer-evaluation prompt (the paper); "lazy" scores the decision to answer with the state prompt
    and writes only the winning answer (one generation instead of one per ANSWER node); "auto" is
    eager for strong models, lazy for weak ones.
    thoughts: "eager" writes each THINK node's thought when it is made; "lazy" writes it when the
    node is expanded (its children read it), so THINK nodes the beam drops cost nothing; "auto" is
    eager for strong models (their policy usually writes the thought itself), lazy for weak ones.
    """

    beam_width: int = 3  # B
    samples: int = 3  # S: actions sampled per expanded state (duplicates merged)
    max_depth: int = 5  # D_max
    max_expansions: int = 12  # M_exp: states expanded in the whole search
    expand_hops: int = 1  # n of the n-hop neighbourhood
    max_paths: int = 3  # shortest paths FIND_PATH adds
    max_action_facts: int = 24  # facts one graph action may add
    max_prompt_facts: int = 40  # facts in the Appendix E and response prompts (newest last)
    step_facts: int = 8  # facts listed under each graph step in the search's step log (the state keeps all)
    max_action_entities: int = 6  # entities the enumerated policy names (linked ones first)
    max_linked: int = 5  # query-linked entities
    link_threshold: float = 0.55  # cosine for embedding links
    policy: Literal["auto", "choice", "enumerated", "prompted"] = "auto"
    value_scale: Literal["auto", "digit", "decimal"] = "auto"
    scorer: Literal["auto", "llm", "embedding"] = "auto"
    budget_s: float = 1.5
    answer_drafts: Literal["auto", "eager", "lazy"] = "auto"
    thoughts: Literal["auto", "eager", "lazy"] = "auto"
    # "all_terminal": Algorithm 2 (stop when every beam state is terminal); "best_terminal": also stop
    # when the highest-valued beam state is terminal (heuristic pruning, the paper's future work).
    early_stop: Literal["all_terminal", "best_terminal"] = "all_terminal"
    policy_temperature: float = 0.8  # the paper: 0.8 outside state evaluation
    value_temperature: float = 0.0  # the paper: 0.0 for state evaluation
    think_max_tokens: int = 32  # a thought is one sentence: generation also stops at the first line break
    seed: int = 0


@dataclass(frozen=True)
class Action:
    kind: str  # EXPAND_ENTITY | FIND_PATH | THINK | ANSWER
    entities: tuple = ()  # graph nodes (rdflib terms)
    text: str = ""  # a THINK's thought when the policy wrote it (strong models)

    @property
    def key(self) -> tuple:
        """Identity for merging duplicate proposals (a thought's wording does not count)."""
        return (self.kind, self.entities)

    def render(self, view: MemoryView) -> str:
        return self.kind + "".join(f" [{view.label(e)}]" for e in self.entities)


@dataclass(frozen=True)
class Step:
    action: Action
    text: str = ""  # thought, answer, or what a graph action found
    prior: float = 1.0  # the policy's probability of this action
    added: int = 0  # facts a graph action added to the subgraph


@dataclass(frozen=True)
class State:
    id: str
    parent: str | None
    facts: tuple = ()  # G~_i, in the order gathered (no duplicates)
    trajectory: tuple[Step, ...] = ()
    value: float = 1.0
    depth: int = 0
    value_source: str = "root"

    @property
    def terminal(self) -> bool:
        return bool(self.trajectory) and self.trajectory[-1].action.kind == ANSWER

    @property
    def last(self) -> Step | None:
        return self.trajectory[-1] if self.trajectory else None

    def done(self, kind: str, entities: tuple) -> bool:
        return any(s.action.kind == kind and s.action.entities == entities for s in self.trajectory)


@dataclass
class SearchResult:
    best: State
    states: list[State]  # every state created, root first
    final_beam: list[State]
    links: list[Link]
    expansions: int
    stop_reason: str
    timings: dict[str, float] = field(default_factory=dict)
    batches: int = 0  # batched model invocations


class ReasoningTree:
    """One search per query. `model` is an `rt_llm.TreeModel` (policy, value, THINK texts).
    `on_depth(states, beam, depth)` is called after each depth (the page draws the tree as it grows)."""

    def __init__(self, view: MemoryView, model, config: RTConfig,
                 on_depth: Callable[[list[State], list[State], int], None] | None = None) -> None:
        self.view = view
        self.model = model
        self.config = config
        self.on_depth = on_depth
        self._ids = 0

    def search(self, query: str, links: list[Link]) -> SearchResult:
        """Algorithm 2. The caller may run it under a deadline (`core.llm.cancel.deadline`): a depth
        whose LLM requests run past it is dropped whole, and the search ends with the beam it had."""
        cfg = self.config
        root = State("n0", None)
        states, beam = [root], [root]
        expansions, stop = 0, f"max depth {cfg.max_depth}"
        for depth in range(cfg.max_depth):
            open_states = [s for s in beam if not s.terminal]
            budget = max(0, cfg.max_expansions - expansions)
            expanded, waiting = open_states[:budget], open_states[budget:]
            try:
                expanded, children = self._expand(query, expanded, links)
            except DeadlinePassed:
                stop = f"time budget {cfg.budget_s:g} s spent at depth {depth + 1}"
                break
            spent = getattr(self.model, "budget_spent", False)
            if spent:  # the children valued in time stay; the others were never scored
                children = [c for c in children if c.value_source != "unvalued"]
                if not children:  # none in time: the beam stays as it was
                    stop = f"time budget {cfg.budget_s:g} s spent at depth {depth + 1} (no child valued in time)"
                    break
            expansions += len(expanded)
            index = {s.id: i for i, s in enumerate(states)}
            for parent in expanded:  # with its thought, when it was written on expansion
                states[index[parent.id]] = parent
            states += children
            pool = [s for s in beam if s.terminal] + waiting + children
            pool.sort(key=lambda s: -s.value)  # stable: ties keep carried-over states first
            beam = pool[: cfg.beam_width]
            if self.on_depth is not None:
                self.on_depth(states, beam, depth + 1)
            if spent:
                stop = f"time budget {cfg.budget_s:g} s spent at depth {depth + 1} ({len(children)} child(ren) valued in time)"
                break
            if all(s.terminal for s in beam):
                stop = "beam all terminal"
                break
            if cfg.early_stop == "best_terminal" and beam[0].terminal:
                stop = "best state terminal"
                break
            if expansions >= cfg.max_expansions:
                stop = f"M_exp={cfg.max_expansions} expansions spent"
                break
        best = max(beam, key=lambda s: s.value)
        return SearchResult(best, states, beam, links, expansions, stop, self.model.timings, self.model.batches)

    def linked_state(self, states: list[State], links: list[Link]) -> State | None:
        """When the search ran out of time before any state was valued: the root expanded on the
        query's linked entities, graph actions only (no LLM), so the answer still reads the facts
        the query points at. None without links."""
        state = states[0]
        for link in links[:2]:
            if self.view.has_entity(link.node):
                state = self._apply(state, Action(EXPAND, (link.node,)), 1.0)
        if state is states[0]:
            return None
        return replace(state, value_source="budget fallback: linked entities expanded")

    def _expand(self, query: str, parents: list[State], links: list[Link]) -> tuple[list[State], list[State]]:
        """(the parents, their thoughts written if lazy; their valued children)."""
        if not parents:
            return parents, []
        parents = self.model.thoughts_before_expanding(query, parents)
        proposals = self.model.propose(query, parents, [self.legal_actions(p, links) for p in parents])
        t0 = time.perf_counter()
        children = []
        for parent, actions in zip(parents, proposals):
            for action, prior in actions:
                children.append(self._apply(parent, action, prior))
        self.model.add_time("graph_actions", time.perf_counter() - t0)
        children = self.model.write_thoughts(query, children)
        return parents, self.model.evaluate(query, children)

    def _apply(self, parent: State, action: Action, prior: float) -> State:
        """S_j from S_i and a_ij; graph actions query the DSM, THINK/ANSWER texts come later."""
        cfg, view = self.config, self.view
        facts, note = parent.facts, action.text
        if action.kind in (EXPAND, PATH):
            found = (view.expand(action.entities[0], cfg.expand_hops, cfg.max_action_facts) if action.kind == EXPAND
                     else view.find_paths(*action.entities, max_paths=cfg.max_paths, limit=cfg.max_action_facts))
            new = [t for t in found if t not in facts]
            facts = facts + tuple(new)
            note = f"{len(new)} new fact(s)" if found else (NO_PATH if action.kind == PATH else NO_FACTS)
        self._ids += 1
        step = Step(action, note, prior, len(facts) - len(parent.facts))
        return State(f"n{self._ids}", parent.id, facts, parent.trajectory + (step,), 0.0, parent.depth + 1)

    def legal_actions(self, state: State, links: list[Link]) -> list[Action]:
        """Every action the enumerated policy may take in `state`: graph actions only on entities
        that are in the graph (query-linked ones, then those in the local subgraph), never one
        already taken on this path; THINK, unless the state's last step was a THINK (a second
        thought in a row would see the very same facts: the pruning that keeps a weak model from
        thinking in circles); ANSWER."""
        entities = self.action_entities(state, links)
        actions = [Action(EXPAND, (e,)) for e in entities if not state.done(EXPAND, (e,))]
        for i, a in enumerate(entities):
            for b in entities[i + 1 :]:
                if not state.done(PATH, (a, b)):
                    actions.append(Action(PATH, (a, b)))
        think = [] if (state.last is not None and state.last.action.kind == THINK) or not getattr(self.model, "may_think", True) else [Action(THINK)]
        return actions + think + [Action(ANSWER)]

    def action_entities(self, state: State, links: list[Link]) -> list:
        seen: list = []
        for node in [l.node for l in links] + [n for s, _, o in state.facts for n in (s, o)]:
            if self.view.has_entity(node) and node not in seen:
                seen.append(node)
        return seen[: self.config.max_action_entities]


def path_to(states: list[State], target: State) -> list[State]:
    """Root-to-target states."""
    by_id = {s.id: s for s in states}
    out, node = [], target
    while node is not None:
        out.append(node)
        node = by_id.get(node.parent) if node.parent else None
    return out[::-1]


def with_value(state: State, value: float, source: str) -> State:
    return replace(state, value=float(min(1.0, max(0.0, value))), value_source=source)
