"""The knowledge graph: interned names and numpy arrays, walked through CSR adjacency.

Why arrays and not one networkx graph for everything: a networkx multigraph costs about 1 KB per
edge (a million-line triple file would need a gigabyte), while three int32 columns plus two CSR
indexes cost about 30 bytes per triple. networkx is used where graphs are small: the candidate and
evidence subgraphs (`to_networkx`), drawn in the Chat page; rdflib for export (`to_rdflib`).

Each fact is stored once, in the direction without `~` (see triples.py); `edges(entity)` returns
the triples touching an entity either way. `sources` records, per triple, which kinds of input
asserted it (bit flags), so a UI can say "from a dialogue path" or "from the item graph".
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from core.methods.kgaug.triples import Triple, canonical, clean

# source flags per triple
FROM_DIALOGUE, FROM_ITEMS, FROM_FILE = 1, 2, 4
SOURCE_NAMES = {FROM_DIALOGUE: "dialogue path", FROM_ITEMS: "item graph", FROM_FILE: "triple file"}


class GraphBuilder:
    """Collects triples from streamed sources with bounded memory: names are interned once and
    triples kept as three int32 columns; duplicates are removed at `build()`."""

    def __init__(self, max_triples: int = 5_000_000) -> None:
        self.max_triples = max_triples
        self._entities: dict[str, int] = {}
        self._relations: dict[str, int] = {}
        self._h, self._r, self._t = array("i"), array("i"), array("i")
        self._src = array("B")
        self.over_cap = 0  # triples not stored because max_triples was reached

    def entity(self, name: str) -> int:
        name = clean(name)
        idx = self._entities.get(name)
        if idx is None:
            idx = self._entities[name] = len(self._entities)
        return idx

    def _relation(self, name: str) -> int:
        idx = self._relations.get(name)
        if idx is None:
            idx = self._relations[name] = len(self._relations)
        return idx

    def add(self, head: str, relation: str, tail: str, source: int) -> bool:
        """Add one fact (a `~` relation is stored reversed); False when over the cap or empty."""
        t = canonical(head, relation, tail)
        if not t.head or not t.relation or not t.tail:
            return False
        if len(self._h) >= self.max_triples:
            self.over_cap += 1
            return False
        self._h.append(self.entity(t.head))
        self._r.append(self._relation(t.relation))
        self._t.append(self.entity(t.tail))
        self._src.append(source)
        return True

    def build(self, report: dict | None = None) -> "KnowledgeGraph":
        heads = np.frombuffer(self._h, dtype=np.int32) if len(self._h) else np.zeros(0, np.int32)
        rels = np.frombuffer(self._r, dtype=np.int32) if len(self._r) else np.zeros(0, np.int32)
        tails = np.frombuffer(self._t, dtype=np.int32) if len(self._t) else np.zeros(0, np.int32)
        src = np.frombuffer(self._src, dtype=np.uint8) if len(self._src) else np.zeros(0, np.uint8)
        n_ent, n_rel = max(1, len(self._entities)), max(1, len(self._relations))
        keys = (heads.astype(np.int64) * n_rel + rels) * n_ent + tails
        order = np.argsort(keys, kind="stable")
        keys, src = keys[order], src[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        starts = np.flatnonzero(first)
        merged = np.bitwise_or.reduceat(src, starts) if len(starts) else np.zeros(0, np.uint8)
        unique = keys[starts]
        tails_u = (unique % n_ent).astype(np.int32)
        rels_u = ((unique // n_ent) % n_rel).astype(np.int32)
        heads_u = (unique // (n_ent * n_rel)).astype(np.int32)
        entities = list(self._entities)
        relations = list(self._relations)
        info = dict(report or {})
        info.update({"stored_rows": int(len(keys)), "duplicates": int(len(keys) - len(unique)), "over_cap": self.over_cap})
        return KnowledgeGraph(entities, relations, heads_u, rels_u, tails_u, merged.astype(np.uint8), info)


@dataclass
class KnowledgeGraph:
    entities: list[str]
    relations: list[str]
    heads: np.ndarray  # int32, sorted by (head, relation, tail)
    rels: np.ndarray
    tails: np.ndarray
    sources: np.ndarray  # uint8 bit flags per triple
    report: dict = field(default_factory=dict)  # what the loaders read and skipped

    def __post_init__(self) -> None:
        n = len(self.entities)
        self._entity_index: dict[str, int] | None = None
        self.out_ptr = np.searchsorted(self.heads, np.arange(n + 1)).astype(np.int64)
        self.in_order = np.argsort(self.tails, kind="stable").astype(np.int32)
        self.in_ptr = np.searchsorted(self.tails[self.in_order], np.arange(n + 1)).astype(np.int64)
        self.degree = (np.bincount(self.heads, minlength=n) + np.bincount(self.tails, minlength=n)).astype(np.int32)

    # -- lookup ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(len(self.heads))

    @property
    def entity_index(self) -> dict[str, int]:
        if self._entity_index is None:
            self._entity_index = {name: i for i, name in enumerate(self.entities)}
        return self._entity_index

    def entity_id(self, name: str) -> int | None:
        return self.entity_index.get(clean(name))

    def triple(self, i: int) -> Triple:
        return Triple(self.entities[self.heads[i]], self.relations[self.rels[i]], self.entities[self.tails[i]])

    def triple_ids(self, triples: Iterable[Triple]) -> list[int]:
        """Ids of the given facts that are in the graph (others are left out)."""
        rel_index = {r: i for i, r in enumerate(self.relations)}
        out = []
        for t in triples:
            h, r, tail = self.entity_id(t.head), rel_index.get(t.relation), self.entity_id(t.tail)
            if h is None or r is None or tail is None:
                continue
            lo, hi = self.out_ptr[h], self.out_ptr[h + 1]
            hits = np.flatnonzero((self.rels[lo:hi] == r) & (self.tails[lo:hi] == tail))
            if len(hits):
                out.append(int(lo + hits[0]))
        return out

    def edges(self, entity: int) -> np.ndarray:
        """Ids of the triples touching `entity` as head or tail (out-edges first)."""
        out = np.arange(self.out_ptr[entity], self.out_ptr[entity + 1])
        incoming = self.in_order[self.in_ptr[entity] : self.in_ptr[entity + 1]]
        return np.concatenate([out, incoming.astype(np.int64)]) if len(incoming) else out

    def other_end(self, triple_id: int, entity: int) -> int:
        h, t = int(self.heads[triple_id]), int(self.tails[triple_id])
        return t if h == entity else h

    def source_names(self, triple_id: int) -> list[str]:
        flags = int(self.sources[triple_id])
        return [name for bit, name in SOURCE_NAMES.items() if flags & bit]

    # -- views ---------------------------------------------------------------------------------
    def to_networkx(self, triple_ids: Iterable[int] | None = None):
        """A networkx MultiDiGraph of the given triples (all when None: mind the size)."""
        import networkx as nx

        g = nx.MultiDiGraph()
        ids = range(len(self)) if triple_ids is None else triple_ids
        for i in ids:
            t = self.triple(int(i))
            g.add_edge(t.head, t.tail, key=t.relation, relation=t.relation, triple_id=int(i))
        return g

    def to_rdflib(self, triple_ids: Iterable[int] | None = None):
        """An rdflib Graph of the given triples (all when None), entities labelled with rdfs:label."""
        from core.methods.kgaug.rdf import triples_to_rdflib

        ids = range(len(self)) if triple_ids is None else triple_ids
        return triples_to_rdflib(self.triple(int(i)) for i in ids)

    def stats(self) -> dict:
        return {"triples": len(self), "entities": len(self.entities), "relations": len(self.relations),
                "entities_with_triples": int((self.degree > 0).sum())}
