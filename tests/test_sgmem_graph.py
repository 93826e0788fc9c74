"""Sentence graph construction: membership edges, KNN edges, incremental = batch, hop expansion."""

from __future__ import annotations

import numpy as np
import pytest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.graph import SentenceGraph
from core.methods.sgmem.retriever import SGMemRetriever
from core.resources import HashingEmbedder, normalise
from tests.sgmem_helpers import TableEmbedder

# Four 2-d unit vectors at angles 0, 10, 80 and 90 degrees: a~b close, c~d close, b-c far.
ANGLES = {"a": 0, "b": 10, "c": 80, "d": 90}


def vec(deg: float) -> np.ndarray:
    r = np.radians(deg)
    return np.array([np.cos(r), np.sin(r)], dtype=np.float32)


def small_graph(k: int) -> SentenceGraph:
    g = SentenceGraph(2, k)
    names = list(ANGLES)
    g.add(names, [f"T:{i}" for i in range(4)], [{"turn": f"T:{i}", "round": "r", "session": "T"} for i in range(4)],
          np.stack([vec(ANGLES[n]) for n in names]))
    return g


def test_knn_edges_k1_by_hand():
    g = small_graph(k=1)
    # nearest neighbours: a->b (10 deg), b->a, c->d, d->c
    assert g.knn_edges() == {(0, 1), (1, 0), (2, 3), (3, 2)}


def test_knn_edges_k2_by_hand():
    g = small_graph(k=2)
    # a: b (10), c (80); b: a (10), c (70); c: d (10), b (70); d: c (10), b (80)
    assert g.knn_edges() == {(0, 1), (0, 2), (1, 0), (1, 2), (2, 3), (2, 1), (3, 2), (3, 1)}


def test_knn_matches_brute_force_and_has_no_self_loops():
    rng = np.random.default_rng(0)
    vectors = normalise(rng.normal(size=(30, 8)))
    g = SentenceGraph(8, 3)
    g.add([str(i) for i in range(30)], ["t"] * 30, [{"turn": "t", "round": "r", "session": "s"}] * 30, vectors)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    expected = {(i, int(j)) for i in range(30) for j in np.argsort(-sims[i])[:3]}
    assert g.knn_edges() == expected
    assert all(i != j for i, j in g.knn_edges())


def test_fewer_sentences_than_k():
    g = SentenceGraph(2, 5)
    g.add(["a", "b"], ["t", "t"], [{}, {}], np.stack([vec(0), vec(10)]))
    assert g.knn_edges() == {(0, 1), (1, 0)}


@pytest.mark.parametrize("k", [1, 3])
def test_incremental_add_equals_batch_build(k):
    rng = np.random.default_rng(1)
    vectors = normalise(rng.normal(size=(40, 6)))
    vectors[7] = vectors[3]  # an exact duplicate: ties must break the same way
    meta = [{"turn": str(i), "round": "r", "session": "s"} for i in range(40)]
    batch = SentenceGraph(6, k)
    batch.add([str(i) for i in range(40)], [str(i) for i in range(40)], meta, vectors)
    step = SentenceGraph(6, k)
    for start, stop in [(0, 1), (1, 2), (2, 9), (9, 10), (10, 25), (25, 40)]:
        step.add([str(i) for i in range(start, stop)], [str(i) for i in range(start, stop)], meta[start:stop], vectors[start:stop])
    assert step.knn_edges() == batch.knn_edges()
    np.testing.assert_array_equal(step.knn_ids, batch.knn_ids)


def test_hop_expansion_is_undirected_and_bounded():
    g = small_graph(k=1)  # edges a<->b, c<->d
    assert g.expand([0], 0) == {0}
    assert g.expand([0], 1) == {0, 1}
    assert g.expand([0], 2) == {0, 1}  # c and d are not reachable
    chain = SentenceGraph(2, 1)
    # angles 0, 20, 45, 75: nearest of 45 is 20 and of 75 is 45: a chain 0-1-2-3 when undirected
    chain.add(list("wxyz"), list("wxyz"), [{}] * 4, np.stack([vec(d) for d in (0, 20, 45, 75)]))
    assert chain.knn_edges() == {(0, 1), (1, 0), (2, 1), (3, 2)}
    assert chain.expand([0], 1) == {0, 1}
    assert chain.expand([0], 2) == {0, 1, 2}
    assert chain.expand([0], 3) == {0, 1, 2, 3}
    assert chain.expand([3], 1) == {3, 2}  # 3 -> 2 is 3's own edge; walking back along 2 -> 1 needs a second hop


def dialogue() -> Dialogue:
    turns = [
        Turn(USER, "I adopted a dog. Her name is Luna.", "D1:1", 1, "Ann", "1 May 2023"),
        Turn(ASSISTANT, "What a lovely name!", "D1:2", 1, "Bob", "1 May 2023"),
        Turn(USER, "I started painting.", "D2:1", 2, "Ann", "9 May 2023"),
        Turn(ASSISTANT, "Painting is fun. I paint too.", "D2:2", 2, "Bob", "9 May 2023"),
    ]
    return Dialogue.from_turns(turns, id="toy")


def test_membership_edges_at_each_level():
    r = SGMemRetriever(HashingEmbedder(64), SGMemConfig(knn_k=1))
    r.index(dialogue())
    texts = [n.text for n in r.graph.nodes]
    assert texts == ["I adopted a dog.", "Her name is Luna.", "What a lovely name!", "I started painting.",
                     "Painting is fun.", "I paint too."]
    assert r.graph.members("turn") == {"D1:1": [0, 1], "D1:2": [2], "D2:1": [3], "D2:2": [4, 5]}
    assert r.graph.members("round") == {"round:D1:1": [0, 1, 2], "round:D2:1": [3, 4, 5]}
    assert r.graph.members("session") == {"D1": [0, 1, 2], "D2": [3, 4, 5]}


def test_retriever_incremental_observe_equals_index():
    emb = HashingEmbedder(64)
    whole = SGMemRetriever(emb, SGMemConfig(knn_k=2))
    whole.index(dialogue())
    step = SGMemRetriever(emb, SGMemConfig(knn_k=2))
    for t in dialogue().turns():
        step.add_turns([t])
    assert step.graph.knn_edges() == whole.graph.knn_edges()
    assert [n.chunks for n in step.graph.nodes] == [n.chunks for n in whole.graph.nodes]
    q = "what is the dog called"
    assert [(e.source, e.score) for e in step.retrieve(q, 3)] == [(e.source, e.score) for e in whole.retrieve(q, 3)]


def test_table_embedder_prefix_is_ignored():
    emb = TableEmbedder({"x": (1.0, 0.0)})
    assert np.allclose(emb.encode(["Ann: x"]), [[1.0, 0.0]])


def test_large_graph_with_many_ties_matches_brute_force_and_incremental():
    """Beyond ~50 sentences the KNN uses a partial sort; 30 copies of one sentence test its tie path."""
    rng = np.random.default_rng(2)
    vectors = normalise(rng.normal(size=(200, 5)))
    vectors[50:80] = vectors[10]
    meta = [{}] * 200
    batch = SentenceGraph(5, 3)
    batch.add(["s"] * 200, ["t"] * 200, meta, vectors)
    sims = np.round(vectors.astype(np.float64) @ vectors.T.astype(np.float64), 6)
    np.fill_diagonal(sims, -np.inf)
    expected = np.stack([np.lexsort((np.arange(200), -row))[:3] for row in sims])
    np.testing.assert_array_equal(batch.knn_ids, expected)
    step = SentenceGraph(5, 3)
    for start in range(0, 200, 37):
        stop = min(200, start + 37)
        step.add(["s"] * (stop - start), ["t"] * (stop - start), meta[start:stop], vectors[start:stop])
    np.testing.assert_array_equal(step.knn_ids, batch.knn_ids)
