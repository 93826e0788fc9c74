"""core.metrics.ranking against hand-computed cases."""

import math

import pytest

from core.metrics.ranking import linking_counts, precision_recall, ranking_metrics, summarise


def test_ranking_metrics_hand_computed():
    ranked = ["a", "b", "c", "d", "e", "f", "g"]
    gold = {"c", "g", "z"}  # c at rank 3, g at rank 7 (outside top 5), z never retrieved nor a candidate
    m = ranking_metrics(ranked, gold, set(ranked))
    assert m["first_gold_rank"] == 3
    assert m["rr"] == pytest.approx(1 / 3)
    assert m["recall@1"] == 0.0 and m["hit@1"] == 0.0
    assert m["recall@5"] == pytest.approx(1 / 3) and m["hit@5"] == 1.0  # only c of {c, g, z}
    assert m["in_candidates"] is True
    assert m["candidate_recall"] == pytest.approx(2 / 3)


def test_ranking_metrics_first_place_and_absent():
    top = ranking_metrics(["x", "y"], {"x"}, {"x", "y"})
    assert (top["rr"], top["recall@1"], top["hit@5"], top["first_gold_rank"]) == (1.0, 1.0, 1.0, 1)
    none = ranking_metrics(["x", "y"], {"q"}, {"x", "y"})
    assert (none["rr"], none["recall@5"], none["in_candidates"], none["first_gold_rank"]) == (0.0, 0.0, False, None)
    with pytest.raises(ValueError):
        ranking_metrics(["x"], set(), {"x"})


def test_summarise_means_and_micro_linking():
    rows = [ranking_metrics(["a", "b"], {"a"}, {"a", "b"}), ranking_metrics(["b", "a"], {"a"}, {"a", "b"}),
            ranking_metrics([], {"a"}, set())]
    for r, (linked, cands) in zip(rows, [(1, 2), (2, 2), (0, 0)]):
        r.update(linked=linked, candidates=cands)
    s = summarise(rows, (3, 4, 6))
    assert s["recall@1"] == pytest.approx(1 / 3)  # (1 + 0 + 0) / 3
    assert s["recall@5"] == pytest.approx(2 / 3)
    assert s["mrr"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["candidate_ceiling"] == pytest.approx(2 / 3)
    assert (s["linking_precision"], s["linking_recall"]) == (0.75, 0.5)
    assert (s["turns"], s["turns_with_entity"], s["mean_candidates"]) == (3, 2, pytest.approx(4 / 3))
    assert summarise([], (0, 0, 0)) == {"turns": 0}


def test_linking_counts_and_precision_recall():
    tp, predicted, gold = linking_counts(["A", "B", "C", "C"], ["B", "C", "D", "E"])
    assert (tp, predicted, gold) == (2, 3, 4)
    assert precision_recall(tp, predicted, gold) == (2 / 3, 0.5)
    assert all(math.isnan(x) for x in precision_recall(0, 0, 0))
