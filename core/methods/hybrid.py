"""`hybrid-<level>`: BM25 and dense retrieval fused over the same chunks (turns, rounds or
sessions), no sentence graph: the baseline that shows what SGMem's graph adds over fusion alone.

Each chunk is scored by cosine similarity of its embedding (as `rag-*`) and by BM25 over its
words (bm25s, Lucene idf), the two fused with core.retrieval.fusion (settings chosen on the dev
split, docs/retrieval.md).
"""

from __future__ import annotations

import numpy as np

from core.dialogue import Dialogue, Evidence
from core.resources import Embedder
from core.retrieval.base import LEVEL_LETTER, ChunkLevel, Retriever, check_level, dialogue_chunks
from core.retrieval.fusion import FusionSettings, fuse, top_ids
from core.retrieval.sparse import SparseIndex

# For an embedder without its own calibration (core.methods.sgmem.calibration): MiniLM's dev choice.
HYBRID_CHUNK_FUSION = FusionSettings("convex", dense_weight=0.5)


class HybridChunkRetriever(Retriever):
    def __init__(self, embedder: Embedder, level: ChunkLevel = "turn", fusion: FusionSettings = HYBRID_CHUNK_FUSION) -> None:
        self.level = check_level(level)
        self.embedder = embedder
        self.fusion = fusion
        self.name = f"hybrid-{LEVEL_LETTER[level]}"
        self.label = f"Hybrid BM25 + dense ({level}s)"
        self.chunks = []
        self.vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self.sparse = SparseIndex()

    def settings(self) -> dict:
        return {"chunk_level": self.level, "fusion": self.fusion.describe(), "sparse": "bm25s lucene k1=1.5 b=0.75"}

    def index(self, dialogue: Dialogue) -> None:
        self.chunks = dialogue_chunks(dialogue, self.level)
        texts = [c.text for c in self.chunks]
        self.vectors = self.embedder.encode(texts) if texts else np.zeros((0, self.embedder.dim), dtype=np.float32)
        self.sparse = SparseIndex()
        self.sparse.add(texts)
        self.sparse.scores("")  # build now, not at the first query
        self.embedder.warm()

    def nbytes(self) -> int:
        return int(self.vectors.nbytes + self.sparse.nbytes())

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        if not self.chunks or k <= 0:
            return []
        q = self.embedder.encode([query])[0]
        fused = fuse(np.einsum("ij,j->i", self.vectors, q.astype(np.float32)), self.sparse.scores(query), self.fusion)
        return [self.chunks[i].evidence(float(fused[i])) for i in top_ids(fused, k, positive_only=False)]


def make_hybrid(spec: str, context) -> HybridChunkRetriever:
    from core.retrieval import level_spec

    level, memory = level_spec(spec)
    if memory:
        raise ValueError(f"hybrid ranks dialogue chunks only; drop {memory!r} from 'hybrid-{spec}'")
    fusion = context.options.get("hybrid", HYBRID_CHUNK_FUSION)  # one setting, or a dict level -> setting
    if isinstance(fusion, dict):
        fusion = fusion.get(level, HYBRID_CHUNK_FUSION)
    return HybridChunkRetriever(context.need_embedder(), level, fusion)
