"""A BM25 index over short texts (sentences or chunks) with bm25s: sparse matrices, so scoring every
document for a query costs well under a millisecond at LongMemEval-S scale (~10k sentences).

Tokens are `core.text.words` (lower-cased words), the same as the chunk BM25 baseline. The
default scoring is Lucene's BM25 (idf = log(1 + (N - df + 0.5) / (df + 0.5)), never negative:
speaker names occur in about half of all sentences, where the original Robertson idf would go
negative). `method="robertson"` gives rank-bm25's BM25Okapi scores divided by (k1 + 1) wherever no
idf is negative (bm25s leaves that constant factor out; rankings are the same).

Texts may be added at any time; the matrix is rebuilt lazily at the next query (bm25s has no
incremental index, and a rebuild over 10k sentences takes tens of milliseconds).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.text import words


class SparseIndex:
    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene") -> None:
        self.k1, self.b, self.method = k1, b, method
        self.docs: list[list[str]] = []
        self._bm25 = None
        self._dirty = False

    def __len__(self) -> int:
        return len(self.docs)

    def add(self, texts: Sequence[str]) -> None:
        self.docs.extend(words(t) for t in texts)
        self._dirty = True

    def _index(self):
        if self._dirty or self._bm25 is None:
            import bm25s

            bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
            # An empty document gets the placeholder token bm25s reserves for it ("").
            bm25.index([d or [""] for d in self.docs], show_progress=False)
            self._bm25, self._dirty = bm25, False
        return self._bm25

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for `query` (zeros when no query word is indexed)."""
        if not self.docs:
            return np.zeros(0, dtype=np.float64)
        bm25 = self._index()
        ids = bm25.get_tokens_ids([w for w in words(query) if w])
        if not ids:
            return np.zeros(len(self.docs), dtype=np.float64)
        return np.asarray(bm25.get_scores_from_ids(ids), dtype=np.float64)

    def nbytes(self) -> int:
        """Memory of the score matrix (data, indices, pointers)."""
        if not self.docs:
            return 0
        s = self._index().scores
        return int(sum(np.asarray(s[k]).nbytes for k in ("data", "indices", "indptr")))
