"""Shared test helpers for the SGMem tests: an embedder with hand-chosen vectors."""

from __future__ import annotations

import numpy as np

from core.resources import Embedder, normalise


class TableEmbedder(Embedder):
    """Maps known texts to fixed (normalised) vectors, so similarities can be computed by hand.
    The text before ': ' (a speaker prefix) is ignored; unknown texts raise."""

    name = "table"

    def __init__(self, table: dict[str, tuple[float, ...]]) -> None:
        self.table = {k: normalise(np.asarray([v], dtype=np.float32))[0] for k, v in table.items()}
        self.dim = len(next(iter(table.values())))
        self.calls = 0

    def encode(self, texts, batch_size: int = 64) -> np.ndarray:
        self.calls += 1
        out = []
        for t in texts:
            key = t if t in self.table else t.split(": ", 1)[-1]
            out.append(self.table[key])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)
