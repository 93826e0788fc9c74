"""Optional LLM-judge quality score, 1-10, in MT-Bench-101's style (higher is better).

Only a capable endpoint can judge: the prompt asks for an explanation and a "[[rating]]", which a
135M local model cannot give reliably, so the judge refuses a Toolkit that is not `strong`. A reply
whose rating is missing or out of range gets None (counted in `failures`), never a guessed score.
"""

from __future__ import annotations

import re
from typing import Sequence

from core.llm.base import LLM, Message
from core.llm.prompts import render_prompt
from core.metrics.base import Metric, TurnSample

_RATING = re.compile(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]")


def parse_rating(text: str) -> float | None:
    """The last "[[N]]" in the judge's answer, if it is within 1..10."""
    found = _RATING.findall(text)
    if not found:
        return None
    value = float(found[-1])
    return value if 1.0 <= value <= 10.0 else None


def judge_prompt(sample: TurnSample, task: str = "multi-turn dialogue") -> str:
    lines = [f"{t.speaker or t.role}: {t.text}" for t in sample.context] + [f"assistant: {sample.response}"]
    reference = f"\nA reference answer for the last round (judge against it): {sample.reference}\n" if sample.reference else ""
    return render_prompt("judge_mtbench101", task=task, reference=reference, dialogue="\n".join(lines))


class QualityJudge(Metric):
    name, label, direction = "quality", "Quality (LLM judge, 1-10)", "higher"
    description = "MT-Bench-101-style rating of each reply by a capable LLM endpoint."

    def __init__(self, llm: LLM, strong: bool, task: str = "multi-turn dialogue", with_reference: bool = False) -> None:
        if not strong:
            raise ValueError("the quality judge needs a capable LLM endpoint (a strong model); the local 135M model cannot judge")
        self.llm = llm
        self.task = task
        self.with_reference = with_reference  # MT-Bench-101 shows the gold answer for MR and GR only
        self.failures = 0

    def turn_values(self, samples: Sequence[TurnSample]) -> list[float | None]:
        prompts = [[Message("user", judge_prompt(s if self.with_reference else _no_ref(s), self.task))] for s in samples]
        replies = self.llm.chat_batch(prompts, temperature=0.0, max_tokens=512)
        values = [parse_rating(r.text) for r in replies]
        self.failures += sum(v is None for v in values)
        return values


def _no_ref(sample: TurnSample) -> TurnSample:
    return TurnSample(sample.context, sample.response, "")
