"""Retrievers by name, for the Retrieval comparison page and the retrieval benchmarks.

Names are `<family>-<spec>`: the family picks a factory from `RETRIEVERS` (one line per family;
a method that brings a retriever adds its line), the spec is family-specific (for the chunk
families see `core.retrieval.level_spec`): `rag-t`, `rag-smfi`, `bm25-r`, `sgmem-s`, `sgmem-tf`. A trailing `+h` asks SGMem for hybrid
(BM25 + dense) sentence seeds: `sgmem-t+h`; `hybrid-t` fuses BM25 and dense over chunks.
Factories load on first use, so listing names imports nothing heavy.
"""

from __future__ import annotations

import importlib

from core.retrieval import Retriever, RetrieverContext

RETRIEVERS: dict[str, str] = {
    "rag": "core.methods.chunkrag:make_rag",
    "bm25": "core.methods.chunkrag:make_bm25",
    "sgmem": "core.methods.sgmem.retriever:make_sgmem",
    "mcts": "core.methods.mcts.memory:make_mcts",
    "hybrid": "core.methods.hybrid:make_hybrid",
    "kg": "core.methods.kgaug.retriever:make_kg",
}


def split_name(name: str) -> tuple[str, str]:
    family, _, spec = name.partition("-")
    if family not in RETRIEVERS:
        raise ValueError(f"unknown retriever {name!r}; families: {', '.join(RETRIEVERS)}")
    return family, spec


def make_retriever(name: str, context: RetrieverContext) -> Retriever:
    family, spec = split_name(name)
    module, fn = RETRIEVERS[family].split(":")
    return getattr(importlib.import_module(module), fn)(spec, context)


def uses_llm(name: str) -> bool:
    """Whether a chunk-family retriever needs generated memory (and so an LLM)."""
    family, spec = split_name(name)
    spec = spec.removesuffix("+h")
    return family in ("rag", "sgmem") and len(spec) > 1


__all__ = ["RETRIEVERS", "make_retriever", "split_name", "uses_llm"]
