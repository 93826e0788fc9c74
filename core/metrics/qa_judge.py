"""LLM judges of QA answers with the published prompts, and their agreement with people.

- LoCoMo: the "J" prompt of Mem0's evaluation (mem0ai/mem0 `evaluation/metrics/llm_judge.py`,
  the judge behind the LoCoMo J scores of Mem0, Zep and A-Mem): a JSON label CORRECT or WRONG.
- LongMemEval: one prompt per question type and one for abstention questions (`_abs` ids), as in
  xiaowu0162/LongMemEval `src/evaluation/evaluate_qa.py`: the reply says yes or no.

A reply that carries no verdict (neither label, or both) is `None`: counted and shown, never
taken as wrong or right. A judge's accuracy means something only once its agreement with human
labels is known (`agreement`, on the hand-labelled set in benchmarks/); until then reports mark
it "unvalidated".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from core.llm.base import LLM, LLMOutputError, extract_json
from core.llm.prompts import render_prompt

LME_PROMPTS = {
    "single-session-user": "judge_lme_default",
    "single-session-assistant": "judge_lme_default",
    "multi-session": "judge_lme_default",
    "temporal-reasoning": "judge_lme_temporal",
    "knowledge-update": "judge_lme_update",
    "single-session-preference": "judge_lme_preference",
}


@dataclass(frozen=True)
class JudgeCase:
    """One answer to judge. `kind`: "locomo" or a LongMemEval question type; `abstention` for
    LongMemEval's unanswerable questions."""

    question: str
    gold: str
    answer: str
    kind: str = "locomo"
    abstention: bool = False


def judge_prompt(case: JudgeCase) -> str:
    if case.kind == "locomo":
        name = "judge_locomo_j"
    elif case.abstention:
        name = "judge_lme_abstention"
    elif case.kind in LME_PROMPTS:
        name = LME_PROMPTS[case.kind]
    else:
        raise ValueError(f"no published judge prompt for question type {case.kind!r}")
    return render_prompt(name, question=case.question, answer=case.gold, response=case.answer)


_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")
_YES_NO = re.compile(r"\b(yes|no)\b", re.I)


def parse_verdict(kind: str, reply: str) -> int | None:
    """1 / 0 from the judge's reply, None when it gives no single verdict."""
    if kind == "locomo":
        try:
            value = extract_json(reply)
            label = str(value.get("label", "")).strip().upper() if isinstance(value, dict) else ""
            if label in ("CORRECT", "WRONG"):
                return int(label == "CORRECT")
        except LLMOutputError:
            pass
        found = set(_LABEL.findall(reply))
        return int(found == {"CORRECT"}) if len(found) == 1 else None
    found = {w.lower() for w in _YES_NO.findall(reply)}
    return int(found == {"yes"}) if len(found) == 1 else None


class QAJudge:
    """Judges answers with an LLM chosen apart from the reader; batched where the backend allows."""

    def __init__(self, llm: LLM, max_tokens: int = 120) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.name = llm.name

    def judge(self, cases: Sequence[JudgeCase]) -> list[tuple[int | None, str]]:
        """(verdict, raw reply) per case, temperature 0 as in both published scripts."""
        if not cases:
            return []
        replies = self.llm.chat_batch([judge_prompt(c) for c in cases], temperature=0.0, max_tokens=self.max_tokens)
        return [(parse_verdict(c.kind, r.text), r.text) for c, r in zip(cases, replies)]


# -- agreement with people ----------------------------------------------------------------------
def load_labels(path: str | Path) -> list[dict]:
    """Rows of a hand-labelled set: question, gold, answer, label (1 correct / 0 incorrect), kind."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"question", "gold", "answer", "label"} - row.keys()
        if missing or row["label"] not in (0, 1):
            raise ValueError(f"{path}:{n}: needs question, gold, answer and a label 0 or 1 ({sorted(missing)} missing)")
        rows.append(row)
    return rows


def agreement(human: Sequence[int], predicted: Sequence[int | None]) -> dict:
    """Accuracy and Cohen's kappa (scikit-learn) of a judge against human labels, over the cases
    the judge gave a verdict on; `no_verdict` counts the rest."""
    from sklearn.metrics import cohen_kappa_score

    pairs = [(h, p) for h, p in zip(human, predicted) if p is not None]
    out = {"n": len(human), "judged": len(pairs), "no_verdict": len(human) - len(pairs)}
    if not pairs:
        return {**out, "accuracy": float("nan"), "kappa": float("nan")}
    hs, ps = zip(*pairs)
    same = sum(h == p for h, p in pairs)
    kappa = cohen_kappa_score(hs, ps) if len(set(hs) | set(ps)) > 1 else float("nan")
    return {**out, "accuracy": same / len(pairs), "kappa": float(kappa),
            "judge_positive_rate": sum(ps) / len(ps), "human_positive_rate": sum(hs) / len(hs)}


def judge_agreement(judge: QAJudge | None, rows: Sequence[dict], f1_threshold: float = 0.5) -> dict:
    """Agreement with the human labels of `rows`: of the LLM judge (when given) and, for
    reference, of LoCoMo token F1 thresholded at `f1_threshold` (an offline stand-in judge)."""
    from core.metrics.qa import locomo_scores

    human = [int(r["label"]) for r in rows]
    f1_votes = [int(locomo_scores(r["answer"], r["gold"], int(r.get("category", 4)))["f1"] >= f1_threshold) for r in rows]
    out = {"labels": len(rows), f"f1>={f1_threshold}": agreement(human, f1_votes)}
    if judge is not None:
        cases = [JudgeCase(r["question"], r["gold"], r["answer"], r.get("kind", "locomo"), bool(r.get("abstention")))
                 for r in rows]
        verdicts = judge.judge(cases)
        out["judge"] = {"name": judge.name, **agreement(human, [v for v, _ in verdicts])}
        out["disagreements"] = [{"question": r["question"], "gold": r["gold"], "answer": r["answer"], "human": h,
                                 "judge": v, "reply": raw[:300]}
                                for r, h, (v, raw) in zip(rows, human, verdicts) if v != h]
    return out
