"""Hybrid retrieval (issue 18): fusion against hand-computed ranks, the bm25s sentence index against
rank-bm25, equal-token accounting, SGMem with hybrid seeds, the hybrid chunk baseline, and a
LongMemEval-S haystack end to end."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.benchmarks.retrieval_common import budget_scores, parse_budgets
from core.dialogue import ASSISTANT, USER, Dialogue, Evidence, Turn
from core.methods.retrievers import make_retriever, uses_llm
from core.methods.sgmem.config import HYBRID_DEFAULTS, SGMemConfig
from core.methods.sgmem.retriever import SGMemRetriever
from core.resources import HashingEmbedder
from core.retrieval import RetrieverContext
from core.retrieval.fusion import FusionSettings, fuse, minmax, rank_positions, rrf, top_ids
from core.retrieval.sparse import SparseIndex
from core.text import words


# -- fusion ----------------------------------------------------------------------------------------
def test_rank_positions_break_ties_by_index_and_skip_invalid():
    assert rank_positions(np.array([0.2, 0.9, 0.2, 0.5])).tolist() == [3, 1, 4, 2]
    assert rank_positions(np.array([0.0, 3.0, 1.0]), np.array([False, True, True])).tolist() == [0, 1, 2]


def test_rrf_matches_hand_computed_scores():
    # dense ranks d0 > d1 > d2 > d3; BM25 matches d2 best, then d3; d0 and d1 share no word with the query
    dense = np.array([0.9, 0.8, 0.5, 0.1])
    sparse = np.array([0.0, 0.0, 4.0, 1.0])
    fused = fuse(dense, sparse, FusionSettings("rrf", dense_weight=0.5, rrf_k=60))
    expected = [0.5 / 61, 0.5 / 62, 0.5 / 63 + 0.5 / 61, 0.5 / 64 + 0.5 / 62]
    np.testing.assert_allclose(fused, expected)
    assert top_ids(fused, 4) == [2, 3, 0, 1]  # both lists agree on d2 and d3: they overtake d0
    # depth cuts the tail of each list: with depth 1 only the two list heads score
    np.testing.assert_allclose(rrf([np.array([1, 2, 3]), np.array([0, 1, 2])], [1.0, 1.0], k=0, depth=1), [1.0, 1.0, 0.0])


def test_convex_combination_matches_hand_computed_scores():
    dense = np.array([0.2, 0.6, 0.4])  # minmax -> 0, 1, 0.5
    sparse = np.array([10.0, 0.0, 5.0])  # minmax -> 1, 0, 0.5
    fused = fuse(dense, sparse, FusionSettings("convex", dense_weight=0.25))
    np.testing.assert_allclose(fused, [0.75, 0.25, 0.5])
    assert minmax(np.array([3.0, 3.0])).tolist() == [0.0, 0.0]  # flat scores carry no preference
    with pytest.raises(ValueError):
        FusionSettings("sum")


# -- sparse index ----------------------------------------------------------------------------------
CORPUS = ["the cat sat on the mat", "a dog chased the cat around the yard", "my violin lessons start in May",
          "Caroline adopted a guinea pig", "the yard needs mowing before May", "violin and piano duets at the school",
          "Melanie painted a sunrise over the lake", "we watched fireworks at the lake"]


def test_bm25s_sentence_index_matches_rank_bm25():
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi([words(t) for t in CORPUS])
    index = SparseIndex(method="robertson")
    index.add(CORPUS[:5])
    index.add(CORPUS[5:])  # added later: rebuilt lazily, same as one batch
    for query in ["violin lessons May", "cat yard", "guinea pig", "lake sunrise painting", "zebra"]:
        expected = reference.get_scores(words(query))
        # every query word occurs in fewer than half the documents, so no idf is negative; bm25s
        # leaves out rank-bm25's constant factor (k1 + 1)
        np.testing.assert_allclose(index.scores(query) * (1.5 + 1), expected, rtol=1e-5, atol=1e-6)


def test_lucene_bm25_matches_the_formula():
    index = SparseIndex()  # lucene: idf = log(1 + (N - df + 0.5) / (df + 0.5)); tf part as Robertson's
    index.add(CORPUS)
    docs = [words(t) for t in CORPUS]
    avgdl = sum(map(len, docs)) / len(docs)
    query = ["the", "violin"]
    expected = []
    for d in docs:
        total = 0.0
        for w in query:
            df = sum(w in x for x in docs)
            tf = d.count(w)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + 1.5 * (1 - 0.75 + 0.75 * len(d) / avgdl))
        expected.append(total)
    np.testing.assert_allclose(index.scores("The violin!"), expected, rtol=1e-5)
    assert index.scores("nothing matches").tolist() == [0.0] * len(CORPUS)
    assert SparseIndex().scores("anything").shape == (0,)


# -- equal token budgets ---------------------------------------------------------------------------
def ev(source: str, turn_ids: list[str], tokens: list[int]) -> Evidence:
    return Evidence("", 1.0, source, "round", {"turn_ids": turn_ids, "turn_tokens": tokens})


def test_budget_counts_turns_in_rank_order_until_the_first_overflow():
    ranked = [ev("r1", ["D1:1", "D1:2"], [30, 50]), ev("r2", ["D2:1", "D2:2"], [40, 10]), ev("r3", ["D3:1"], [5])]
    # 30 + 50 + 40 = 120 fits 125; D2:2 (10 more) would make 130: the list stops there, D3:1 never counts
    out = budget_scores(ranked, ["D2:1", "D3:1"], 125)
    assert out == {"tok_recall@125": 0.5, "tok_used@125": 120.0}
    assert budget_scores(ranked, ["D1:1"], 29) == {"tok_recall@29": 0.0, "tok_used@29": 0.0}
    assert budget_scores(ranked, ["D3:1", "D1:2"], 1000) == {"tok_recall@1000": 1.0, "tok_used@1000": 135.0}
    memory = Evidence("a fact", 1.0, "D1", "fact", {})  # generated memory is not dialogue context
    assert budget_scores([memory] + ranked, ["D1:1"], 30)["tok_recall@30"] == 1.0
    with pytest.raises(ValueError, match="turn_tokens"):
        budget_scores([Evidence("", 1.0, "x", "turn", {"turn_ids": ["x"]})], ["x"], 10)
    assert parse_budgets("t=200,r=400,s=4000") == {"turn": 200, "round": 400, "session": 4000}
    with pytest.raises(ValueError):
        parse_budgets("t=200,x=3")


def test_chunk_evidence_carries_the_token_count_of_each_turn():
    d = chat()
    r = make_retriever("rag-r", RetrieverContext(HashingEmbedder(64)))
    r.index(d)
    for e in r.retrieve("violin", 3):
        assert len(e.meta["turn_tokens"]) == len(e.meta["turn_ids"]) and all(n > 0 for n in e.meta["turn_tokens"])


# -- retrievers ------------------------------------------------------------------------------------
def chat() -> Dialogue:
    d = Dialogue()
    lines = [(USER, "I started violin lessons with Mrs Okafor in May."), (ASSISTANT, "That sounds lovely."),
             (USER, "My guinea pig Oscar loves carrots."), (ASSISTANT, "Cute! What else does he eat?"),
             (USER, "We went hiking near Lake Tahoe last weekend."), (ASSISTANT, "Beautiful place for a hike.")]
    for i, (role, text) in enumerate(lines):
        d.add(Turn(role, text, session=i // 4, turn_id=f"D{i // 4 + 1}:{i % 4 + 1}"))
    return d


def test_names_parse_and_hybrid_variants_need_no_llm():
    assert not uses_llm("sgmem-t+h") and not uses_llm("hybrid-s") and uses_llm("sgmem-tf")
    ctx = RetrieverContext(HashingEmbedder(64))
    assert make_retriever("sgmem-r+h", ctx).name == "sgmem-r+h"
    assert make_retriever("sgmem-r", ctx).config.hybrid is None
    assert make_retriever("hybrid-s", ctx).name == "hybrid-s"
    with pytest.raises(ValueError):
        make_retriever("hybrid-tf", ctx)


def test_hybrid_seeds_find_a_rare_name_the_dense_side_misses():
    """A 16-dimension hashing embedder blurs words together; BM25 still matches the rare name."""
    d = chat()
    config = SGMemConfig(chunk_level="turn", knn_k=1, hops=0, max_sentences=2, top_k=1,
                         hybrid=FusionSettings("rrf", dense_weight=0.3, rrf_k=1))
    hybrid = SGMemRetriever(HashingEmbedder(16), config)
    hybrid.index(d)
    hits = hybrid.search("Okafor")
    assert hits.chunks[0].meta["turn_ids"] == ["D1:1"]
    assert set(hits.sentence_scores) >= set(hits.seeds)
    assert hybrid.settings()["fusion"].startswith("RRF") and hybrid.nbytes() > 0


def test_hybrid_chunk_baseline_fuses_both_rankings():
    d = chat()
    r = make_retriever("hybrid-t", RetrieverContext(HashingEmbedder(64)))
    r.index(d)
    found = r.retrieve("guinea pig carrots", 2)
    assert found[0].source == "D1:3" and len(found) == 2 and found[0].score >= found[1].score


def test_hybrid_defaults_are_valid():
    assert HYBRID_DEFAULTS.hybrid is not None and HYBRID_DEFAULTS.max_sentences >= 1


# -- LongMemEval-S, one haystack end to end ----------------------------------------------------------
def test_longmemeval_s_haystack_end_to_end(tmp_path, shared_data):
    from core.benchmarks.runner import BenchContext, read_run, run_benchmark

    data = shared_data / "longmemeval" / "longmemeval_s_subset.json"
    if not data.is_file():
        pytest.skip(f"{data} not found")
    methods = ["bm25-s", "hybrid-s", "sgmem-s+h"]
    ctx = BenchContext(name="longmemeval-retrieval", data=data, out=tmp_path / "out", methods=methods, limit=1, seed=0,
                       options={"embedder": "hashing", "embedding_cache": str(tmp_path / "emb"), "ks": "5,10"}, progress=False)
    run_benchmark(ctx)
    summary, items = read_run(tmp_path / "out")
    assert len(items) == 1 and summary["settings"]["budgets"]["session"] == 10000
    for m in methods:
        res = summary["results"][m]
        assert 0.0 <= res["recall@5"] <= res["recall@10"] <= 1.0
        assert res["tok_used@10000"] <= 10000 and "session_recall@10" in res
        assert len(items[0]["methods"][m]["chunks"]) == 10
    assert summary["results"]["sgmem-s+h"]["index_mb_mean"] > 0 and summary["peak_rss_mb"] > 0
    # queries run after the indexes, with full collections inside a query counted; the query
    # embedding is timed apart
    assert all(items[0]["methods"][m]["gc_full"] >= 0 for m in methods)
    assert items[0]["embed_query_s"] is None or items[0]["embed_query_s"] > 0


def test_level_rows_give_means_and_bootstrap_intervals():
    from core.retrieval.report import level_rows, markdown, method_parts

    assert method_parts("sgmem-r+h") == ("sgmem+h", "round") and method_parts("rag-sf") == ("rag-f", "session")
    items = [{"category": 1, "methods": {"bm25-t": {"recall@5": v, "tokens@5": 100.0, "tok_recall@200": v, "tok_used@200": 190.0},
                                         "sgmem-t+h": {"recall@5": 1.0, "tokens@5": 120.0}}}
             for v in (0.0, 1.0, 1.0, 0.0)]
    items.append({"category": 5, "methods": {"bm25-t": {"recall@5": 1.0}}})  # adversarial: not in the headline
    rows = {r.method: r for r in level_rows(items, "recall@5", boot=200)}
    assert rows["bm25-t"].mean == 0.5 and rows["bm25-t"].n == 4 and rows["bm25-t"].tokens == 100.0
    assert 0.0 <= rows["bm25-t"].low <= 0.5 <= rows["bm25-t"].high <= 1.0
    assert rows["sgmem-t+h"].low == rows["sgmem-t+h"].high == 1.0 and rows["sgmem-t+h"].family == "sgmem+h"
    budget = level_rows(items, "tok_recall", boot=50)
    assert [(r.method, r.metric, r.tokens) for r in budget] == [("bm25-t", "tok_recall@200", 190.0)]
    assert "| turn |" in markdown(list(rows.values()))


def test_indexing_warms_the_model_behind_the_cache(tmp_path):
    """The first query must not pay the model's cold start: index() warms the inner model, past the cache."""
    from core.retrieval.cache import CachedEmbedder

    class Counting(HashingEmbedder):
        warmed = 0

        def warm(self):
            Counting.warmed += 1

    for name in ("sgmem-t+h", "sgmem-s", "rag-r", "hybrid-t"):
        Counting.warmed = 0
        r = make_retriever(name, RetrieverContext(CachedEmbedder(Counting(32), tmp_path)))
        r.index(chat())
        assert Counting.warmed == 1, name


def test_calibrated_sgmem_stays_the_papers_mean_and_levels_get_their_own_settings():
    """sgmem-* keeps section 3.4 (dense seeds, chunk = mean of its reached sentences) whatever the
    calibration; +h and hybrid read the per-level tables; a dict of settings is picked by level."""
    from core.methods.sgmem.calibration import MINILM, MPNET, SGMEM_HYBRID, retrieval_options

    for name in (MINILM, MPNET, "some-other-model"):
        options = retrieval_options("locomo", name)
        ctx = RetrieverContext(HashingEmbedder(32), options=options)
        for letter, level in (("t", "turn"), ("r", "round"), ("s", "session")):
            paper = make_retriever(f"sgmem-{letter}", ctx).config
            assert paper.aggregate == "mean" and paper.hybrid is None and paper.chunk_level == level
            hybrid = make_retriever(f"sgmem-{letter}+h", ctx).config
            assert hybrid.hybrid is not None and hybrid.chunk_level == level
            if name in SGMEM_HYBRID:
                assert hybrid.aggregate == SGMEM_HYBRID[name][level]["aggregate"]
            assert make_retriever(f"hybrid-{letter}", ctx).fusion == options["hybrid"][level]
    custom = RetrieverContext(HashingEmbedder(32), options={"sgmem": {"round": SGMemConfig(knn_k=2, gamma=0.5)}})
    assert make_retriever("sgmem-r", custom).config.knn_k == 2
    assert make_retriever("sgmem-t", custom).config.knn_k == 1  # no entry: LoCoMo's paper values


def test_chunk_bm25_mixes_whole_chunk_bm25_into_the_graph_score():
    """chunk_bm25 = w: score = (1 - w) minmax(graph chunk score) + w minmax(BM25 over chunk texts);
    w = 0 is the graph alone, w = 1 ranks as BM25 over the chunks does (checked against a SparseIndex
    built by hand over the same texts), and chat turns added later enter the chunk index."""
    from dataclasses import replace

    from core.retrieval.base import dialogue_chunks

    d = chat()
    base = replace(HYBRID_DEFAULTS, chunk_level="round", knn_k=1, hops=0, max_sentences=2)
    query = "What does Oscar eat and where did we hike?"
    graph_only = SGMemRetriever(HashingEmbedder(64), base)
    graph_only.index(d)
    same = SGMemRetriever(HashingEmbedder(64), replace(base, chunk_bm25=0.0))
    same.index(d)
    assert [e.source for e in same.retrieve(query, 3)] == [e.source for e in graph_only.retrieve(query, 3)]
    bm25_only = SGMemRetriever(HashingEmbedder(64), replace(base, chunk_bm25=1.0))
    bm25_only.index(d)
    chunks = dialogue_chunks(d, "round")
    index = SparseIndex()
    index.add([c.text for c in chunks])
    expected = [chunks[i].id for i in top_ids(index.scores(query), 3)]
    assert [e.meta["chunk_id"] for e in bm25_only.retrieve(query, 3)] == expected
    half = SGMemRetriever(HashingEmbedder(64), replace(base, chunk_bm25=0.5))
    half.index(d)
    hits = half.search(query, 3)
    graph = np.zeros(len(chunks))
    for cid, score in graph_only.search(query, 10).chunk_scores:
        graph[[c.id for c in chunks].index(cid)] = score
    mixed = 0.5 * minmax(graph) + 0.5 * minmax(index.scores(query))
    np.testing.assert_allclose([s for _, s in hits.chunk_scores], sorted(mixed[mixed > 0], reverse=True))
    half.add_turns([Turn(USER, "Oscar the guinea pig also eats kale.", session=2, turn_id="D3:1")])
    assert "D3:1" in {t for e in half.retrieve("kale", 5) for t in e.meta["turn_ids"]}


def test_paired_difference_against_hand_computed_means():
    from core.retrieval.report import paired_difference

    a, b = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]
    items = [{"category": 1, "methods": {"sgmem-t+h": {"recall@5": x}, "bm25-t": {"recall@5": y}}} for x, y in zip(a, b)]
    items.append({"category": 5, "methods": {"sgmem-t+h": {"recall@5": 0.0}, "bm25-t": {"recall@5": 1.0}}})  # not headline
    d = paired_difference(items, "sgmem-t+h", "bm25-t", boot=500)
    assert d.n == 4 and d.mean == 0.5 and 0.0 <= d.low <= 0.5 <= d.high <= 1.0
    same = [{"category": 2, "methods": {"x-t": {"recall@5": v + 0.25}, "y-t": {"recall@5": v}}} for v in (0.0, 0.5, 0.75)]
    constant = paired_difference(same, "x-t", "y-t")  # every pair differs by 0.25: no spread at all
    assert constant.mean == constant.low == constant.high == pytest.approx(0.25)
    with pytest.raises(ValueError, match="no question"):
        paired_difference(items, "sgmem-t+h", "rag-t")
