"""Chunk-RAG baselines of the SGMem paper (section 4.3): RAG-T, RAG-R, RAG-S retrieve the top-K
turns, rounds or sessions by cosine similarity of their embeddings; the +F / +MFI variants add
the top-K facts / summaries, facts and insights. BM25 ranks the same chunks lexically (rank-bm25,
Okapi BM25 with its default k1=1.5, b=0.75).

Note on sessions: the embedder reads at most 256 word pieces, so a session chunk is embedded
from its opening only (as in the paper, which used the same all-MiniLM-L6-v2).
"""

from __future__ import annotations

import numpy as np

from core.dialogue import Dialogue, Evidence
from core.methods.sgmem.config import check_memory
from core.methods.sgmem.memory import MemoryProvider, MemoryTables
from core.resources import Embedder
from core.retrieval import level_spec
from core.retrieval.base import LEVEL_LETTER, ChunkLevel, Retriever, check_level, dialogue_chunks
from core.text import words
from core.vectors import VectorIndex


class ChunkRAGRetriever(Retriever):
    def __init__(self, embedder: Embedder, level: ChunkLevel = "turn", memory: str = "",
                 memory_provider: MemoryProvider | None = None) -> None:
        self.level = check_level(level)
        self.memory_kinds = check_memory(memory)
        if self.memory_kinds and memory_provider is None:
            raise ValueError(f"RAG with generated memory {memory!r} needs a memory provider (an LLM)")
        self.embedder = embedder
        self.memory_provider = memory_provider
        self.name = f"rag-{LEVEL_LETTER[level]}{self.memory_kinds}"
        self.label = f"RAG ({level}s{' + ' + self.memory_kinds.upper() if self.memory_kinds else ''})"
        self.chunks = []
        self.table = VectorIndex(embedder.dim)
        self.memory = MemoryTables(embedder)

    def settings(self) -> dict:
        return {"chunk_level": self.level, "memory": self.memory_kinds, "similarity": "cosine"}

    def index(self, dialogue: Dialogue) -> None:
        self.chunks = dialogue_chunks(dialogue, self.level)
        self.table = VectorIndex(self.embedder.dim)
        if self.chunks:
            self.table.add(self.embedder.encode([c.text for c in self.chunks]), list(range(len(self.chunks))))
        if self.memory_kinds:
            self.memory.build(self.memory_provider(dialogue, self.memory_kinds), self.memory_kinds)
        self.embedder.warm()  # the first query must not pay the model's cold start

    def nbytes(self) -> int:
        return len(self.table) * self.embedder.dim * 4  # a flat FAISS index holds the float32 vectors

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        q = self.embedder.encode([query])
        hits = self.table.search(q, k)[0]
        out = [self.chunks[h.item].evidence(h.score) for h in hits]
        return out + (self.memory.search(q, k) if self.memory_kinds else [])


class BM25Retriever(Retriever):
    def __init__(self, level: ChunkLevel = "turn") -> None:
        self.level = check_level(level)
        self.name = f"bm25-{LEVEL_LETTER[level]}"
        self.label = f"BM25 ({level}s)"
        self.chunks = []
        self.bm25 = None

    def settings(self) -> dict:
        return {"chunk_level": self.level, "similarity": "bm25-okapi"}

    def index(self, dialogue: Dialogue) -> None:
        from rank_bm25 import BM25Okapi

        self.chunks = dialogue_chunks(dialogue, self.level)
        corpus = [words(c.text) or ["_"] for c in self.chunks]  # BM25Okapi rejects empty documents
        self.bm25 = BM25Okapi(corpus) if corpus else None

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        if self.bm25 is None or k <= 0:
            return []
        scores = np.asarray(self.bm25.get_scores(words(query)), dtype=float)
        order = np.lexsort((np.arange(len(scores)), -scores))[:k]  # ties: the earlier chunk
        return [self.chunks[i].evidence(float(scores[i])) for i in order]


def make_rag(spec: str, context) -> ChunkRAGRetriever:
    level, memory = level_spec(spec)
    return ChunkRAGRetriever(context.need_embedder(), level, memory, context.memory_provider)


def make_bm25(spec: str, context) -> BM25Retriever:
    level, memory = level_spec(spec)
    if memory:
        raise ValueError(f"BM25 ranks dialogue chunks only; drop {memory!r} from 'bm25-{spec}'")
    return BM25Retriever(level)
