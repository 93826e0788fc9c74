"""The DSM as the Reasoning Tree sees it: facts, a networkx view for paths, and entity linking.

`MemoryView` wraps one finished rdflib graph (G_{t-1}). Its nodes are the individuals and classes
that dialogue facts connect; literals (numbers, dates, names) hang off their subject and are never
nodes, so two facts that share the value "3" are not thereby connected. The graph actions of the
tree are deterministic functions of this view:

- EXPAND_ENTITY e: the facts within `hops` of e, each edge with the literal facts of the node it
  reaches (a count's amount comes with 'user | add | postcards');
- FIND_PATH a b: the facts along the shortest paths between a and b (type edges cost more, so a
  path through a real relation wins over one through a shared class such as Person).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import networkx as nx
import numpy as np
from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal

from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.vocab import BASE, label_of

Triple = tuple
_VOCABULARY = (str(OWL), str(RDF), str(RDFS), str(XSD), BASE)  # fixed terms: never linked or expanded
_TYPE_EDGE_WEIGHT = 2.0
_NORMAL = re.compile(r"[^a-z0-9]+")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "you're"})


def normal(text: str) -> str:
    """Lower-case words joined by single spaces: the form labels and queries are matched in."""
    return _NORMAL.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class Link:
    """A query-to-graph entity link: the node, how sure (0..1), and how it was found."""

    node: object
    score: float
    how: str  # label | lemma | pronoun | embedding


class MemoryView:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.facts: list[Triple] = sorted(t for t in graph if is_fact(t) and self._usable(t))
        self.nx = nx.Graph()
        self.literal_facts: dict[object, list[Triple]] = {}
        for s, p, o in self.facts:
            if isinstance(o, Literal):
                self.literal_facts.setdefault(s, []).append((s, p, o))
                self.nx.add_node(s)
                continue
            weight = _TYPE_EDGE_WEIGHT if p == RDF.type else 1.0
            if self.nx.has_edge(s, o):
                self.nx[s][o]["triples"].append((s, p, o))
                self.nx[s][o]["weight"] = min(self.nx[s][o]["weight"], weight)
            else:
                self.nx.add_edge(s, o, triples=[(s, p, o)], weight=weight)
        self._labels: dict[object, str] = {}

    @staticmethod
    def _usable(triple: Triple) -> bool:
        s, _, o = triple
        return not _is_vocabulary(s) and not (not isinstance(o, Literal) and _is_vocabulary(o))

    # -- names -----------------------------------------------------------------------------------
    def label(self, term) -> str:
        if term not in self._labels:
            self._labels[term] = label_of(self.graph, term)
        return self._labels[term]

    def relation_label(self, predicate) -> str:
        return "is a" if predicate == RDF.type else self.label(predicate)

    def fact_line(self, triple: Triple) -> str:
        s, p, o = triple
        return f"{self.label(s)} | {self.relation_label(p)} | {self.label(o)}"

    def entities(self) -> list:
        """Nodes an action may name: individuals and minted classes that facts connect."""
        return sorted(self.nx.nodes, key=lambda n: (self.label(n).lower(), str(n)))

    def has_entity(self, node) -> bool:
        return node in self.nx

    def find_entity(self, name: str):
        """The node whose label (or IRI) matches `name` (case and punctuation ignored), else None."""
        key = normal(name)
        for node in self.entities():
            if normal(self.label(node)) == key or str(node) == name:
                return node
        return None

    # -- graph actions ---------------------------------------------------------------------------
    def expand(self, entity, hops: int = 1, limit: int = 24) -> list[Triple]:
        """Facts within `hops` of `entity`, nearest first, at most `limit`."""
        if entity not in self.nx:
            return []
        distance = nx.single_source_shortest_path_length(self.nx, entity, cutoff=max(0, hops - 1))
        found: dict[Triple, tuple] = {}  # triple -> sort key: hop, the edge it hangs on, edge first
        for node, d in distance.items():
            for t in self.literal_facts.get(node, []):
                found.setdefault(t, (d, "", self.fact_line(t)))
            for neighbour in self.nx.neighbors(node):
                for t in self.nx[node][neighbour]["triples"]:
                    line = self.fact_line(t)
                    found.setdefault(t, (d, line, ""))
                    # the values of the node the edge reaches come with it: 'user | add | postcards'
                    # says nothing without 'postcards | amount | 25' (values are leaves, never nodes)
                    if t[1] != RDF.type:
                        for value in self.literal_facts.get(neighbour, []):
                            found.setdefault(value, (d, line, self.fact_line(value)))
        ordered = sorted(found, key=lambda t: found[t])
        return ordered[:limit]

    def find_paths(self, a, b, max_paths: int = 3, limit: int = 24) -> list[Triple]:
        """Facts along up to `max_paths` cheapest paths from a to b ([] when unconnected)."""
        if a not in self.nx or b not in self.nx or a == b:
            return []
        try:
            paths = nx.all_shortest_paths(self.nx, a, b, weight="weight")
            out: list[Triple] = []
            for n, path in enumerate(paths):
                if n >= max_paths:
                    break
                for u, v in zip(path, path[1:]):
                    out += [t for t in self.nx[u][v]["triples"] if t not in out]
        except nx.NetworkXNoPath:
            return []
        return out[:limit]


def _is_vocabulary(term) -> bool:
    return str(term).startswith(_VOCABULARY)


class EntityLinker:
    """Links a query to graph entities by label, by lemma, by pronoun (I/my -> the user) and by
    embedding similarity. `lemmatise(text) -> text` (spaCy) and `embedder` are optional; label
    vectors and lemmas are cached across calls, keyed by label text (a spaCy call per entity label
    on every message was most of a `dsmart` reply's time before its first word)."""

    def __init__(self, lemmatise: Callable[[str], str] | None = None, embedder=None, threshold: float = 0.55,
                 phrases: Callable[[str], Sequence[str]] | None = None) -> None:
        self.lemmatise = lemmatise
        self.embedder = embedder
        self.threshold = threshold
        self.phrases = phrases
        self._vectors: dict[str, np.ndarray] = {}
        self._lemmas: dict[str, str] = {}

    def link(self, query: str, view: MemoryView, limit: int = 5) -> list[Link]:
        nodes = view.entities()
        if not nodes or not query.strip():
            return []
        best: dict[object, Link] = {}
        for link in self._lexical(query, view, nodes) + self._embedded(query, view, nodes):
            if link.node not in best or link.score > best[link.node].score:
                best[link.node] = link
        ranked = sorted(best.values(), key=lambda l: (-l.score, view.label(l.node).lower()))
        return ranked[:limit]

    def _lexical(self, query: str, view: MemoryView, nodes: Iterable) -> list[Link]:
        text = f" {normal(query)} "
        lemma_text = f" {normal(self._lemma(normal(query)))} "
        words = set(text.split())
        out = []
        for node in nodes:
            label = normal(view.label(node))
            if not label:
                continue
            if f" {label} " in text:
                out.append(Link(node, 1.0, "label"))
            elif f" {self._label_lemma(label)} " in lemma_text:
                out.append(Link(node, 0.9, "lemma"))
            elif label == "user" and words & FIRST_PERSON:
                out.append(Link(node, 0.8, "pronoun"))
            elif label == "assistant" and words & SECOND_PERSON:
                out.append(Link(node, 0.8, "pronoun"))
        return out

    def _label_lemma(self, label: str) -> str:
        """normal(lemma) of an entity label, computed once per label."""
        found = self._lemmas.get(label)
        if found is None:
            found = self._lemmas[label] = normal(self._lemma(label))
        return found

    def _lemma(self, label: str) -> str:
        if self.lemmatise is not None:
            return self.lemmatise(label)
        return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in label.split())

    def missing_labels(self, view: MemoryView) -> list[str]:
        """The entity labels of `view` not embedded yet (`TreeResponder.warm` embeds them between replies)."""
        return sorted({view.label(n) for n in view.entities()} - self._vectors.keys()) if self.embedder is not None else []

    def keep(self, labels: Sequence[str], vectors) -> None:
        self._vectors.update(zip(labels, vectors))

    def lemmatise_labels(self, view: MemoryView) -> None:
        """Lemmatise the labels `_lexical` will compare (a spaCy call each, once per label)."""
        for node in view.entities():
            if label := normal(view.label(node)):
                self._label_lemma(label)

    def _embedded(self, query: str, view: MemoryView, nodes: list) -> list[Link]:
        if self.embedder is None:
            return []
        phrases = list(self.phrases(query)) if self.phrases else []
        phrases = [p for p in phrases if p.strip()] or [query]
        labels = [view.label(n) for n in nodes]
        missing = sorted({l for l in labels if l not in self._vectors})
        # the new labels and the query's phrases in one batch: a call costs about what a batch does
        vectors = np.asarray(self.embedder.encode(missing + phrases))
        self.keep(missing, vectors[: len(missing)])
        label_matrix = np.stack([self._vectors[l] for l in labels])
        sims = vectors[len(missing):] @ label_matrix.T  # unit vectors: cosine similarity
        best = sims.max(axis=0)
        return [Link(n, float(s), "embedding") for n, s in zip(nodes, best) if s >= self.threshold]
