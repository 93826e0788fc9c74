"""Agreement figures against hand-computed cases (the arithmetic is in each test's comment)."""

from __future__ import annotations

import pytest

from core.annotation import Label
from core.annotation import agreement as ag

S, R, N = "Supports", "Refutes", "Not Enough Info"


def labels(**by_annotator: list[str | None]) -> list[Label]:
    return [Label(f"i{k}", who, x) for who, xs in by_annotator.items() for k, x in enumerate(xs) if x is not None]


def test_two_annotators_two_labels():
    # a = S S R R, b = S R R R: p_o = 3/4; marginals a (2, 2), b (1, 3): p_e = (2*1 + 2*3)/16 = 1/2; kappa = 1/2.
    # alpha: coincidences o_SS = 2, o_SR = o_RS = 1, o_RR = 4; n_S = 3, n_R = 5, n = 8;
    # D_o = 2/8, D_e = 2*3*5/(8*7) = 30/56, alpha = 1 - (2/8)/(30/56) = 16/30.
    report = ag.agreement(labels(a=[S, S, R, R], b=[S, R, R, R]), items=4)
    assert report.pairwise_kappa == {"a|b": pytest.approx(0.5)}
    assert report.alpha == pytest.approx(16 / 30)
    assert report.observed_agreement == pytest.approx(0.75)
    assert (report.items, report.items_compared, report.annotators) == (4, 4, ("a", "b"))


def test_three_labels():
    # a = S S S S R R R N N N, b = S S S R R R N N N S: p_o = 7/10; marginals a (4, 3, 3), b (4, 3, 3):
    # p_e = (16 + 9 + 9)/100 = .34; kappa = (.7 - .34)/(1 - .34) = .36/.66.
    # alpha: n_S = 8, n_R = 6, n_N = 6 (n = 20); disagreeing ordered pairs 6: D_o = 6/20;
    # D_e = 2*(8*6 + 8*6 + 6*6)/(20*19) = 264/380; alpha = 1 - (6/20)/(264/380) = 150/264.
    table = labels(a=[S, S, S, S, R, R, R, N, N, N], b=[S, S, S, R, R, R, N, N, N, S])
    report = ag.agreement(table, items=10)
    assert report.pairwise_kappa["a|b"] == pytest.approx(0.36 / 0.66)
    assert report.alpha == pytest.approx(150 / 264)
    by = ag.by_annotator(table)
    assert ag.confusion(by["a"], by["b"]).tolist() == [[3, 1, 0], [0, 2, 1], [1, 0, 2]]


def test_three_annotators_with_missing_labels():
    # items: (S, S, S), (S, R, -), (R, R, -). alpha: item 1 adds 3*2 ordered SS pairs with weight 1/2 -> o_SS = 3;
    # o_SR = o_RS = 1; o_RR = 2; n_S = 4, n_R = 3, n = 7; D_o = 2/7, D_e = 2*4*3/(7*6) = 4/7; alpha = 1/2.
    # observed: item shares 1, 0, 1 -> 2/3. kappa a|b over 3 items: p_o = 2/3, p_e = (2*1 + 1*2)/9 = 4/9 -> 0.4;
    # a|c and b|c share one item where both said S: chance agreement is 1, kappa undefined.
    report = ag.agreement(labels(a=[S, S, R], b=[S, R, R], c=[S, None, None]), items=3)
    assert report.alpha == pytest.approx(0.5)
    assert report.observed_agreement == pytest.approx(2 / 3)
    assert report.pairwise_kappa == {"a|b": pytest.approx(0.4), "a|c": None, "b|c": None}
    assert report.pairwise_items == {"a|b": 3, "a|c": 1, "b|c": 1}
    assert report.items_compared == 3


def test_undefined_cases():
    assert ag.agreement(labels(a=[S, S]), items=2).alpha is None  # one annotator
    assert ag.agreement(labels(a=[S, S], b=[S, S]), items=2).alpha is None  # one value in all the data
    assert ag.agreement(labels(a=[S, None], b=[None, R]), items=2).pairwise_kappa == {"a|b": None}  # nothing shared
    assert ag.agreement([], items=0).observed_agreement is None


def test_against_a_reference():
    # a vs gold = S S R R vs S R R R: kappa 1/2 (as above), accuracy 3/4; b agrees on its two items.
    gold = {"i0": S, "i1": R, "i2": R, "i3": R}
    rows = {r.annotator: r for r in ag.against(labels(a=[S, S, R, R], b=[None, R, R, None]), gold)}
    assert rows["a"].kappa == pytest.approx(0.5) and rows["a"].accuracy == pytest.approx(0.75) and rows["a"].items == 4
    assert rows["b"].accuracy == 1.0 and rows["b"].items == 2 and rows["b"].kappa is None  # both only R: undefined


def test_disagreements():
    found = ag.disagreements(labels(a=[S, S, R], b=[S, R, None], c=[S, None, N]))
    assert found == {"i1": {"a": S, "b": R}, "i2": {"a": R, "c": N}}
