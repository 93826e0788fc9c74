"""`--workers N` (issue 31): the heavy builds (MCTS knowledge base, LongMemEval haystack indexes)
give the same result with worker processes as without, and the workers always stop."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from core.embed_pool import EmbedPool, pooled
from core.resources import Embedder, HashingEmbedder

pytestmark = pytest.mark.timeout(300)  # a pool that hangs fails the test instead of the run

TEXTS = [f"Sentence {i} says that {'dogs' if i % 2 else 'cats'} like " + "long walks " * (i % 9) for i in range(120)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _worker_pids(pool: EmbedPool) -> list[int]:
    return [p.pid for p in pool._pool._pool]  # multiprocessing.Pool's processes (for the test only)


def test_pool_gives_the_embedders_vectors_and_stops_its_workers():
    inner = HashingEmbedder(64)
    with EmbedPool(inner, 2) as pool:
        pids = _worker_pids(pool)
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        vectors = pool.encode(TEXTS, batch_size=16)
        assert pool.dispatched == len(TEXTS)  # went through the workers
        assert np.array_equal(vectors, inner.encode(TEXTS))  # in the callers' order
        pool.encode(TEXTS[:3])
        assert pool.dispatched == len(TEXTS)  # a short call runs here
    assert not any(_alive(p) for p in pids)


def test_workers_are_terminated_when_the_block_fails():
    with pytest.raises(KeyError):
        with EmbedPool(HashingEmbedder(32), 2) as pool:
            pids = _worker_pids(pool)
            raise KeyError("stop")
    assert not any(_alive(p) for p in pids)


def _cannot_load():
    raise OSError("model folder is gone")


class Unloadable(HashingEmbedder):
    """Pickles fine here, fails to load in a worker (a model path the worker cannot read)."""

    def __reduce__(self):
        return (_cannot_load, ())


def test_a_worker_that_cannot_load_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match="could not load the embedder: OSError: model folder is gone"):
        with EmbedPool(Unloadable(16), 2):
            pass


class Local(Embedder):
    name, dim = "local", 4

    def __init__(self) -> None:
        self.fn = lambda text: text  # a lambda cannot be pickled

    def encode(self, texts, batch_size: int = 64):
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_an_embedder_that_cannot_travel_is_refused_at_once():
    with pytest.raises(ValueError, match="cannot be sent to worker processes"):
        EmbedPool(Local(), 2)
    with pooled(Local(), 1) as same:  # one worker: the embedder itself, no pool
        assert isinstance(same, Local)


def test_pooled_cache_is_written_by_this_process_only(tmp_path):
    from core.retrieval.cache import CachedEmbedder

    cached = CachedEmbedder(HashingEmbedder(64), tmp_path)
    with pooled(cached, 2) as parallel:
        assert isinstance(parallel, CachedEmbedder) and isinstance(parallel.inner, EmbedPool)
        assert parallel.path == cached.path and parallel.key == cached.key
        first = parallel.encode(TEXTS)
        assert parallel.inner.dispatched == len(TEXTS)
    again = CachedEmbedder(HashingEmbedder(64), tmp_path)
    assert np.array_equal(again.encode(TEXTS), first) and again.computed == 0  # all from the shared file


@pytest.fixture()
def dispatched(monkeypatch) -> list[int]:
    """Texts each pool's workers embedded, recorded as the pool stops (a build that quietly ran in
    one process would record nothing)."""
    counts, close = [], EmbedPool.close

    def spy(pool, graceful: bool = True):
        if pool._pool is not None:
            counts.append(pool.dispatched)
        close(pool, graceful)

    monkeypatch.setattr(EmbedPool, "close", spy)
    return counts


# -- the MCTS knowledge base ----------------------------------------------------------------------
def _kb_slice(shared_data: Path, folder: Path, rows: int = 200) -> Path:
    """The first `rows` rows of the shared GenericsKB sample, as a file of their own."""
    with (shared_data / "genericskb" / "GenericsKB.txt").open(encoding="utf-8", newline="") as f:
        lines = [next(f) for _ in range(rows)]
    path = folder / "kb200.txt"
    path.write_text("".join(lines), encoding="utf-8", newline="")
    return path


def _assert_same_kb(a, b, atol: float) -> None:
    assert a.texts == b.texts and a.terms == b.terms and a.concepts == b.concepts
    for name in ("sent_ptr", "sent_concepts", "concept_ptr", "concept_sents"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    np.testing.assert_allclose(a.vectors, b.vectors, atol=atol, rtol=0)
    np.testing.assert_allclose(a.concept_vectors, b.concept_vectors, atol=atol, rtol=0)
    assert np.array_equal(a.groups.labels, b.groups.labels)


def _build(path: Path, embedder, workers: int, cache: Path):
    from core.methods.mcts.config import KBSettings
    from core.methods.mcts.kb import load_or_build

    return load_or_build(path, embedder, KBSettings(workers=workers, cache_dir=str(cache), embedding_cache=False))


def test_kb_with_two_workers_equals_one(shared_data, tmp_path, dispatched):
    """spaCy parses in 2 processes, 2 workers embed: texts, concepts, postings and groups identical."""
    path = _kb_slice(shared_data, tmp_path)
    one = _build(path, HashingEmbedder(128), 1, tmp_path / "c1")
    two = _build(path, HashingEmbedder(128), 2, tmp_path / "c2")
    assert len(one) == 200 and len(one.concepts) > 200 and two.header["workers"] == 2
    assert dispatched == [200 + len(one.concepts)]  # sentences and concepts, all by the workers
    _assert_same_kb(one, two, atol=0)


@pytest.mark.slow
def test_kb_with_two_workers_equals_one_with_the_real_embedder(shared_data, embedder, tmp_path, dispatched):
    """The sentence embedder in 2 worker processes (each at one torch thread): vectors within 1e-5."""
    path = _kb_slice(shared_data, tmp_path)
    one = _build(path, embedder, 1, tmp_path / "c1")
    _assert_same_kb(one, _build(path, embedder, 2, tmp_path / "c2"), atol=1e-5)
    assert dispatched == [200 + len(one.concepts)]


# -- a LongMemEval-S haystack ---------------------------------------------------------------------
def _one_haystack(shared_data: Path, folder: Path) -> Path:
    data = json.loads((shared_data / "longmemeval" / "longmemeval_s_subset.json").read_text())
    path = folder / "one.json"
    path.write_text(json.dumps(data[:1]))
    return path


def _items(out: Path) -> list[dict]:
    from core.benchmarks.retrieval_common import TIMED_FIELDS

    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    for row in rows:
        for key in TIMED_FIELDS:
            row.pop(key, None)
        for method in row["methods"].values():
            for key in TIMED_FIELDS | {"index_mb"}:
                method.pop(key, None)
    return rows


def _haystack_runs(data: Path, tmp_path: Path, embedder: str, methods: str, dispatched: list) -> tuple[dict, dict]:
    from core import cli

    argv = ["bench", "longmemeval-retrieval", "--data", str(data), "--methods", methods, "--embedder", embedder,
            "--ks", "5,10", "--quiet", "--time-query-embedding", "0"]
    summaries = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        # separate caches: the second run must embed too, not read the first one's vectors
        assert cli.main([*argv, "--out", str(out), "--embedding-cache", str(tmp_path / f"cache{workers}"),
                         "--workers", str(workers)]) == 0
        summaries[workers] = json.loads((out / "summary.json").read_text())
    assert _items(tmp_path / "w1") == _items(tmp_path / "w2")
    assert len(dispatched) == 1 and dispatched[0] > 500  # the 2-worker run's haystack went to its workers
    settings = [{k: v for k, v in summaries[w]["settings"].items() if k != "embedding_cache"} for w in (1, 2)]
    assert settings[0] == settings[1] and "workers" not in settings[0]  # --workers says how, not what
    return summaries[1], summaries[2]


def test_haystack_index_with_two_workers_equals_one(shared_data, tmp_path, dispatched):
    one, two = _haystack_runs(_one_haystack(shared_data, tmp_path), tmp_path, "hashing", "rag-t,rag-r,rag-s,sgmem-t",
                              dispatched)
    assert one["results"] == two["results"] and one["embedded_texts"] == two["embedded_texts"] > 500


@pytest.mark.slow
def test_haystack_index_with_two_workers_equals_one_with_the_real_embedder(shared_data, tmp_path, dispatched):
    """Rankings and recall identical with minilm in 2 workers (vectors differ by ~1e-7 at most)."""
    one, two = _haystack_runs(_one_haystack(shared_data, tmp_path), tmp_path, "minilm", "rag-t,rag-s", dispatched)
    assert one["results"] == two["results"]
