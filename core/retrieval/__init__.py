"""Retrievers compared side by side (the Retrieval Comparison page, the retrieval benchmarks).

Names are `<family>-<spec>`: the family picks a factory from `RETRIEVERS` (one line per family;
later methods add theirs), the spec is family-specific, for the chunk families a level letter
(t turn, r round, s session) plus generated-memory letters (m summaries, f facts, i insights):
`rag-t`, `rag-smfi`, `bm25-r`, `sgmem-s`, `sgmem-tf`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from core.resources import Embedder
from core.retrieval.base import LEVELS, Chunk, ChunkLevel, Retriever, dialogue_chunks, retrieved_turn_ids

RETRIEVERS: dict[str, str] = {
    "rag": "core.methods.chunkrag:make_rag",
    "bm25": "core.methods.chunkrag:make_bm25",
    "sgmem": "core.methods.sgmem.retriever:make_sgmem",
    "mcts": "core.methods.mcts.memory:make_mcts",
}


@dataclass(frozen=True)
class RetrieverContext:
    """What factories may use: the embedder, a generated-memory provider (needs an LLM), and
    family-specific settings (e.g. options["sgmem"] = an SGMemConfig)."""

    embedder: Embedder | None = None
    memory_provider: Callable | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def need_embedder(self) -> Embedder:
        if self.embedder is None:
            raise ValueError("this retriever needs a sentence embedder")
        return self.embedder


def split_name(name: str) -> tuple[str, str]:
    family, _, spec = name.partition("-")
    if family not in RETRIEVERS:
        raise ValueError(f"unknown retriever {name!r}; families: {', '.join(RETRIEVERS)}")
    return family, spec


def level_spec(spec: str) -> tuple[ChunkLevel, str]:
    """'smfi' -> ('session', 'mfi')."""
    by_letter = {level[0]: level for level in LEVELS}
    if not spec or spec[0] not in by_letter:
        raise ValueError(f"retriever spec must start with t, r or s (turn, round, session), got {spec!r}")
    return by_letter[spec[0]], spec[1:]


def make_retriever(name: str, context: RetrieverContext) -> Retriever:
    family, spec = split_name(name)
    module, fn = RETRIEVERS[family].split(":")
    return getattr(importlib.import_module(module), fn)(spec, context)


def uses_llm(name: str) -> bool:
    """Whether a chunk-family retriever needs generated memory (and so an LLM)."""
    family, spec = split_name(name)
    return family in ("rag", "sgmem") and len(spec) > 1


__all__ = ["Chunk", "ChunkLevel", "LEVELS", "RETRIEVERS", "Retriever", "RetrieverContext", "dialogue_chunks",
           "level_spec", "make_retriever", "retrieved_turn_ids", "split_name", "uses_llm"]
