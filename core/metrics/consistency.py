"""D-SMART's NLI consistency metrics, each reply judged against its dialogue history.

CS_i = ((P_E - P_C) + 1) / 2 (1 = entailed by the history, 0.5 = neutral, 0 = contradicted);
DER = share of turns whose NLI label is ENTAILMENT. Both higher is better. CS follows the NLI
model's confidence; DER counts only the winning label.

The premise is the context the reply answers (earlier turns and the user message, as
"User: ..." / "Assistant: ..." lines), windowed by `core.metrics.nli`'s rule when long.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from core.metrics.base import Metric, TurnSample
from core.metrics.nli import ENTAILMENT, NLIJudgement, history_lines


class JudgesPairs(Protocol):
    def judge_many(self, items: Sequence[tuple[Sequence[str], str]]) -> list[NLIJudgement]: ...


class TurnNLI:
    """Judges each sample once (memoised), so CS and DER of the same turns share one NLI pass."""

    def __init__(self, scorer: JudgesPairs) -> None:
        self.scorer = scorer
        self._memo: dict[tuple, NLIJudgement] = {}

    def judgements(self, samples: Sequence[TurnSample]) -> list[NLIJudgement]:
        keys = [(s.context, s.response) for s in samples]
        todo = list(dict.fromkeys(k for k in keys if k not in self._memo))
        if todo:
            found = self.scorer.judge_many([(history_lines(context), response) for context, response in todo])
            self._memo.update(zip(todo, found))
        return [self._memo[k] for k in keys]


class ConsistencyScore(Metric):
    name, label, direction = "cs", "CS", "higher"
    description = "((P_E - P_C) + 1) / 2 of the reply against the dialogue history (D-SMART Eq. 4)."

    def __init__(self, nli: TurnNLI) -> None:
        self.nli = nli

    def turn_values(self, samples: Sequence[TurnSample]) -> list[float | None]:
        return [j.consistency for j in self.nli.judgements(samples)]


class EntailmentRate(Metric):
    name, label, direction = "der", "DER", "higher"
    description = "Share of replies the NLI model labels ENTAILMENT against the history (D-SMART Eq. 5)."

    def __init__(self, nli: TurnNLI) -> None:
        self.nli = nli

    def turn_values(self, samples: Sequence[TurnSample]) -> list[float | None]:
        return [1.0 if j.label == ENTAILMENT else 0.0 for j in self.nli.judgements(samples)]
