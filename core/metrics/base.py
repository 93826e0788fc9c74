"""The one metric contract: a name, a direction, a value per turn and an aggregate.

Every metric reads the same `TurnSample` (the context the reply answers, the reply, and the gold
answer where the benchmark has one), so the benchmark runner, the Metrics page and the chat score
turns alike. A value of None means "not applicable" (e.g. a lexical score without a reference);
aggregates skip those.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal, Sequence

from core.dialogue import Turn

Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class TurnSample:
    context: tuple[Turn, ...]  # the dialogue before the reply; the user message it answers last
    response: str
    reference: str = ""  # a gold reply, where there is one


@dataclass(frozen=True)
class MetricScore:
    name: str
    direction: Direction
    values: tuple[float | None, ...]  # one per turn
    aggregate: float | None  # None when no turn had a value


def mean_of(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


class Metric(ABC):
    name: ClassVar[str]  # lower-case summary key, e.g. "cs", "rouge_l"
    label: ClassVar[str]  # shown in tables
    direction: ClassVar[Direction] = "higher"  # which way is better
    description: ClassVar[str] = ""

    @abstractmethod
    def turn_values(self, samples: Sequence[TurnSample]) -> list[float | None]:
        """One value per sample (None: not applicable to that turn)."""

    def aggregate(self, values: Sequence[float | None]) -> float | None:
        """Mean over the turns that have a value."""
        return mean_of(values)

    def score(self, samples: Sequence[TurnSample]) -> MetricScore:
        values = tuple(self.turn_values(samples))
        return MetricScore(self.name, self.direction, values, self.aggregate(values))
