"""VectorIndex against brute-force numpy search, incremental adds, and save/load."""

from __future__ import annotations

import numpy as np
import pytest

from core.resources import normalise
from core.vectors import IndexFormatError, VectorIndex


def _brute_force(base: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ base.T), axis=1, kind="stable")[:, :k]


@pytest.fixture()
def data():
    rng = np.random.default_rng(0)
    return normalise(rng.normal(size=(500, 32))), normalise(rng.normal(size=(20, 32)))


def test_search_matches_brute_force(data):
    base, queries = data
    index = VectorIndex(32, use_gpu=False)
    index.add(base, [f"item{i}" for i in range(len(base))])
    hits = index.search(queries, 10)
    expected = _brute_force(base, queries, 10)
    assert [[h.id for h in row] for row in hits] == expected.tolist()
    for row, q in zip(hits, queries):
        assert [h.item for h in row] == [f"item{h.id}" for h in row]
        np.testing.assert_allclose([h.score for h in row], base[[h.id for h in row]] @ q, rtol=1e-5, atol=1e-5)


def test_incremental_add_equals_one_batch(data):
    base, queries = data
    one, parts = VectorIndex(32, use_gpu=False), VectorIndex(32, use_gpu=False)
    one.add(base, list(range(500)))
    for start in range(0, 500, 123):
        ids = parts.add(base[start : start + 123], list(range(start, min(500, start + 123))))
        assert ids[0] == start
    assert [[h.id for h in r] for r in one.search(queries, 5)] == [[h.id for h in r] for r in parts.search(queries, 5)]


def test_k_larger_than_index_and_empty_index():
    index = VectorIndex(4, use_gpu=False)
    assert index.search(np.ones((1, 4)), 3) == [[]]
    index.add(normalise(np.eye(4)[:2]), ["a", "b"])
    assert len(index.search(normalise(np.ones((1, 4))), 10)[0]) == 2


def test_save_load_round_trip(tmp_path, data):
    base, queries = data
    index = VectorIndex(32, use_gpu=False)
    index.add(base, [{"id": i, "text": f"t{i}"} for i in range(len(base))])
    path = tmp_path / "ix.bin"
    index.save(path)
    loaded = VectorIndex.load(path, use_gpu=False)
    assert loaded.items == index.items and loaded.dim == 32
    assert [[(h.id, h.item) for h in r] for r in loaded.search(queries, 7)] == [[(h.id, h.item) for h in r] for r in index.search(queries, 7)]
    np.testing.assert_allclose(loaded.vectors(), base, atol=1e-6)


def test_load_rejects_other_files_and_mismatches(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"hello world")
    with pytest.raises(IndexFormatError, match="magic"):
        VectorIndex.load(bad)
    index = VectorIndex(8, use_gpu=False)
    index.add(normalise(np.ones((2, 8))), ["a", "b"])
    path = tmp_path / "ix.bin"
    index.save(path)
    with pytest.raises(IndexFormatError, match="dimension 8, expected 384"):
        VectorIndex.load(path, expect_dim=384)
    future = path.read_bytes().replace(b'"format": 1', b'"format": 9')
    path.write_bytes(future)
    with pytest.raises(IndexFormatError, match="format 9"):
        VectorIndex.load(path)


def test_wrong_dimension_and_count_mismatch_rejected():
    index = VectorIndex(4, use_gpu=False)
    with pytest.raises(ValueError, match="dimension 3"):
        index.add(np.ones((1, 3)), ["x"])
    with pytest.raises(ValueError, match="2 vectors but 1 items"):
        index.add(np.ones((2, 4)), ["x"])
