"""The reasoning-aware knowledge retriever (section III): concept bridging, then reasoning-aware
retrieval inside the context sub-region, both searched with MCTS over knowledge sentences.

Phase 1, concept bridging (eq. 3). The root holds the context C and its explicit concepts N_C.
An action selects a sentence from the node group of the current marked concept (at the root, the
groups of N_C); the policy prior is a softmax over cos(k, C) + cos(k, mean N_C) of the 50 most
similar candidates, and the 5 best become children. In the new state the concept of k most
similar to C (not marked before on the path) is marked. The critic is the bridging rate of the
path's marked concepts plus lambda * WD(k, C). The context sub-region K_c is every sentence of the
groups of N_C and of the concepts marked on the chosen path (the implicit connectors).

Phase 2, reasoning-aware retrieval (eq. 4), one tree per reasoning outcome r (or r = C without
the reasoner): candidates are restricted to K_c (the whole KB without bridging), the prior is a
softmax over cos(k, C + r), and the critic is sim(r, k) + sim(C, k) + 0.1 |k| - sim(k, k_hat),
k_hat being the knowledge selected before (on the path and by earlier trees). The answer takes the
trees' chosen paths in turn (first step of every tree, then second steps, ...), then fills up
with the best-valued visited nodes, without repeats.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from core.dialogue import EVIDENCE_KNOWLEDGE, TRACE_MCTS, Evidence, Trace, TraceNode
from core.methods.mcts.concepts import doc_concepts
from core.methods.mcts.config import MCTSConfig
from core.methods.mcts.critics import (
    bridging_rate,
    bridging_value,
    length_term,
    max_similarity,
    retrieval_value,
    softmax_priors,
    wasserstein_1d,
)
from core.methods.mcts.kb import KnowledgeBase
from core.methods.mcts.reasoner import COMET_NOTE, Reasoning
from core.methods.mcts.search import MCTS, Child, Node, SearchTree
from core.resources import Embedder
from core.text import without_speaker

MAX_CONTEXT_CONCEPTS = 12
_SPEAKER = re.compile(r"^[^:\n]{1,24}:\s+", re.M)


@dataclass(frozen=True)
class MCTSResult:
    knowledge: tuple[Evidence, ...]
    reasoning: Reasoning | None
    context_concepts: tuple[str, ...]
    connectors: tuple[str, ...]
    subregion: int  # |K_c|; 0 when the whole KB is searched
    trees: tuple[SearchTree, ...]
    notes: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class _Query:
    """One search's vectors and state."""

    c: np.ndarray  # e_C
    nc: list[int]  # N_C, concept ids
    nc_mean: np.ndarray


class KnowledgeSearch:
    def __init__(self, kb: KnowledgeBase, embedder: Embedder, config: MCTSConfig = MCTSConfig(), nlp=None) -> None:
        self.kb, self.embedder, self.config = kb, embedder, config
        self.nlp = nlp
        kb.need_groups()

    # -- the whole retrieval -----------------------------------------------------------------
    def run(self, turns: Sequence[str], reasoning: Reasoning | None = None, k: int | None = None) -> MCTSResult:
        cfg, s = self.config, self.config.search
        k = k or cfg.top_k
        timings: dict[str, float] = {}
        context = "\n".join(without_speaker(t) for t in turns if t and t.strip())  # tags are not content
        if not context.strip():
            return MCTSResult((), reasoning, (), (), 0, (), ("empty context: nothing to retrieve knowledge for",), timings)
        t0 = time.perf_counter()
        outcomes = list(reasoning.selected) if (reasoning and cfg.use_reasoner) else []
        notes: list[str] = list(reasoning.notes) if reasoning else []
        if cfg.use_reasoner and reasoning is not None and not outcomes:
            notes.append("the reasoner gave no usable inference: retrieval uses the context alone")
        goals = [o.sentence for o in outcomes]
        vecs = self.embedder.encode([context] + [f"{context} {g}" for g in goals] + goals)
        e_c = vecs[0]
        nc, concept_note = self._context_concepts(context, e_c)
        if concept_note:
            notes.append(concept_note)
        nc_mean = self.kb.concept_vectors[nc].mean(axis=0) if nc else e_c
        q = _Query(e_c, nc, nc_mean / max(np.linalg.norm(nc_mean), 1e-12))
        timings["prepare"] = time.perf_counter() - t0

        budget_end = time.perf_counter() + s.max_seconds
        n_trees = (1 if cfg.use_bridging else 0) + max(1, len(goals))
        trees: list[SearchTree] = []
        allowed, connectors = None, []
        if cfg.use_bridging:
            t1 = time.perf_counter()
            tree = self._bridge(q, _deadline(budget_end, n_trees))
            trees.append(tree)
            allowed, connectors = self._subregion(q, tree)
            timings["bridge"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        selected: list[int] = []
        retrieval_trees = []
        plans = [(f"r{i + 1}", f"{o.relation}: {o.sentence}", vecs[1 + i], vecs[1 + len(goals) + i], o)
                 for i, o in enumerate(outcomes)] or [("r1", "context (no reasoner)", e_c, e_c, None)]
        for i, (name, label, q_r, e_r, outcome) in enumerate(plans):
            tree = self._retrieve(q, q_r, e_r, allowed, selected, _deadline(budget_end, n_trees - len(trees)), name, label)
            tree.meta["outcome"] = outcome
            trees.append(tree)
            retrieval_trees.append(tree)
            selected += [n.sentence for n in tree.chosen]
        timings["retrieve"] = time.perf_counter() - t2
        if time.perf_counter() > budget_end:
            notes.append(f"search stopped at its time budget ({s.max_seconds:.1f} s)")
        knowledge = self._answer(retrieval_trees, k)
        names = tuple(self.kb.concepts[c] for c in nc)
        size = int(allowed.sum()) if allowed is not None else 0
        return MCTSResult(tuple(knowledge), reasoning, names, tuple(connectors), size, tuple(trees), tuple(notes), timings)

    # -- context concepts ----------------------------------------------------------------------
    def _context_concepts(self, context: str, e_c: np.ndarray) -> tuple[list[int], str]:
        if self.nlp is None:
            from core.resources import load_spacy

            self.nlp = load_spacy()
        spoken = _SPEAKER.sub("", context)  # "Speaker:", "A:", "User:" tags are not concepts of the dialogue
        found = [self.kb.concept_id[c] for c in doc_concepts(self.nlp(spoken)) if c in self.kb.concept_id]
        if found:
            found = list(dict.fromkeys(found))
            if len(found) > MAX_CONTEXT_CONCEPTS:  # keep the ones closest to the context
                sims = self.kb.concept_vectors[found] @ e_c
                found = [found[i] for i in sorted(np.argsort(-sims)[:MAX_CONTEXT_CONCEPTS])]
            return found, ""
        sims = self.kb.concept_vectors @ e_c
        nearest = [int(i) for i in np.argsort(-sims)[:3]]
        names = ", ".join(self.kb.concepts[i] for i in nearest)
        return nearest, f"no concept of the context is in the knowledge base; starting from the nearest concepts by embedding: {names}"

    # -- phase 1 -----------------------------------------------------------------------------
    def _bridge(self, q: _Query, deadline: float) -> SearchTree:
        s, kb = self.config.search, self.kb
        policy = q.c + q.nc_mean  # cos(k, C) + cos(k, mean N_C)

        def expand(node: Node) -> list[Child]:
            if node.depth == 0:
                pool = np.unique(np.concatenate([kb.group_sentences(c) for c in q.nc])) if q.nc else np.zeros(0, np.int32)
            elif node.concept is None:
                return []
            else:
                pool = kb.group_sentences(node.concept)
            return self._children(node, pool, policy, q.c, exclude=set(node.sentences()))

        def evaluate(node: Node) -> float:
            marked = [n.concept for n in node.path() if n.concept is not None and n.sentence is not None]
            rate = bridging_rate(q.nc, kb.need_groups().group_concepts(marked))
            wd = wasserstein_1d(kb.vectors[node.sentence], q.c)
            node.info.update(rate=rate, wd=wd)
            return bridging_value(rate, wd, self.config.critic.wd_lambda)

        search = MCTS(expand, evaluate, s.c_puct, s.horizon, prefix="b")
        return search.run(None, s.simulations, deadline, "bridge", "concept bridging")

    def _subregion(self, q: _Query, tree: SearchTree) -> tuple[np.ndarray, list[str]]:
        marked = [n.concept for n in tree.chosen if n.concept is not None]
        concepts = list(dict.fromkeys(q.nc + marked))
        allowed = np.zeros(len(self.kb), dtype=bool)
        for c in concepts:
            allowed[self.kb.group_sentences(c)] = True
        allowed[[n.sentence for n in tree.chosen]] = True
        connectors = [self.kb.concepts[c] for c in marked if c not in q.nc]
        return allowed, list(dict.fromkeys(connectors))

    # -- phase 2 -----------------------------------------------------------------------------
    def _retrieve(self, q: _Query, q_r: np.ndarray, e_r: np.ndarray, allowed: np.ndarray | None, selected: list[int],
                  deadline: float, name: str, label: str) -> SearchTree:
        s, c, kb = self.config.search, self.config.critic, self.kb
        taken = set(selected)

        def expand(node: Node) -> list[Child]:
            exclude = taken | set(node.sentences())
            if node.depth == 0:
                if allowed is not None:
                    pool = np.flatnonzero(allowed)
                else:  # without bridging: the whole KB, through the FAISS index
                    ids, _ = kb.search(q_r[None, :], s.candidates + len(exclude))
                    pool = ids[0][ids[0] >= 0]
            elif node.concept is None:
                return []
            else:
                pool = kb.group_sentences(node.concept)
                if allowed is not None:
                    pool = pool[allowed[pool]]
            return self._children(node, pool, q_r, q_r, exclude)

        def evaluate(node: Node) -> float:
            v = kb.vectors[node.sentence]
            before = [n.sentence for n in node.path()[1:-1]] + selected
            sim_prev = max_similarity(v, kb.vectors[before]) if before else 0.0
            sim_rk, sim_ck = float(v @ e_r), float(v @ q.c)
            length = length_term(kb.texts[node.sentence], c.length_norm_words)
            node.info.update(sim_r=sim_rk, sim_c=sim_ck, length=length, sim_prev=sim_prev)
            return retrieval_value(sim_rk, sim_ck, length, sim_prev, c.length_weight)

        search = MCTS(expand, evaluate, s.c_puct, s.horizon, prefix=f"{name}.")
        return search.run(None, s.simulations, deadline, name, label)

    # -- shared --------------------------------------------------------------------------------
    def _children(self, node: Node, pool: np.ndarray, policy: np.ndarray, mark_by: np.ndarray, exclude: set[int]) -> list[Child]:
        """The 50 candidates of `pool` most similar to `policy`, priors by softmax, the best 5 as children."""
        s = self.config.search
        if exclude and len(pool):
            pool = pool[~np.isin(pool, np.fromiter(exclude, dtype=np.int64))]
        if not len(pool):
            return []
        sims = self.kb.vectors[pool] @ policy
        top = np.argsort(-sims, kind="stable")[: s.candidates]
        priors = softmax_priors(sims[top], s.prior_temperature)
        marked = {n.concept for n in node.path() if n.concept is not None}
        out = []
        for j in range(min(s.per_action, len(top))):
            sid = int(pool[top[j]])
            out.append(Child(sid, self._mark(sid, mark_by, marked), float(priors[j])))
        return out

    def _mark(self, sentence: int, target: np.ndarray, marked: set[int]) -> int | None:
        """The concept of `sentence` most similar to `target`, not marked before on the path."""
        concepts = [int(c) for c in self.kb.sentence_concepts(sentence) if int(c) not in marked]
        if not concepts:
            return None
        sims = self.kb.concept_vectors[concepts] @ target
        return concepts[int(np.argmax(sims))]

    def _answer(self, trees: list[SearchTree], k: int) -> list[Evidence]:
        chosen: dict[int, tuple[Node, SearchTree, str]] = {}
        depth = 0
        while len(chosen) < k and any(depth < len(t.chosen) for t in trees):
            for t in trees:
                if depth < len(t.chosen) and t.chosen[depth].sentence not in chosen and len(chosen) < k:
                    chosen[t.chosen[depth].sentence] = (t.chosen[depth], t, "chosen path")
            depth += 1
        rest = sorted(((n, t) for t in trees for n in t.visited() if n.sentence is not None and n.value is not None),
                      key=lambda nt: -nt[0].value)
        for n, t in rest:
            if len(chosen) >= k:
                break
            chosen.setdefault(n.sentence, (n, t, "best visited"))
        return [self._evidence(n, t, via) for n, t, via in chosen.values()]

    def _evidence(self, node: Node, tree: SearchTree, via: str) -> Evidence:
        outcome = tree.meta.get("outcome")
        sid = node.sentence
        return Evidence(
            text=self.kb.texts[sid], score=float(node.value), source=f"kb:{sid}", kind=EVIDENCE_KNOWLEDGE,
            meta={"sentence_id": sid, "term": self.kb.terms[sid], "tree": tree.name, "node": node.id, "via": via,
                  "visits": node.visits, "concept": self.kb.concepts[node.concept] if node.concept is not None else "",
                  "relation": outcome.relation if outcome else "", "inference": outcome.sentence if outcome else ""},
        )


def _deadline(budget_end: float, trees_left: int) -> float:
    now = time.perf_counter()
    return now + max(0.0, budget_end - now) / max(1, trees_left)


# -- the result as trace data for the UI ------------------------------------------------------------
def result_trace(result: MCTSResult, kb: KnowledgeBase, prompt: tuple = (), phase: str = "searched") -> Trace:
    """Visited nodes of every tree under one context root. Node value = mean backed-up value Q;
    detail holds visits, prior, the critic's own value and its parts, and the root the knowledge
    chosen. `phase`: "context" for the partial trace of a search with the context alone (shown
    while the reasoner runs), "reasoned" once the inferences are there (before their search),
    "searched" once the knowledge is chosen."""
    root_detail = {
        "phase": phase,
        "knowledge": [{"text": e.text, "score": round(float(e.score), 4), "tree": e.meta.get("tree", "")}
                      for e in result.knowledge],
        "context_concepts": list(result.context_concepts), "connectors": list(result.connectors),
        "subregion": result.subregion, "notes": list(result.notes), "timings": {k: round(v, 4) for k, v in result.timings.items()},
        "reasoning": result.reasoning.as_dict() if result.reasoning else None, "comet_note": COMET_NOTE,
        "trees": [{"name": t.name, "label": t.label, "simulations": t.simulations, "stop_reason": t.stop_reason,
                   "seconds": round(t.seconds, 4), "nodes": len(t.nodes()), "visited": len(t.visited())} for t in result.trees],
    }
    nodes = [TraceNode("context", "context", None, None, 0, True, root_detail)]
    for t in result.trees:
        chosen = {n.id for n in t.chosen}
        for n in t.visited():
            nid = f"{t.name}:{n.id}"
            if n.parent is None:
                nodes.append(TraceNode(nid, t.label, "context", round(n.q, 4), 1, True,
                                       {"tree": t.name, "phase": "bridge" if t.name == "bridge" else "retrieve",
                                        "visits": n.visits, "root": True}))
                continue
            detail = {"tree": t.name, "phase": "bridge" if t.name == "bridge" else "retrieve", "visits": n.visits,
                      "prior": round(n.prior, 4), "critic": None if n.value is None else round(n.value, 4),
                      "sentence_id": n.sentence, "text": kb.texts[n.sentence],
                      "concept": kb.concepts[n.concept] if n.concept is not None else "",
                      **{key: round(float(v), 6) for key, v in n.info.items()}}
            nodes.append(TraceNode(nid, kb.texts[n.sentence], f"{t.name}:{n.parent.id}", round(n.q, 4), n.depth + 1,
                                   n.id in chosen, detail))
    return Trace(TRACE_MCTS, tuple(nodes), prompt)
