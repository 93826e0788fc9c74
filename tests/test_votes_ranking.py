"""Bradley-Terry rankings from votes: a hand-computed case, and the same fit as two reference
implementations (choix's ILSR and scipy's optimiser on the likelihood)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.votes.ranking import bradley_terry, pairwise, rank


def test_two_methods_hand_computed():
    # a beats b 3 times, b beats a once: the MLE odds are 3:1, so s_a - s_b = ln 3, centred at 0
    votes = [(("a", "b"), "a")] * 3 + [(("b", "a"), "b")]
    r = rank(votes, bootstrap=0, prior=0)
    s = {x.method: x.strength for x in r.standings}
    assert s["a"] == pytest.approx(math.log(3) / 2, abs=1e-8) and s["b"] == pytest.approx(-math.log(3) / 2, abs=1e-8)
    assert [x.method for x in r.standings] == ["a", "b"]
    assert r.win_rate == ((None, 0.75), (0.25, None)) and r.comparisons == ((0, 4), (4, 0))
    # a tie is half a win each way: 2 wins + 1 tie against 1 win -> odds 2.5 : 1.5
    votes = [(("a", "b"), "a")] * 2 + [(("a", "b"), "tie"), (("a", "b"), "b")]
    s = {x.method: x.strength for x in rank(votes, bootstrap=0, prior=0).standings}
    assert s["a"] - s["b"] == pytest.approx(math.log(2.5 / 1.5), abs=1e-8)
    # the default prior is one virtual tie per compared pair: 3 + 0.5 against 1 + 0.5
    s = {x.method: x.strength for x in rank([(("a", "b"), "a")] * 3 + [(("b", "a"), "b")], bootstrap=0).standings}
    assert s["a"] - s["b"] == pytest.approx(math.log(3.5 / 1.5), abs=1e-8)


def test_bad_votes_are_counted_but_rank_nothing_and_a_winner_of_three_beats_both_others():
    votes = [(("a", "b"), "both_bad"), (("a", "b", "c"), "a"), (("a", "b", "c"), "all_bad"), (("b", "c"), "tie")]
    wins, ties = pairwise(votes, ("a", "b", "c"))
    assert wins.tolist() == [[0, 1, 1], [0, 0, 0], [0, 0, 0]]
    assert ties.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0]]
    r = rank(votes, bootstrap=50)
    by = {x.method: x for x in r.standings}
    assert (r.votes, r.bad_votes) == (4, 2)
    assert (by["a"].votes, by["a"].wins, by["a"].losses, by["a"].ties, by["a"].bad) == (3, 1, 0, 0, 2)
    assert (by["b"].votes, by["b"].wins, by["b"].losses, by["b"].ties, by["b"].bad) == (4, 0, 1, 1, 2)
    assert r.standings[0].method == "a" and r.connected


def test_only_bad_votes_give_no_strength():
    r = rank([(("a", "b"), "both_bad")], bootstrap=10)
    assert all(math.isnan(x.strength) for x in r.standings) and r.bad_votes == 1
    assert r.win_rate == ((None, None), (None, None))


def _random_votes(seed: int, n: int = 300) -> list:
    rng = np.random.default_rng(seed)
    names = ["base", "dsmart", "rag", "sgmem"]
    true = {"base": -0.8, "dsmart": 0.4, "rag": 0.1, "sgmem": 0.3}
    votes = []
    for _ in range(n):
        a, b = rng.choice(names, 2, replace=False)
        p = 1 / (1 + math.exp(true[b] - true[a]))
        u = rng.random()
        votes.append(((a, b), "tie" if u < 0.1 else (a if u < 0.1 + 0.9 * p else b)))
    return votes


def test_the_fit_matches_choix():
    choix = pytest.importorskip("choix")  # requirements-dev.txt
    votes = _random_votes(1)
    methods = ("base", "dsmart", "rag", "sgmem")
    wins, ties = pairwise(votes, methods)
    mine = bradley_terry(wins, ties, prior=0)
    theirs = choix.ilsr_pairwise_dense(wins + 0.5 * ties, tol=1e-12)
    assert mine == pytest.approx(theirs - theirs.mean(), abs=1e-6)
    # with the prior: choix on the same counts plus the virtual half wins of every compared pair
    compared = (wins + ties + wins.T) > 0
    theirs = choix.ilsr_pairwise_dense(wins + 0.5 * ties + 0.5 * compared, tol=1e-12)
    assert bradley_terry(wins, ties) == pytest.approx(theirs - theirs.mean(), abs=1e-6)


def test_the_fit_maximises_the_likelihood_as_scipy_finds_it():
    from scipy.optimize import minimize

    votes = _random_votes(2, 120)
    methods = ("base", "dsmart", "rag", "sgmem")
    wins, ties = pairwise(votes, methods)
    w = wins + 0.5 * ties + 0.5 * ((wins + wins.T + ties) > 0)

    def nll(s):
        diff = s[:, None] - s[None, :]
        return -(w * -np.logaddexp(0, -diff)).sum()

    best = minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    assert bradley_terry(wins, ties) == pytest.approx(best - best.mean(), abs=1e-4)


def test_bootstrap_intervals_hold_the_strength_shrink_with_votes_and_repeat_with_the_seed():
    few, many = rank(_random_votes(3, 40), bootstrap=300), rank(_random_votes(3, 800), bootstrap=300)
    for r in (few, many):
        for s in r.standings:
            assert s.low <= s.strength <= s.high
    width = lambda r: np.mean([s.high - s.low for s in r.standings])  # noqa: E731
    assert width(many) < width(few) / 2
    assert rank(_random_votes(3, 40), bootstrap=300) == few  # seeded
    assert many.standings[-1].method == "base"  # the weakest by construction
    assert many.to_json()["standings"][0]["method"] in ("dsmart", "sgmem")


def test_the_plain_mle_is_refused_where_it_does_not_exist():
    with pytest.raises(ValueError, match="never won or never lost"):
        rank([(("a", "b"), "a")] * 3, bootstrap=0, prior=0)
    r = rank([(("a", "b"), "a")] * 3, bootstrap=0)  # the prior keeps it finite: 3.5 : 0.5
    assert r.standings[0].strength - r.standings[1].strength == pytest.approx(math.log(7))
    assert not rank([(("a", "b"), "a"), (("c", "d"), "c")], bootstrap=0).connected
