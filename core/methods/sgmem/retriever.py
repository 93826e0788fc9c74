"""SGMem retrieval (section 3.4) over the sentence graph.

1. Sentences scored by sim(q, c) = cos(e_q, e_c) + epsilon; at most n of them with sim >= gamma
   are the seed nodes C_q.
2. C* = C_q plus every sentence within h KNN hops (neighbours enter whatever their similarity).
3. Each sentence of C* maps to its parent chunk (turn, round or session); a chunk scores the mean
   sim(q, c) over its sentences in C*; the top-K chunks are kept.
4. Plus the top-K summaries, facts and insights (when the setting uses them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.dialogue import Dialogue, Evidence, Turn
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.graph import SentenceGraph
from core.methods.sgmem.memory import GeneratedMemory, MemoryProvider, MemoryTables
from core.resources import Embedder
from core.retrieval import level_spec
from core.retrieval.base import LEVEL_LETTER, ChunkTracker, Retriever
from core.text import split_sentences
from core.vectors import VectorIndex


@lru_cache(maxsize=100_000)
def sentences_of(text: str) -> tuple[str, ...]:
    """pysbd is slow (it compiles regexes per call); benchmarks split each turn for three chunk levels."""
    return tuple(split_sentences(text))


@dataclass(frozen=True)
class SGMemHits:
    """Every step of one retrieval, for tests and the UI."""

    seeds: tuple[int, ...]  # C_q, best first
    expanded: tuple[int, ...]  # C* \ C_q
    sentence_scores: dict  # sentence id -> sim(q, c) for C*
    chunk_scores: tuple[tuple[str, float], ...]  # all candidate chunks, best first
    chunks: tuple[Evidence, ...]  # the top-K as evidence
    memories: tuple[Evidence, ...]


class SGMemRetriever(Retriever):
    def __init__(self, embedder: Embedder, config: SGMemConfig = SGMemConfig(),
                 memory_provider: MemoryProvider | None = None) -> None:
        if config.memory and memory_provider is None:
            raise ValueError(f"SGMem with generated memory {config.memory!r} needs a memory provider (an LLM)")
        self.embedder = embedder
        self.config = config
        self.memory_provider = memory_provider
        self.name = f"sgmem-{LEVEL_LETTER[config.chunk_level]}{config.memory}"
        self.label = f"SGMem ({config.chunk_level}s{' + ' + config.memory.upper() if config.memory else ''})"
        self.reset()

    def reset(self) -> None:
        self.graph = SentenceGraph(self.embedder.dim, self.config.knn_k)
        self.sentences = VectorIndex(self.embedder.dim)  # the sentence index table
        self.tracker = ChunkTracker()
        self.memory = MemoryTables(self.embedder)
        self.turns: list[Turn] = []

    def settings(self) -> dict:
        c = self.config
        return {"k": c.knn_k, "h": c.hops, "n": c.max_sentences, "gamma": c.gamma, "K": c.top_k,
                "epsilon": c.epsilon, "chunk_level": c.chunk_level, "memory": c.memory}

    # -- building ----------------------------------------------------------------------------
    def index(self, dialogue: Dialogue) -> None:
        self.reset()
        self.add_turns(dialogue.turns())
        self.refresh_memory(dialogue)

    def add_turns(self, turns: Sequence[Turn]) -> None:
        """Split, embed (one batch), index and link new turns: incremental, equal to a rebuild."""
        texts, embed, turn_ids, chunks = [], [], [], []
        for turn in turns:
            ids = self.tracker.add(turn)
            self.turns.append(turn)
            who = turn.speaker or turn.role.capitalize()
            for sentence in sentences_of(turn.text):
                texts.append(sentence)
                embed.append(f"{who}: {sentence}" if self.config.sentence_with_speaker else sentence)
                turn_ids.append(turn.turn_id)
                chunks.append(ids)
        if not texts:
            return
        vectors = self.embedder.encode(embed)
        new_ids = self.graph.add(texts, turn_ids, chunks, vectors)
        self.sentences.add(vectors, new_ids)

    def refresh_memory(self, dialogue: Dialogue) -> GeneratedMemory:
        if not self.config.memory:
            return GeneratedMemory()
        memory = self.memory_provider(dialogue, self.config.memory)
        self.memory.build(memory, self.config.memory)
        return memory

    # -- retrieval ---------------------------------------------------------------------------
    def retrieve(self, query: str, k: int | None = None) -> list[Evidence]:
        hits = self.search(query, k)
        return list(hits.chunks) + list(hits.memories)

    def search(self, query: str, k: int | None = None) -> SGMemHits:
        c = self.config
        k = c.top_k if k is None else max(k, 0)  # a negative k would slice from the end
        q = self.embedder.encode([query])
        if not len(self.graph):
            return SGMemHits((), (), {}, (), (), tuple(self.memory.search(q, k, c.epsilon)))
        seeds = [h.item for h in self.sentences.search(q, c.max_sentences)[0] if h.score + c.epsilon >= c.gamma]
        reached = self.graph.expand(seeds, c.hops)
        # Similarities of the reached sentences only; einsum, not BLAS: a threaded BLAS call on a
        # busy 2-core machine costs milliseconds for this tiny product.
        ids = np.fromiter(sorted(reached), dtype=np.int64)
        values = np.einsum("ij,j->i", self.graph.vectors[ids].astype(np.float64), q[0].astype(np.float64)) + c.epsilon
        sims = dict(zip(ids.tolist(), values.tolist()))
        chunk_scores = self._rank_chunks(reached, sims)
        chunks = tuple(
            self.tracker.chunk(c.chunk_level, cid).evidence(score, sentences=self._chunk_sentences(cid, reached))
            for cid, score in chunk_scores[:k]
        )
        return SGMemHits(
            seeds=tuple(seeds),
            expanded=tuple(sorted(reached - set(seeds))),
            sentence_scores=sims,
            chunk_scores=tuple(chunk_scores),
            chunks=chunks,
            memories=tuple(self.memory.search(q, k, c.epsilon)),
        )

    def _rank_chunks(self, reached: set[int], sims: dict[int, float]) -> list[tuple[str, float]]:
        by_chunk: dict[str, list[float]] = {}
        for i in sorted(reached):
            by_chunk.setdefault(self.graph.nodes[i].chunks[self.config.chunk_level], []).append(sims[i])
        scored = [(cid, float(np.mean(v))) for cid, v in by_chunk.items()]
        order = {cid: n for n, cid in enumerate(self.tracker.order[self.config.chunk_level])}
        return sorted(scored, key=lambda cs: (-cs[1], order[cs[0]]))  # ties: the earlier chunk

    def _chunk_sentences(self, cid: str, reached: set[int]) -> list[int]:
        level = self.config.chunk_level
        return [i for i in sorted(reached) if self.graph.nodes[i].chunks[level] == cid]


def make_sgmem(spec: str, context) -> SGMemRetriever:
    """`sgmem-<level><memory>`; hyper-parameters from context.options["sgmem"] (default: LoCoMo's)."""
    from dataclasses import replace

    from core.methods.sgmem.config import LOCOMO_DEFAULTS

    level, memory = level_spec(spec)
    config = replace(context.options.get("sgmem", LOCOMO_DEFAULTS), chunk_level=level, memory=memory)
    return SGMemRetriever(context.need_embedder(), config, context.memory_provider)
