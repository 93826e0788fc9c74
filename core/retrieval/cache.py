"""An on-disk embedding cache, so a rerun of a retrieval benchmark embeds nothing twice.

Vectors are keyed by a fingerprint of the model (its name, dimension and the vector it gives a
fixed probe sentence, so two different models never share entries even under the same folder
name) plus the SHA-1 of the text. One SQLite file per model under
`~/.cache/dialogue-workbench/embeddings/`.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from core.paths import DEFAULT_CACHE_DIR
from core.resources import Embedder, load_embedder, load_once

PROBE = "dialogue-workbench embedding cache probe sentence"
BLOCK = 256  # texts per model call when progress is reported
DEFAULT_FOLDER = DEFAULT_CACHE_DIR / "embeddings"
BUSY_TIMEOUT_S = 120  # how long a process waits for another's write before failing


def model_fingerprint(embedder: Embedder) -> str:
    probe = np.round(embedder.encode([PROBE])[0].astype(np.float64), 4)
    digest = hashlib.sha1(probe.tobytes() + f"{embedder.name}|{embedder.dim}".encode()).hexdigest()[:16]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder.name)[:40]
    return f"{safe}-{embedder.dim}-{digest}"


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the file in WAL mode (persistent: set once per file, kept by later connections). Changing
    the journal mode needs the file to itself and SQLite answers "locked" at once, without its busy
    wait, while another process or thread opens it too: so wait here, up to BUSY_TIMEOUT_S."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class CachedEmbedder(Embedder):
    """Wraps an embedder; texts seen before (in this process or any earlier run) cost a lookup."""

    def __init__(self, inner: Embedder, folder: str | Path | None = None, key: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.key = key or model_fingerprint(inner)
        self.path = Path(folder or DEFAULT_FOLDER) / f"{self.key}.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._local = threading.local()  # per-thread progress callback (one Streamlit session per thread)
        self.computed = 0  # texts actually embedded by the inner model (for reporting)
        with closing(self._connect()) as db, db:
            _use_wal(db)
            db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)

    def _lookup(self, hashes: list[str], reload: bool = False) -> None:
        wanted = hashes if reload else [h for h in hashes if h not in self._memory]
        if not wanted:
            return
        with closing(self._connect()) as db:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                rows = db.execute(f"SELECT hash, vec FROM vectors WHERE hash IN ({','.join('?' * len(part))})", part)
                for h, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] == self.dim:
                        self._memory[h] = vec

    @contextmanager
    def reporting(self, callback: Callable[[int, int], None]) -> Iterator[None]:
        """Within the block, texts this thread embeds (cache misses only) go to the model in
        length-sorted blocks of BLOCK, calling callback(done, total) after each."""
        self._local.callback = callback
        try:
            yield
        finally:
            self._local.callback = None

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        callback = getattr(self._local, "callback", None)
        if callback is None or len(texts) <= BLOCK:
            return self.inner.encode(texts, batch_size=batch_size)
        # Sorting by length keeps padding low inside each block (the model sorts within a call only).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        callback(0, len(texts))
        for start in range(0, len(order), BLOCK):
            part = order[start : start + BLOCK]
            out[part] = self.inner.encode([texts[i] for i in part], batch_size=batch_size)
            callback(min(start + BLOCK, len(texts)), len(texts))
        return out

    def warm(self) -> None:
        """Warm the model itself (a cached text would never reach it); once per process."""
        self.inner.warm()

    def store(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Remember vectors computed elsewhere (e.g. a query embedded by the inner model on a timer)."""
        with self._lock:
            self._write(dict(zip((text_hash(t) for t in texts), vectors)))

    def _write(self, vectors: dict[str, np.ndarray]) -> None:
        """Store new vectors; a text another process stored first keeps that vector, and this process
        takes it too (read back after the write)."""
        with closing(self._connect()) as db, db:
            db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)",
                           [(h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()])
        for h, v in vectors.items():
            self._memory[h] = np.asarray(v, dtype=np.float32)
        self._lookup(list(vectors), reload=True)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        with self._lock:
            self._lookup(hashes)
            todo: dict[str, str] = {}
            for h, t in zip(hashes, texts):
                if h not in self._memory:
                    todo.setdefault(h, t)
            if todo:
                vectors = self._embed(list(todo.values()), batch_size)
                self.computed += len(todo)
                self._write(dict(zip(todo, vectors)))
            return np.stack([self._memory[h] for h in hashes])


def shared_cached_embedder(name_or_path: str = "", folder: str = "") -> CachedEmbedder:
    """The process's one cached embedder over `load_embedder(name_or_path)` (a read-only model plus
    its disk cache), safe to ask for from a background index build and a query at once."""
    return _cached_over(load_embedder(name_or_path), folder)


@load_once
def _cached_over(inner: Embedder, folder: str) -> CachedEmbedder:
    return CachedEmbedder(inner, folder or None)
