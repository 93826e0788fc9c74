"""One vector index type over FAISS: exact inner-product search over L2-normalised vectors.

Items (any JSON value) map to consecutive integer ids. `save` writes one file: a magic line, a
JSON header (format version, dimension, count, items) and the serialised FAISS index; `load`
checks the header and refuses a mismatch with a clear error. A GPU index is used when the
installed faiss was built with GPU support and a GPU is present.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

MAGIC = b"DWVI\n"
FORMAT_VERSION = 1


class IndexFormatError(ValueError):
    """A saved index is not this format, this version, or this dimension."""


@dataclass(frozen=True)
class Hit:
    id: int
    score: float  # inner product of unit vectors = cosine similarity
    item: Any


def gpu_available() -> bool:
    import faiss

    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


class VectorIndex:
    def __init__(self, dim: int, use_gpu: bool | None = None) -> None:
        import faiss

        self.dim = dim
        self.items: list[Any] = []
        self._cpu = faiss.IndexFlatIP(dim)
        self._gpu_res = None
        self.on_gpu = gpu_available() if use_gpu is None else (use_gpu and gpu_available())
        self._index = self._to_device(self._cpu)

    def _to_device(self, cpu_index):
        if not self.on_gpu:
            return cpu_index
        import faiss

        self._gpu_res = self._gpu_res or faiss.StandardGpuResources()
        return faiss.index_cpu_to_gpu(self._gpu_res, 0, cpu_index)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, vectors: np.ndarray, items: Sequence[Any]) -> list[int]:
        vectors = self._check(vectors)
        if len(vectors) != len(items):
            raise ValueError(f"{len(vectors)} vectors but {len(items)} items")
        start = len(self.items)
        if len(vectors):
            self._index.add(vectors)
        self.items.extend(items)
        return list(range(start, start + len(items)))

    def vector(self, i: int) -> np.ndarray:
        return self._index.reconstruct(i)

    def vectors(self) -> np.ndarray:
        if not self.items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._index.reconstruct_n(0, len(self.items))

    def search(self, queries: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k hits per query row, best first (ties broken by lower id)."""
        queries = self._check(queries)
        k = min(k, len(self.items))
        if k <= 0:
            return [[] for _ in range(len(queries))]
        scores, ids = self._index.search(queries, k)
        return [
            [Hit(int(i), float(s), self.items[int(i)]) for s, i in zip(srow, irow) if i >= 0]
            for srow, irow in zip(scores, ids)
        ]

    def _check(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.shape[1] != self.dim:
            raise ValueError(f"vectors have dimension {vectors.shape[1]}, index has {self.dim}")
        return vectors

    def save(self, path: str | Path) -> None:
        import faiss

        cpu = faiss.index_gpu_to_cpu(self._index) if self.on_gpu else self._index
        header = json.dumps({"format": FORMAT_VERSION, "dim": self.dim, "count": len(self.items), "items": self.items})
        blob = faiss.serialize_index(cpu).tobytes()
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as f:
            f.write(MAGIC)
            f.write(len(header.encode()).to_bytes(8, "little"))
            f.write(header.encode())
            f.write(blob)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path, use_gpu: bool | None = None, expect_dim: int | None = None) -> "VectorIndex":
        import faiss

        data = Path(path).read_bytes()
        if not data.startswith(MAGIC):
            raise IndexFormatError(f"{path} is not a vector index file (bad magic)")
        n = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8
        try:
            header = json.loads(data[start : start + n])
        except json.JSONDecodeError as err:
            raise IndexFormatError(f"{path}: corrupt header") from err
        if header.get("format") != FORMAT_VERSION:
            raise IndexFormatError(f"{path}: format {header.get('format')}, this code reads {FORMAT_VERSION}")
        if expect_dim is not None and header["dim"] != expect_dim:
            raise IndexFormatError(f"{path}: dimension {header['dim']}, expected {expect_dim} (different embedder?)")
        cpu = faiss.deserialize_index(np.frombuffer(data[start + n :], dtype=np.uint8))
        if cpu.ntotal != header["count"] or cpu.d != header["dim"]:
            raise IndexFormatError(f"{path}: header says {header['count']}x{header['dim']}, index holds {cpu.ntotal}x{cpu.d}")
        index = cls(header["dim"], use_gpu=use_gpu)
        index._cpu = cpu
        index._index = index._to_device(cpu)
        index.items = header["items"]
        return index
