"""SGMem retrieval (section 3.4) over the sentence graph.

1. Sentences scored by sim(q, c) = cos(e_q, e_c) + epsilon; at most n of them with sim >= gamma
   are the seed nodes C_q.
2. C* = C_q plus every sentence within h KNN hops (neighbours enter whatever their similarity).
3. Each sentence of C* maps to its parent chunk (turn, round or session); a chunk scores the mean
   sim(q, c) over its sentences in C*; the top-K chunks are kept.
4. Plus the top-K summaries, facts and insights (when the setting uses them).

Hybrid variant (`sgmem-*+h`, config.hybrid set; not in the paper): step 1 ranks every sentence by
the embedder and by BM25 (a sparse sentence index), fuses the two rankings (core.retrieval.fusion)
and takes the n best fused sentences as seeds; step 3 ranks chunks by `config.aggregate` of the
fused scores of their reached sentences. Steps 2 and 4 are the paper's. With `chunk_bm25` > 0, the
graph's chunk score is further combined with BM25 over the whole chunk texts (both min-max
normalised): whole-session word overlap is what BM25 wins on at the session level.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.dialogue import Dialogue, Evidence, Turn
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.graph import SentenceGraph
from core.methods.sgmem.memory import GeneratedMemory, MemoryProvider, MemoryTables
from core.resources import Embedder
from core.retrieval import level_spec
from core.retrieval.base import LEVEL_LETTER, Chunk, ChunkTracker, Retriever
from core.retrieval.fusion import fuse, minmax, top_ids
from core.retrieval.sparse import SparseIndex
from core.text import split_sentences
from core.timeref import anchor_turn
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
        hybrid = "+h" if config.hybrid else ""
        self.name = f"sgmem-{LEVEL_LETTER[config.chunk_level]}{config.memory}{hybrid}"
        self.label = (f"SGMem{' hybrid' if hybrid else ''} ({config.chunk_level}s"
                      f"{' + ' + config.memory.upper() if config.memory else ''})")
        self.reset()

    def reset(self) -> None:
        self.graph = SentenceGraph(self.embedder.dim, self.config.knn_k)
        self.sentences = VectorIndex(self.embedder.dim)  # the sentence index table
        self.sparse = SparseIndex()  # BM25 over the same sentence texts (hybrid only; built lazily)
        self.tracker = ChunkTracker()
        self.memory = MemoryTables(self.embedder)
        self.turns: list[Turn] = []
        self.shown: dict[str, Turn] = {}  # turn id -> the turn as the memory shows it (time anchored)
        self._chunk_sparse: tuple[tuple, SparseIndex] | None = None  # ((turns covered, level), BM25 over chunk texts)

    def settings(self) -> dict:
        c = self.config
        out = {"k": c.knn_k, "h": c.hops, "n": c.max_sentences, "gamma": c.gamma, "K": c.top_k,
               "epsilon": c.epsilon, "chunk_level": c.chunk_level, "memory": c.memory, "aggregate": c.aggregate,
               "anchor_time": c.anchor_time}
        if c.hybrid:
            out.update(gamma=None, fusion=c.hybrid.describe(), chunk_bm25=c.chunk_bm25)
        return out

    def nbytes(self) -> int:
        """Memory of the index structures (vectors twice: graph and FAISS table; KNN rows; BM25)."""
        g = self.graph
        chunk_sparse = self._chunk_sparse[1].nbytes() if self._chunk_sparse else 0
        return int(g.vectors.nbytes * 2 + g.knn_ids.nbytes + g.knn_scores.nbytes
                   + (self.sparse.nbytes() if self.config.hybrid else 0) + chunk_sparse)

    # -- building ----------------------------------------------------------------------------
    def index(self, dialogue: Dialogue) -> None:
        self.reset()
        self.add_turns(dialogue.turns())
        self.refresh_memory(dialogue)
        if self.config.hybrid:
            self.sparse.scores("")  # build the BM25 matrices now, not at the first query
            if self.config.chunk_bm25 > 0:
                self.chunk_bm25_scores("")
        self.embedder.warm()  # the first query must not pay the model's cold start

    def add_turns(self, turns: Sequence[Turn]) -> None:
        """Split, embed (one batch), index and link new turns: incremental, equal to a rebuild."""
        texts, embed, turn_ids, chunks = [], [], [], []
        for turn in turns:
            ids = self.tracker.add(turn)
            self.turns.append(turn)
            if self.config.anchor_time:
                shown = anchor_turn(turn)
                if shown is not turn:
                    self.shown[turn.turn_id] = shown
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
        self.sparse.add(embed)

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
        seeds, reached, sims = self.nodes(query, q)
        chunk_scores = self._rank_chunks(reached, sims, query)
        chunks = tuple(
            self.shown_chunk(cid).evidence(score, sentences=self._chunk_sentences(cid, reached))
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

    def stored_turn(self, turn: Turn) -> Turn:
        return self.shown.get(turn.turn_id, turn)

    def shown_chunk(self, cid: str) -> Chunk:
        """A chunk as the reader sees it: its turns time anchored (ranking used the turns as said)."""
        chunk = self.tracker.chunk(self.config.chunk_level, cid)
        return replace(chunk, turns=tuple(self.stored_turn(t) for t in chunk.turns)) if self.shown else chunk

    def nodes(self, query: str, q: np.ndarray) -> tuple[list[int], set[int], dict[int, float]]:
        """Steps 1-2: the seed sentences C_q (best first), C* and a score for each sentence of C*
        (paper: sim = cosine + epsilon; hybrid: the fused score). Independent of the chunk level."""
        c = self.config
        if c.hybrid:
            return self._hybrid_nodes(query, q[0])
        seeds = [h.item for h in self.sentences.search(q, c.max_sentences)[0] if h.score + c.epsilon >= c.gamma]
        reached = self.graph.expand(seeds, c.hops)
        # Similarities of the reached sentences only; einsum, not BLAS: a threaded BLAS call on a
        # busy 2-core machine costs milliseconds for this tiny product.
        ids = np.fromiter(sorted(reached), dtype=np.int64)
        values = np.einsum("ij,j->i", self.graph.vectors[ids].astype(np.float64), q[0].astype(np.float64)) + c.epsilon
        return seeds, reached, dict(zip(ids.tolist(), values.tolist()))

    def _hybrid_nodes(self, query: str, q: np.ndarray) -> tuple[list[int], set[int], dict[int, float]]:
        """Seeds = the n best sentences by fused dense + BM25 score; every reached sentence is
        scored by its fused score."""
        c = self.config
        dense = np.einsum("ij,j->i", self.graph.vectors, q.astype(np.float32))  # all sentences (~10k x 768 at most)
        fused = fuse(dense, self.sparse.scores(query), c.hybrid)
        seeds = top_ids(fused, c.max_sentences)
        reached = self.graph.expand(seeds, c.hops)
        return seeds, reached, {i: float(fused[i]) for i in sorted(reached)}

    def chunk_bm25_scores(self, query: str) -> np.ndarray:
        """BM25 of `query` against every chunk of the level (in tracker order), over whole chunk texts;
        the index is rebuilt when turns were added since (a round or session grows turn by turn)."""
        level = self.config.chunk_level
        if self._chunk_sparse is None or self._chunk_sparse[0] != (len(self.turns), level):
            index = SparseIndex()
            index.add([self.tracker.chunk(level, cid).text for cid in self.tracker.order[level]])
            self._chunk_sparse = ((len(self.turns), level), index)
        return self._chunk_sparse[1].scores(query)

    def _rank_chunks(self, reached: set[int], sims: dict[int, float], query: str | None = None) -> list[tuple[str, float]]:
        by_chunk: dict[str, list[float]] = {}
        for i in sorted(reached):
            by_chunk.setdefault(self.graph.nodes[i].chunks[self.config.chunk_level], []).append(sims[i])
        aggregate = {"mean": np.mean, "max": np.max, "sum": np.sum}[self.config.aggregate]
        scored = [(cid, float(aggregate(v))) for cid, v in by_chunk.items()]
        ids = self.tracker.order[self.config.chunk_level]
        order = {cid: n for n, cid in enumerate(ids)}
        w = self.config.chunk_bm25
        if self.config.hybrid and w > 0 and query is not None:
            graph = np.zeros(len(ids))
            for cid, value in scored:
                graph[order[cid]] = value
            combined = (1 - w) * minmax(graph) + w * minmax(self.chunk_bm25_scores(query))
            scored = [(cid, float(combined[n])) for n, cid in enumerate(ids) if combined[n] > 0]
        return sorted(scored, key=lambda cs: (-cs[1], order[cs[0]]))  # ties: the earlier chunk

    def _chunk_sentences(self, cid: str, reached: set[int]) -> list[int]:
        level = self.config.chunk_level
        return [i for i in sorted(reached) if self.graph.nodes[i].chunks[level] == cid]


def make_sgmem(spec: str, context) -> SGMemRetriever:
    """`sgmem-<level><memory>[+h]`; hyper-parameters from context.options["sgmem"] (default:
    LoCoMo's), and for `+h` from context.options["sgmem+h"] (default: HYBRID_DEFAULTS); either
    one SGMemConfig or a dict chunk level -> SGMemConfig."""

    from core.methods.sgmem.config import HYBRID_DEFAULTS, LOCOMO_DEFAULTS

    spec, hybrid = (spec[:-2], True) if spec.endswith("+h") else (spec, False)
    level, memory = level_spec(spec)
    base = context.options.get("sgmem+h", HYBRID_DEFAULTS) if hybrid else context.options.get("sgmem", LOCOMO_DEFAULTS)
    if isinstance(base, dict):  # settings per chunk level (core.methods.sgmem.calibration)
        base = base.get(level, HYBRID_DEFAULTS if hybrid else LOCOMO_DEFAULTS)
    config = replace(base, chunk_level=level, memory=memory)
    return SGMemRetriever(context.need_embedder(), config, context.memory_provider)
