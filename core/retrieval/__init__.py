"""The retriever interface: what a retriever is, the chunks it ranks, and what its factory gets.

This package sits below `core.methods` and never imports it: the retrievers themselves and their
registry by name (`make_retriever`) live with the methods, in `core/methods/retrievers.py`
(tests/test_architecture.py checks the direction). A chunk family's spec is a level letter
(t turn, r round, s session) plus generated-memory letters (m summaries, f facts, i insights),
read by `level_spec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from core.resources import Embedder
from core.retrieval.base import LEVELS, Chunk, ChunkLevel, Retriever, dialogue_chunks, retrieved_turn_ids


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


def level_spec(spec: str) -> tuple[ChunkLevel, str]:
    """'smfi' -> ('session', 'mfi')."""
    by_letter = {level[0]: level for level in LEVELS}
    if not spec or spec[0] not in by_letter:
        raise ValueError(f"retriever spec must start with t, r or s (turn, round, session), got {spec!r}")
    return by_letter[spec[0]], spec[1:]


__all__ = ["Chunk", "ChunkLevel", "LEVELS", "Retriever", "RetrieverContext", "dialogue_chunks", "level_spec",
           "retrieved_turn_ids"]
