"""SGMem settings with the paper's defaults (section 4.4).

LongMemEval: k=3, h=1, n=15, gamma=1.0, K=5 (ablations on SGMem-TF, turns + facts).
LoCoMo:      k=1, h=1, n=15, gamma=1.2, K=5 (ablations on SGMem-SF, sessions + facts).
Similarity is cosine + epsilon (epsilon = 1), so gamma lies in [0, 2]: gamma=1.2 keeps sentences
with cosine >= 0.2. The answering model of the paper ran at temperature 0.7.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.config import GenerationSettings
from core.dialogue import EVIDENCE_FACT, EVIDENCE_INSIGHT, EVIDENCE_SUMMARY
from core.retrieval.base import ChunkLevel, check_level
from core.retrieval.fusion import FusionSettings

MEMORY_KINDS = {"m": EVIDENCE_SUMMARY, "f": EVIDENCE_FACT, "i": EVIDENCE_INSIGHT}  # the letter of a kind of generated memory


def check_memory(memory: str) -> str:
    """Memory letters in canonical order: any of m (summaries), f (facts), i (insights)."""
    unknown = set(memory) - set(MEMORY_KINDS)
    if unknown:
        raise ValueError(f"memory kinds are letters of 'mfi', got {memory!r}")
    return "".join(c for c in "mfi" if c in memory)


@dataclass(frozen=True)
class MemoryGenerationSettings:
    """Generated memory (Appendix B.3-B.5 prompts) through the configured LLM."""

    temperature: float = 0.7
    max_tokens: int = 400
    max_session_chars: int = 12000  # a session longer than this is cut, oldest turns kept


@dataclass(frozen=True)
class SGMemConfig:
    chunk_level: ChunkLevel = "turn"
    knn_k: int = 3  # k: sentence-sentence edges to each sentence's k nearest neighbours
    hops: int = 1  # h: graph expansion around the retrieved sentences
    max_sentences: int = 15  # n: at most this many sentence nodes from the vector search
    gamma: float = 1.0  # threshold on cosine + epsilon for those sentence nodes
    top_k: int = 5  # K: chunks kept, and generated memories of each kind kept
    epsilon: float = 1.0
    memory: str = ""  # generated memory used: any of "mfi" (summaries, facts, insights); "" = LLM-free
    sentence_with_speaker: bool = True  # embed "Name: sentence", as turns are embedded
    # Hybrid seeds (`sgmem-*+h`, not in the paper): sentences ranked by BM25 and by the embedder,
    # fused; the top n fused are the seeds (no gamma: fused scores have no fixed scale), and chunks
    # are ranked by `aggregate` of their reached sentences' fused scores. None = the paper's 3.4.
    hybrid: FusionSettings | None = None
    aggregate: Literal["mean", "max", "sum"] = "mean"  # chunk score over its reached sentences (paper: mean)
    # Hybrid only: weight of BM25 over whole chunks in a convex combination with the graph's chunk
    # score (both min-max normalised over every chunk of the level; unreached chunks score 0 on the
    # graph side). 0 = off: chunks ranked by the graph alone.
    chunk_bm25: float = 0.0
    # Time anchoring (core.timeref; not in the paper): the memory shows each turn with its relative
    # time expressions resolved against the session date ("yesterday (7 May 2023)"). Only what the
    # reader sees changes: sentences are embedded and searched as they were said.
    anchor_time: bool = True
    memory_generation: MemoryGenerationSettings = MemoryGenerationSettings()
    generation: GenerationSettings = field(default_factory=lambda: GenerationSettings(temperature=0.7, max_tokens=300))

    def __post_init__(self) -> None:
        check_level(self.chunk_level)
        object.__setattr__(self, "memory", check_memory(self.memory))
        if self.knn_k < 0 or self.hops < 0 or self.max_sentences < 1 or self.top_k < 1:
            raise ValueError("SGMem needs k >= 0, h >= 0, n >= 1 and K >= 1")
        if self.aggregate not in ("mean", "max", "sum"):
            raise ValueError(f"aggregate must be mean, max or sum, not {self.aggregate!r}")
        if not 0.0 <= self.chunk_bm25 <= 1.0:
            raise ValueError(f"chunk_bm25 is a weight in [0, 1], got {self.chunk_bm25}")
        if not 0.0 <= self.gamma <= 1.0 + self.epsilon:
            raise ValueError(f"gamma must lie in [0, {1.0 + self.epsilon}] (cosine + epsilon), got {self.gamma}")


LONGMEMEVAL_DEFAULTS = SGMemConfig(chunk_level="turn", knn_k=3, hops=1, max_sentences=15, gamma=1.0, top_k=5)
LOCOMO_DEFAULTS = SGMemConfig(chunk_level="session", knn_k=1, hops=1, max_sentences=15, gamma=1.2, top_k=5)
DATASET_DEFAULTS = {"longmemeval": LONGMEMEVAL_DEFAULTS, "locomo": LOCOMO_DEFAULTS}
# Hybrid seeds (`sgmem-*+h`) for an embedder without its own calibration (core.methods.sgmem.calibration):
# the values chosen for all-MiniLM-L6-v2 on the LoCoMo dev split (docs/retrieval.md).
HYBRID_DEFAULTS = SGMemConfig(chunk_level="turn", knn_k=1, hops=1, max_sentences=15, top_k=5,
                              hybrid=FusionSettings("convex", dense_weight=0.7), aggregate="max")
