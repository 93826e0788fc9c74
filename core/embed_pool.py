"""Embedding on N local worker processes (`--workers N`): heavy builds such as the MCTS knowledge
base and LongMemEval-S haystack indexes use every core.

`EmbedPool` is an Embedder: a large `encode` call is dealt over a `multiprocessing.Pool` of spawned
workers, each of which loads the model once (the embedder is pickled to it; a sentence-transformers
embedder pickles as its model path and reloads there) and runs torch at one thread, so N workers
use N cores instead of fighting over them. Small calls (a query) run in this process. The pool is
a context manager: leaving it terminates the workers, and every call waits at most `timeout_s`, so
a worker that died or hangs ends the build with an error instead of stalling it.

Only this process touches the on-disk embedding cache: wrap the pool *inside* a CachedEmbedder
(`pooled` does), so workers compute vectors and the parent alone looks them up and stores them.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as np

from core.resources import Embedder

# Below this many texts a call is not worth the round trip to the workers (a query, a short list).
MIN_PARALLEL_TEXTS = 32
DEFAULT_TIMEOUT_S = 3600.0  # one encode call; a 2,048-text KB block of mpnet takes minutes on 2 cores

START_TIMEOUT_S = 600.0  # spawning a worker and loading the model (seconds on an idle machine)
STOP_TIMEOUT_S = 30.0  # workers finishing after the pool is closed
PROBE = "dialogue-workbench worker probe sentence"

_worker_embedder: Embedder | None = None
_worker_error = ""


def _start_worker(payload: bytes) -> None:
    """Pool initializer: load the embedder once per worker, torch at one thread. A failure is kept
    and raised by the worker's first task: multiprocessing.Pool would otherwise restart the worker
    for ever and the caller would only see a timeout."""
    global _worker_embedder, _worker_error
    try:
        _worker_embedder = pickle.loads(payload)
    except Exception as err:  # re-raised, with its message, by _encode_part in the parent
        _worker_error = f"{type(err).__name__}: {err}"
        return
    if "torch" in sys.modules:  # a hashing embedder never imports it; do not pay for it then
        sys.modules["torch"].set_num_threads(1)


def _encode_part(texts: list[str], batch_size: int) -> np.ndarray:
    if _worker_embedder is None:
        raise RuntimeError(f"the embedding worker could not load the embedder: {_worker_error}")
    return _worker_embedder.encode(texts, batch_size=batch_size)


class EmbedPool(Embedder):
    """`inner`'s vectors, computed by `workers` processes for calls of MIN_PARALLEL_TEXTS or more."""

    def __init__(self, inner: Embedder, workers: int, timeout_s: float = DEFAULT_TIMEOUT_S,
                 min_parallel: int = MIN_PARALLEL_TEXTS) -> None:
        if workers < 2:
            raise ValueError(f"an EmbedPool needs at least 2 workers, got {workers} (use the embedder itself)")
        try:
            self._payload = pickle.dumps(inner)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            raise ValueError(f"embedder {inner.name!r} cannot be sent to worker processes ({err})") from err
        self.inner, self.workers, self.timeout_s, self.min_parallel = inner, workers, timeout_s, min_parallel
        self.name, self.dim = inner.name, inner.dim
        self._pool = None
        self.dispatched = 0  # texts embedded by the workers (the rest ran here)

    def __enter__(self) -> "EmbedPool":
        # spawn, not fork: a forked copy of a process whose torch thread pool is running can deadlock
        ctx = multiprocessing.get_context("spawn")
        self._pool = ctx.Pool(self.workers, initializer=_start_worker, initargs=(self._payload,))
        try:
            self._check_workers()
        except BaseException:
            self.close(graceful=False)
            raise
        return self

    def _check_workers(self) -> None:
        """The workers load, and answer a probe with this process's vector (same model, same weights)."""
        pending = self._pool.starmap_async(_encode_part, [([PROBE], 1)] * self.workers, chunksize=1)
        try:
            answers = pending.get(timeout=START_TIMEOUT_S)
        except multiprocessing.TimeoutError:
            raise TimeoutError(f"{self.workers} embedding workers did not start in {START_TIMEOUT_S:.0f} s") from None
        mine = self.inner.encode([PROBE])
        for vector in answers:
            if vector.shape != mine.shape or not np.allclose(vector, mine, atol=1e-5):
                raise RuntimeError(f"an embedding worker's {self.name} gives other vectors than this process's")

    def __exit__(self, exc_type, *exc) -> None:
        self.close(graceful=exc_type is None)

    def close(self, graceful: bool = True) -> None:
        """Stop the workers: after a good run they exit on their own (within STOP_TIMEOUT_S, so that
        what their libraries set up is released), else and after an error they are terminated."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if graceful:
            pool.close()
            joiner = threading.Thread(target=pool.join, name="embed-pool-stop", daemon=True)
            joiner.start()
            joiner.join(STOP_TIMEOUT_S)
            if not joiner.is_alive():
                return
        pool.terminate()
        pool.join()

    def warm(self) -> None:
        self.inner.warm()

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        texts = list(texts)
        if self._pool is None or len(texts) < self.min_parallel:
            return self.inner.encode(texts, batch_size=batch_size)
        # Dealt round-robin in length order: every worker gets as many long texts as the others,
        # so they finish together (the model sorts by length again inside each part).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = [order[w::self.workers] for w in range(self.workers)]
        pending = self._pool.starmap_async(_encode_part, [([texts[i] for i in part], batch_size) for part in parts],
                                           chunksize=1)
        try:
            vectors = pending.get(timeout=self.timeout_s)
        except multiprocessing.TimeoutError:
            raise TimeoutError(f"{self.workers} embedding workers gave no answer in {self.timeout_s:.0f} s "
                               f"for {len(texts)} texts (a worker failed to start or died: see its output above)") from None
        self.dispatched += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for part, block in zip(parts, vectors):
            out[part] = block
        return out


@contextmanager
def pooled(embedder: Embedder, workers: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[Embedder]:
    """`embedder` with its model calls spread over `workers` processes for the block; workers <= 1
    gives `embedder` itself. A CachedEmbedder keeps its cache file and key, with the pool under it,
    so only this process reads and writes the cache."""
    if workers <= 1:
        yield embedder
        return
    from core.retrieval.cache import CachedEmbedder

    inner = embedder.inner if isinstance(embedder, CachedEmbedder) else embedder
    with EmbedPool(inner, workers, timeout_s) as pool:
        if isinstance(embedder, CachedEmbedder):
            yield CachedEmbedder(pool, embedder.path.parent, key=embedder.key)
        else:
            yield pool
