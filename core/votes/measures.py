"""Do the automatic measures pick the reply people pick? For every voted pair of replies where
people chose one (a decisive vote; for three or four methods, the winner against each other
method shown) and a measure tells the two apart, the measure agrees when the chosen reply scores
higher: a higher CS (NLI consistency with the conversation before), a higher FactScore, or being
correct where the other is not (the turn had an expected answer).

Ties, bad votes and pairs the measure scores equal (or where a reply has no score) say nothing
and are left out; their number is reported. 50% is chance; the interval is Wilson's 95% score
interval for a proportion.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable

from core.votes.model import MEASURES, Vote

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Agreement:
    measure: str  # "cs", "factscore" or "correct"
    agree: int  # decisive pairs where the chosen reply scored higher
    pairs: int  # decisive pairs the measure told apart
    rate: float | None  # agree / pairs
    low: float | None  # Wilson 95% interval
    high: float | None
    undecided: int  # decisive pairs the measure scored equal or could not score

    def to_json(self) -> dict:
        return asdict(self)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion (95% by default); (0, 1) for n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def decisive_pairs(votes: Iterable[Vote]) -> list[tuple[Vote, str, str]]:
    """(vote, chosen method, other method) for each pair a decisive vote settled."""
    return [(v, v.winner, other) for v in votes if v.decisive for other in v.methods if other != v.winner]


def agreement(votes: Iterable[Vote], measure: str) -> Agreement:
    """How often `measure` ranks the people's choice above the other reply of a voted pair."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; one of {', '.join(MEASURES)}")
    agree = pairs = undecided = 0
    for vote, chosen, other in decisive_pairs(votes):
        a = vote.measures.get(chosen, {}).get(measure)
        b = vote.measures.get(other, {}).get(measure)
        if a is None or b is None or a == b:
            undecided += 1
            continue
        pairs += 1
        agree += int(a > b)  # for "correct", True > False
    low, high = wilson(agree, pairs) if pairs else (None, None)
    return Agreement(measure, agree, pairs, agree / pairs if pairs else None, low, high, undecided)


def agreements(votes: Iterable[Vote]) -> list[Agreement]:
    """Every measure's agreement with the people's choices."""
    votes = list(votes)
    return [agreement(votes, m) for m in MEASURES]


def cs_of(checks: dict | None) -> float | None:
    """The CS of a reply from its stored turn checks (`{"nli": ...}`, core.store.put_checks), if judged."""
    nli = (checks or {}).get("nli")
    if not nli:
        return None
    from core.metrics.nli import NLIJudgement

    return float(NLIJudgement.from_dict(nli).consistency)
