"""KG triple retrievers for the Retrieval comparison page: `kg-bm25`, `kg-kaping`, `kg-triton`,
`kg-tritonc`. They search the knowledge graph (not the dialogue): `index` keeps the dialogue as
context (for the rewrite), `retrieve` links the query and ranks its candidate triples. `kg-tritonc`
uses the symbolic pronoun rewrite (no LLM is loaded on that page)."""

from __future__ import annotations

from core.dialogue import Dialogue, Evidence
from core.methods.kgaug.config import KGAugConfig
from core.methods.kgaug.pipeline import KGPipeline, load_knowledge, make_ranker
from core.retrieval.base import Retriever

SPECS = {"bm25": "bm25", "kaping": "kaping", "triton": "triton", "tritonc": "triton"}


class KGRetriever(Retriever):
    def __init__(self, spec: str, embedder, config: KGAugConfig) -> None:
        if spec not in SPECS:
            raise ValueError(f"unknown KG retriever kg-{spec}; known: {', '.join('kg-' + s for s in SPECS)}")
        self.name = f"kg-{spec}"
        self.label = {"bm25": "KG triples, BM25", "kaping": "KG triples, KAPING", "triton": "KG triples, Triton",
                      "tritonc": "KG triples, Triton-C (symbolic rewrite)"}[spec]
        self.config = config
        knowledge = load_knowledge(config.sources, config.linker, config.cache_dir)
        ranker = make_ranker(SPECS[spec], embedder, config.relevance_model, config.quantize, config.triton_model)
        rewriter = knowledge.symbolic_rewriter() if spec == "tritonc" else None
        self.pipeline = KGPipeline(knowledge, ranker, config.candidates, rewriter)
        self.context: list[tuple[str, str]] = []
        self.last = None  # the last KGRetrieval, for display

    def index(self, dialogue: Dialogue) -> None:
        turns = dialogue.turns()[-self.config.history_turns:]
        self.context = [("assistant" if t.role == "assistant" else "user", t.text) for t in turns]

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        self.last = self.pipeline.run(self.context, query, k)
        return self.last.evidence(self.pipeline.knowledge.kg)

    def settings(self) -> dict:
        return {"ranker": self.pipeline.ranker.name, "rewrite": "symbolic" if self.pipeline.rewriter else "none",
                "max_candidates": self.config.candidates.max_candidates}


def make_kg(spec: str, context) -> KGRetriever:
    config = context.options.get("kg") or KGAugConfig()
    return KGRetriever(spec, context.embedder, config)
