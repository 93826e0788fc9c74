"""SGMem retrieval steps against hand-computed scores; chunk-RAG and BM25 baselines; recall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.benchmarks.retrieval_common import context_for, turn_scores
from core.dialogue import ASSISTANT, USER, Dialogue, Evidence, Turn
from core.methods.chunkrag import BM25Retriever, ChunkRAGRetriever
from core.methods.sgmem.config import LOCOMO_DEFAULTS, LONGMEMEVAL_DEFAULTS, SGMemConfig
from core.methods.sgmem.retriever import SGMemRetriever
from core.methods.retrievers import make_retriever
from core.resources import HashingEmbedder
from core.retrieval import RetrieverContext, retrieved_turn_ids
from tests.sgmem_helpers import TableEmbedder


def deg(d: float) -> tuple[float, float]:
    return (math.cos(math.radians(d)), math.sin(math.radians(d)))


# Query at 0 degrees; sentence cosines: Alpha 1.0, Delta cos20=0.9397, Beta 0.5, Gamma cos85=0.0872, Eps 0.
TABLE = {"Q?": deg(0), "Alpha.": deg(0), "Beta.": deg(60), "Gamma.": deg(85), "Delta.": deg(20), "Eps.": deg(90)}
COS20, COS85 = math.cos(math.radians(20)), math.cos(math.radians(85))


def toy() -> Dialogue:
    return Dialogue.from_turns([
        Turn(USER, "Alpha. Beta.", "D1:1", 1, "Ann", "May 1"),
        Turn(ASSISTANT, "Gamma.", "D1:2", 1, "Bob", "May 1"),
        Turn(USER, "Delta.", "D2:1", 2, "Ann", "May 9"),
        Turn(ASSISTANT, "Eps.", "D2:2", 2, "Bob", "May 9"),
    ])


def sgmem(level="turn", **kw) -> SGMemRetriever:
    config = SGMemConfig(chunk_level=level, **{"knn_k": 1, "hops": 1, "max_sentences": 3, "gamma": 1.2, **kw})
    r = SGMemRetriever(TableEmbedder(TABLE), config)
    r.index(toy())
    return r


def test_knn_graph_of_the_toy():
    # nearest: Alpha->Delta, Beta->Gamma, Gamma->Eps, Delta->Alpha, Eps->Gamma
    assert sgmem().graph.knn_edges() == {(0, 3), (1, 2), (2, 4), (3, 0), (4, 2)}


def test_seeds_expansion_and_chunk_means_by_hand():
    hits = sgmem().search("Q?", 5)
    assert hits.seeds == (0, 3, 1)  # Alpha 2.0, Delta 1.94, Beta 1.5: all >= gamma 1.2, n = 3
    assert hits.expanded == (2,)  # Beta's neighbour Gamma; Eps is two hops away
    assert hits.sentence_scores[2] == pytest.approx(1 + COS85, abs=1e-6)
    scores = dict(hits.chunk_scores)
    assert scores["D2:1"] == pytest.approx(1 + COS20, abs=1e-6)
    assert scores["D1:1"] == pytest.approx((2.0 + 1.5) / 2, abs=1e-6)  # mean, not max: Beta drags Alpha's turn down
    assert scores["D1:2"] == pytest.approx(1 + COS85, abs=1e-6)
    assert [e.source for e in hits.chunks] == ["D2:1", "D1:1", "D1:2"]
    assert "D2:2" not in scores


def test_threshold_gamma_and_max_nodes():
    hits = sgmem(gamma=1.6).search("Q?", 5)  # Beta (1.5) falls under gamma, so Gamma is not reached
    assert hits.seeds == (0, 3) and hits.expanded == ()
    assert [e.source for e in hits.chunks] == ["D1:1", "D2:1"]
    assert hits.chunks[0].score == pytest.approx(2.0, abs=1e-6)
    one = sgmem(max_sentences=1).search("Q?", 5)  # n = 1: Alpha only, plus its neighbour Delta
    assert one.seeds == (0,) and one.expanded == (3,)


def test_no_hops_keeps_only_seeds():
    hits = sgmem(hops=0).search("Q?", 5)
    assert hits.expanded == () and [e.source for e in hits.chunks] == ["D2:1", "D1:1"]


def test_session_and_round_levels():
    hits = sgmem(level="session").search("Q?", 5)
    scores = dict(hits.chunk_scores)
    assert scores["D1"] == pytest.approx((2.0 + 1.5 + 1 + COS85) / 3, abs=1e-6)
    assert scores["D2"] == pytest.approx(1 + COS20, abs=1e-6)
    assert hits.chunks[0].meta["turn_ids"] == ["D2:1", "D2:2"]
    rounds = dict(sgmem(level="round").search("Q?", 5).chunk_scores)
    assert set(rounds) == {"round:D1:1", "round:D2:1"}


def test_top_k_truncates_and_evidence_carries_turn_ids():
    hits = sgmem().search("Q?", 1)
    assert [e.source for e in hits.chunks] == ["D2:1"]
    assert hits.chunks[0].meta["turn_ids"] == ["D2:1"] and hits.chunks[0].kind == "turn"


def test_paper_defaults():
    assert (LOCOMO_DEFAULTS.knn_k, LOCOMO_DEFAULTS.hops, LOCOMO_DEFAULTS.max_sentences, LOCOMO_DEFAULTS.gamma,
            LOCOMO_DEFAULTS.top_k) == (1, 1, 15, 1.2, 5)
    assert (LONGMEMEVAL_DEFAULTS.knn_k, LONGMEMEVAL_DEFAULTS.hops, LONGMEMEVAL_DEFAULTS.max_sentences,
            LONGMEMEVAL_DEFAULTS.gamma, LONGMEMEVAL_DEFAULTS.top_k) == (3, 1, 15, 1.0, 5)
    with pytest.raises(ValueError):
        SGMemConfig(gamma=2.5)
    with pytest.raises(ValueError):
        SGMemConfig(chunk_level="paragraph")
    assert SGMemConfig(memory="ifm").memory == "mfi"


def test_rag_ranks_chunks_by_cosine():
    r = ChunkRAGRetriever(TableEmbedder({**TABLE, "Ann: Alpha. Beta.": deg(30), "Bob: Gamma.": deg(85),
                                         "Ann: Delta.": deg(20), "Bob: Eps.": deg(90)}), "turn")
    r.index(toy())
    got = r.retrieve("Q?", 3)
    assert [e.source for e in got] == ["D2:1", "D1:1", "D1:2"]
    assert [round(e.score, 4) for e in got] == [round(COS20, 4), round(math.cos(math.radians(30)), 4), round(COS85, 4)]


def test_bm25_prefers_the_rare_matching_term():
    d = Dialogue.from_turns([
        Turn(USER, "I love hiking in the mountains", "D1:1", 1, "Ann"),
        Turn(ASSISTANT, "The mountains are nice", "D1:2", 1, "Bob"),
        Turn(USER, "My cat is called Whiskers", "D1:3", 1, "Ann"),
        Turn(ASSISTANT, "Nice to hear", "D1:4", 1, "Bob"),
    ])
    r = BM25Retriever("turn")
    r.index(d)
    top = r.retrieve("what is the name of my cat", 2)
    assert top[0].source == "D1:3" and top[0].score > top[1].score
    sessions = BM25Retriever("session")
    sessions.index(d)
    assert sessions.retrieve("cat", 5)[0].meta["turn_ids"] == ["D1:1", "D1:2", "D1:3", "D1:4"]


def test_names_build_the_right_retrievers():
    ctx = RetrieverContext(HashingEmbedder(32))
    assert make_retriever("rag-s", ctx).level == "session"
    assert make_retriever("sgmem-r", ctx).config.chunk_level == "round"
    assert make_retriever("bm25-t", ctx).name == "bm25-t"
    with pytest.raises(ValueError):
        make_retriever("rag-sf", ctx)  # generated memory needs an LLM-backed provider
    with pytest.raises(ValueError):
        make_retriever("nope-t", ctx)


def test_recall_and_hit_by_hand():
    ev = [Evidence("x", 1.0, "c1", "round", {"turn_ids": ["D1:1", "D1:2"]}),
          Evidence("fact", 0.9, "D1", "fact", {}),
          Evidence("y", 0.8, "c2", "round", {"turn_ids": ["D3:1", "D3:2"]})]
    assert turn_scores(ev, ["D1:2", "D3:2", "D9:9"], [1, 2]) == {
        "recall@1": pytest.approx(1 / 3), "hit@1": 1.0, "recall@2": pytest.approx(2 / 3), "hit@2": 1.0}
    by_session = turn_scores(ev, ["D3:0", "D4:0"], [1], unit=lambda t: t.split(":")[0], prefix="session_")
    assert by_session == {"session_recall@1": 0.0, "session_hit@1": 0.0}
    assert [e.source for e in context_for(ev, 1)] == ["c1", "D1"]
    assert retrieved_turn_ids(ev) == ["D1:1", "D1:2", "D3:1", "D3:2"]
