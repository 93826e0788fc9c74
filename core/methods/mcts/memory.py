"""MCTS as a memory retriever (`mcts-t`, `mcts-r`, `mcts-s`): the same two-phase search walks a
dialogue's own sentences through shared concepts, and the sentences it selects map to their
turn, round or session chunks, so it is measured on the retrieval benchmarks beside RAG, BM25
and SGMem at the same K (and so the same token budget).

The dialogue's sentences are the knowledge base: split like SGMem's (pysbd), embedded as
"Speaker: sentence", concepts from spaCy, node groups by k-means with 8 concepts per group (ours:
a conversation has hundreds of concepts, not tens of thousands). There is no reasoner (the
question is the goal: r = C). Chunks are ranked by the order the search selected their sentences
(chosen paths first, then visited nodes by critic value); when the search reached fewer than K
chunks, the rest are filled by dense similarity (the chunk's best sentence cosine) and marked
`via = "dense fill"` in their meta.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.dialogue import Dialogue, Evidence
from core.methods.mcts.config import KBSettings, MCTSConfig
from core.methods.mcts.kb import KnowledgeBase, assemble, ensure_groups
from core.methods.mcts.retriever import KnowledgeSearch, MCTSResult
from core.resources import Embedder
from core.retrieval.base import LEVEL_LETTER, ChunkLevel, ChunkTracker, Retriever, check_level

MEMORY_DEFAULTS = MCTSConfig(use_reasoner=False, kb=KBSettings(concepts_per_group=8))


class MCTSMemoryRetriever(Retriever):
    def __init__(self, embedder: Embedder, level: ChunkLevel = "turn", config: MCTSConfig = MEMORY_DEFAULTS,
                 nlp=None) -> None:
        self.level = check_level(level)
        self.embedder = embedder
        self.config = replace(config, use_reasoner=False)
        self.nlp = nlp
        self.name = f"mcts-{LEVEL_LETTER[level]}"
        self.label = f"MCTS ({level}s)"
        self.kb: KnowledgeBase | None = None
        self.search: KnowledgeSearch | None = None
        self.last: MCTSResult | None = None

    def settings(self) -> dict:
        s = self.config.search
        return {"chunk_level": self.level, "horizon": s.horizon, "candidates": s.candidates, "per_action": s.per_action,
                "c_puct": s.c_puct, "simulations": s.simulations, "bridging": self.config.use_bridging,
                "concepts_per_group": self.config.kb.concepts_per_group, "fill": "dense"}

    def index(self, dialogue: Dialogue) -> None:
        from core.methods.sgmem.retriever import sentences_of

        if self.nlp is None:
            from core.resources import load_spacy

            self.nlp = load_spacy()
        tracker = ChunkTracker()
        texts, embed, chunk_of = [], [], []
        for turn in dialogue.turns():
            ids = tracker.add(turn)
            for sentence in sentences_of(turn.text):
                texts.append(sentence)
                embed.append(f"{turn.speaker or turn.role.capitalize()}: {sentence}")
                chunk_of.append(ids[self.level])
        self.tracker, self.chunk_of = tracker, chunk_of
        self.kb, self.search = None, None
        if not texts:
            return
        self.kb = assemble(texts, None, None, self.embedder, self.nlp, self.config.kb, embed_texts=embed)
        ensure_groups(self.kb, self.config.kb)
        self.search = KnowledgeSearch(self.kb, self.embedder, self.config, self.nlp)

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        if self.search is None or k <= 0 or not query.strip():
            return []
        result = self.search.run([query], None, k=len(self.kb))
        self.last = result
        out: dict[str, Evidence] = {}
        for e in result.knowledge:
            cid = self.chunk_of[e.meta["sentence_id"]]
            if cid not in out and len(out) < k:
                out[cid] = self.tracker.chunk(self.level, cid).evidence(e.score, via="mcts", sentence=e.text,
                                                                           sentence_id=e.meta["sentence_id"])
        if len(out) < k:
            self._dense_fill(query, out, k)
        return list(out.values())

    def _dense_fill(self, query: str, out: dict[str, Evidence], k: int) -> None:
        sims = self.kb.vectors @ self.embedder.encode([query])[0]
        best: dict[str, float] = {}
        for sid in np.argsort(-sims, kind="stable"):
            cid = self.chunk_of[int(sid)]
            if cid not in out and cid not in best:
                best[cid] = float(sims[sid])
                if len(out) + len(best) >= k:
                    break
        for cid, score in best.items():
            out[cid] = self.tracker.chunk(self.level, cid).evidence(score, via="dense fill")


def make_mcts(spec: str, context) -> MCTSMemoryRetriever:
    """`mcts-<level>`; settings from context.options["mcts"] (default MEMORY_DEFAULTS)."""
    from core.retrieval import level_spec

    level, extra = level_spec(spec)
    if extra:
        raise ValueError(f"MCTS ranks dialogue chunks only; drop {extra!r} from 'mcts-{spec}'")
    return MCTSMemoryRetriever(context.need_embedder(), level, context.options.get("mcts", MEMORY_DEFAULTS))
