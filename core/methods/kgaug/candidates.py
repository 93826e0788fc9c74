"""Candidate triples: every triple within one hop of the linked entities, two hops when one hop
gives fewer than `min_one_hop`, at most `max_candidates`.

When the cap cuts (a genre or a language touches thousands of triples), which triples stay must
not depend on the query (that is the rankers' job) and must keep every kind of fact represented:
each entity's triples are grouped by (relation, direction), each group ordered by the degree of
the triple's other end (well-known items first), and the groups are dealt out round-robin; the
linked entities are then dealt out round-robin in turn. Two-hop triples come after all one-hop
ones, walked from the one-hop neighbours in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Sequence

import numpy as np

from core.methods.kgaug.graph import KnowledgeGraph
from core.methods.kgaug.triples import Triple


@dataclass(frozen=True)
class CandidateSettings:
    min_one_hop: int = 20  # fewer one-hop triples than this: walk a second hop
    max_candidates: int = 48  # bounds the relevance model's work per query (see docs/kgaug.md)
    max_hub_degree: int = 500  # second-hop walks skip neighbours this connected (genres, languages)


@dataclass(frozen=True)
class Candidate:
    triple_id: int
    triple: Triple
    hop: int  # 1 or 2
    via: str  # the entity it was reached from
    other_degree: int = 0  # graph degree of the triple's other end (seen from `via`)


def ordered_edges(kg: KnowledgeGraph, entity: int) -> np.ndarray:
    """The entity's triples, (relation, direction) groups dealt out round-robin, each group by
    the other end's degree (highest first)."""
    ids = kg.edges(entity)
    if len(ids) == 0:
        return ids
    outgoing = kg.heads[ids] == entity
    others = np.where(outgoing, kg.tails[ids], kg.heads[ids])
    group = kg.rels[ids].astype(np.int64) * 2 + outgoing
    # rank of each triple inside its group, by the other end's degree (descending), id as tie-break
    order = np.lexsort((ids, -kg.degree[others], group))
    sorted_group = group[order]
    starts = np.r_[0, np.flatnonzero(sorted_group[1:] != sorted_group[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    # deal out: all rank-0 triples (groups by size, largest first), then rank 1, ...
    sizes = np.diff(np.r_[starts, len(order)])
    group_size = np.repeat(sizes, sizes)
    deal = np.lexsort((sorted_group, -group_size, rank))
    return ids[order][deal]


def gather(kg: KnowledgeGraph, seeds: Sequence[int], settings: CandidateSettings = CandidateSettings()) -> list[Candidate]:
    """Candidates around `seeds` (entity ids, most important first)."""
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    chosen: dict[int, tuple[int, int]] = {}  # triple id -> (hop, via entity)
    cap = settings.max_candidates

    def take(lists: list[np.ndarray], vias: list[int], hop: int) -> None:
        tagged = [[(int(t), v) for t in ids] for ids, v in zip(lists, vias)]
        for layer in zip_longest(*tagged):
            for item in layer:
                if item is None:
                    continue
                tid, via = item
                if tid not in chosen:
                    if len(chosen) >= cap:
                        return
                    chosen[tid] = (hop, via)

    take([ordered_edges(kg, s) for s in seeds], seeds, 1)
    if len(chosen) < settings.min_one_hop:
        seed_set = set(seeds)
        neighbours = []
        for tid, (_, via) in list(chosen.items()):
            other = kg.other_end(tid, via)
            if other not in seed_set and kg.degree[other] <= settings.max_hub_degree:
                neighbours.append(other)
        neighbours = list(dict.fromkeys(neighbours))
        take([ordered_edges(kg, n) for n in neighbours], neighbours, 2)
    return [Candidate(tid, kg.triple(tid), hop, kg.entities[via], int(kg.degree[kg.other_end(tid, via)]))
            for tid, (hop, via) in chosen.items()]
