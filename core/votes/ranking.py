"""Rank methods from blind votes: Bradley-Terry strengths with 95% bootstrap intervals, the win-rate
matrix and vote counts. Pure functions over (methods shown, winner) pairs.

The model: P(i's reply is preferred to j's) = 1 / (1 + exp(s_j - s_i)); a strength `s` is on the
log-odds scale, centred so the methods' strengths average 0 (a difference of 1.1 is 3:1 odds).

How a vote counts:
- a winner among k shown methods beats each of the other k - 1 (k - 1 pairwise wins);
- a tie counts as half a win to each side of every shown pair (Bradley-Terry with ties as half
  wins, as LMSYS's arena does; not Davidson's or Rao-Kupper's tie parameter);
- "both_bad" / "all_bad" says nothing about which is better: excluded from the strengths, counted
  in the tables.

Strengths are the maximum-likelihood fit by Hunter's (2004) MM iteration, with a weak prior: every
pair that was compared also gets `prior` virtual wins each way (default 0.5, one virtual tie), so a
method that never won in a resample keeps a finite strength. `prior=0` is the plain MLE, which
exists only when every method both won and lost. The intervals are percentiles of the strengths
refit on votes resampled with replacement (`bootstrap` times, seeded: the same votes give the same
intervals).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

from core.votes.model import ALL_BAD, BOTH_BAD, TIE

DEFAULT_PRIOR = 0.5
DEFAULT_BOOTSTRAP = 1000
# Decisive votes (won, lost or tied; "bad" ones not) each ranked method needs before strengths and
# intervals are shown. With fewer, a bootstrap resample is nearly always the votes themselves (2
# votes alike: every resample alike, an interval whose low equals its high) and the prior decides
# more of a strength than the votes do. Counted per method, not per pair: in a vote among 3 or 4
# methods only the winner's pairs are compared, so a pair of two methods that rarely win could
# stay short for ever. Until then only the counts are shown.
MIN_METHOD_VOTES = 5


@dataclass(frozen=True)
class Standing:
    method: str
    strength: float  # Bradley-Terry log-strength, methods averaging 0
    low: float  # 95% bootstrap interval
    high: float
    votes: int  # votes that showed this method (bad ones included)
    wins: int  # votes it won
    losses: int  # votes another method won
    ties: int
    bad: int  # "both_bad" / "all_bad" votes it was in


@dataclass(frozen=True)
class Ranking:
    standings: tuple[Standing, ...]  # strongest first
    methods: tuple[str, ...]  # the order of the matrix rows and columns (alphabetical)
    win_rate: tuple[tuple[float | None, ...], ...]  # [i][j]: share of i-vs-j comparisons i won, ties as half; None: never compared
    comparisons: tuple[tuple[int, ...], ...]  # [i][j]: votes comparing i with j (bad ones excluded)
    votes: int
    bad_votes: int
    bootstrap: int
    prior: float
    connected: bool  # every method is linked to every other by comparisons; if not, strengths of different groups do not compare
    ties_as: str = "half wins"

    def to_json(self) -> dict:
        out = asdict(self)
        out["standings"] = [asdict(s) for s in self.standings]
        return out


def _outcome(methods: Sequence[str], winner: str) -> tuple[tuple[str, ...], str]:
    return tuple(methods), winner


def pairwise(outcomes: Iterable[tuple[Sequence[str], str]], methods: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties): wins[i, j] = votes where i beat j; ties[i, j] = votes where i and j tied
    (symmetric). Bad votes add nothing."""
    index = {m: k for k, m in enumerate(methods)}
    wins = np.zeros((len(methods), len(methods)))
    ties = np.zeros_like(wins)
    for shown, winner in outcomes:
        at = [index[m] for m in shown]
        if winner == TIE:
            for a in at:
                for b in at:
                    if a != b:
                        ties[a, b] += 1
        elif winner not in (BOTH_BAD, ALL_BAD):
            w = index[winner]
            for b in at:
                if b != w:
                    wins[w, b] += 1
    return wins, ties


def bradley_terry(wins: np.ndarray, ties: np.ndarray | None = None, prior: float = DEFAULT_PRIOR,
                  tol: float = 1e-10, max_iter: int = 100_000) -> np.ndarray:
    """Log-strengths (mean 0) from a wins matrix (wins[i, j]: times i beat j; may be fractional)
    and ties (counted as half a win each way), by Hunter's MM iteration. A method compared with
    nobody gets NaN. ValueError when prior=0 and the MLE does not exist (a method never won or never lost)."""
    ties = np.zeros_like(wins) if ties is None else ties
    w = wins + 0.5 * ties
    n = w + w.T
    compared = n > 0
    w = w + prior * compared
    n = w + w.T
    present = compared.any(axis=1)
    if prior == 0 and present.any():
        won, lost = w.sum(axis=1)[present], w.sum(axis=0)[present]
        if (won <= 0).any() or (lost <= 0).any():
            raise ValueError("the plain Bradley-Terry MLE does not exist: a method never won or never lost (use prior > 0)")
    p = np.where(present, 1.0, np.nan)
    total = w.sum(axis=1)
    idx = np.flatnonzero(present)
    if len(idx) == 0:
        return p
    sub_w, sub_n, sub_total = w[np.ix_(idx, idx)], n[np.ix_(idx, idx)], total[idx]
    q = np.ones(len(idx))
    for _ in range(max_iter):
        denom = (sub_n / (q[:, None] + q[None, :])).sum(axis=1)
        new = sub_total / denom
        new = new / np.exp(np.log(new).mean())
        done = np.max(np.abs(np.log(new) - np.log(q))) < tol
        q = new
        if done:
            break
    out = np.full(len(p), np.nan)
    out[idx] = np.log(q) - np.log(q).mean()
    return out


def _connected(compared: np.ndarray) -> bool:
    present = np.flatnonzero(compared.any(axis=1))
    if len(present) <= 1:
        return True
    seen, todo = {present[0]}, [present[0]]
    while todo:
        a = todo.pop()
        for b in np.flatnonzero(compared[a]):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return len(seen) == len(present)


def rank(outcomes: Iterable[tuple[Sequence[str], str]], bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0,
         prior: float = DEFAULT_PRIOR) -> Ranking:
    """Standings (strength, 95% interval, counts), the win-rate matrix and vote counts."""
    votes = [_outcome(m, w) for m, w in outcomes]
    methods = tuple(sorted({m for shown, _ in votes for m in shown}))
    k = len(methods)
    index = {m: i for i, m in enumerate(methods)}
    # one (wins, ties) pair of matrices per vote, so a resample is a weighted sum
    per_vote = np.zeros((len(votes), 2, k, k))
    for v, vote in enumerate(votes):
        per_vote[v, 0], per_vote[v, 1] = pairwise([vote], methods)
    wins, ties = per_vote[:, 0].sum(axis=0), per_vote[:, 1].sum(axis=0)
    strength = bradley_terry(wins, ties, prior) if k else np.zeros(0)
    draws = np.full((bootstrap, k), np.nan)
    if votes and k:
        rng = np.random.default_rng(seed)
        for b in range(bootstrap):
            counts = np.bincount(rng.integers(0, len(votes), len(votes)), minlength=len(votes)).astype(float)
            sample = np.tensordot(counts, per_vote, axes=1)
            if prior == 0:
                try:
                    draws[b] = bradley_terry(sample[0], sample[1], prior)
                except ValueError:
                    continue  # a resample without an MLE: left out of the interval
            else:
                draws[b] = bradley_terry(sample[0], sample[1], prior)
    with warnings.catch_warnings():  # a method with no finite draw (only in bad votes) gets NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanpercentile(draws, 2.5, axis=0) if bootstrap else np.full(k, np.nan)
        high = np.nanpercentile(draws, 97.5, axis=0) if bootstrap else np.full(k, np.nan)
    n = wins + wins.T + ties
    rate = [[None if i == j or n[i, j] == 0 else float((wins[i, j] + 0.5 * ties[i, j]) / n[i, j]) for j in range(k)]
            for i in range(k)]
    standings = []
    for m, i in index.items():
        shown = [(s, w) for s, w in votes if m in s]
        standings.append(Standing(
            method=m, strength=float(strength[i]), low=float(low[i]), high=float(high[i]), votes=len(shown),
            wins=sum(w == m for _, w in shown), losses=sum(w in s and w != m for s, w in shown),
            ties=sum(w == TIE for _, w in shown), bad=sum(w in (BOTH_BAD, ALL_BAD) for _, w in shown)))
    standings.sort(key=lambda s: (-s.strength if np.isfinite(s.strength) else np.inf, s.method))
    return Ranking(standings=tuple(standings), methods=methods, win_rate=tuple(tuple(r) for r in rate),
                   comparisons=tuple(tuple(int(x) for x in row) for row in n), votes=len(votes),
                   bad_votes=sum(w in (BOTH_BAD, ALL_BAD) for _, w in votes), bootstrap=bootstrap, prior=prior,
                   connected=_connected(n > 0))


def decisive_votes(standing: Standing) -> int:
    """Votes that compared the method with another: won, lost or tied."""
    return standing.wins + standing.losses + standing.ties


def short_of_votes(ranking: Ranking, min_votes: int = MIN_METHOD_VOTES) -> list[tuple[str, int]]:
    """(method, decisive votes) of each method with fewer than `min_votes`; [] when the ranking has
    enough to be shown with strengths and intervals (and at least two methods to rank)."""
    short = [(s.method, decisive_votes(s)) for s in ranking.standings if decisive_votes(s) < min_votes]
    if not short and sum(decisive_votes(s) > 0 for s in ranking.standings) < 2:
        return [(s.method, decisive_votes(s)) for s in ranking.standings]
    return short
