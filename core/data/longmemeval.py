"""LongMemEval loader (Wu et al., 2025): oracle, S or M files, by path.

Each instance has its own haystack of sessions. Turn ids are `<session_id>:<index>` so that the
session of any retrieved turn is recoverable; evidence turns are those flagged `has_answer`.
Sessions are put in chronological order (the oracle file lists them unsorted). Every instance keeps
its own `question_date`: it differs between the oracle and S files (see SOURCE.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from core.data.jsonfile import load_json_layout
from core.dialogue import ASSISTANT, USER, Dialogue, Turn

QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)


@dataclass(frozen=True)
class LongMemEvalInstance:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: str
    dialogue: Dialogue
    session_ids: tuple[str, ...]  # parallel to dialogue.sessions
    answer_session_ids: tuple[str, ...]
    evidence_turn_ids: tuple[str, ...]  # turns flagged has_answer

    @property
    def abstention(self) -> bool:
        return is_abstention(self.question_id)


def is_abstention(question_id: str) -> bool:
    """LongMemEval marks questions whose answer is not in the haystack by an `_abs` id suffix."""
    return str(question_id).endswith("_abs")


def parse_date(text: str) -> datetime | None:
    """'2023/05/30 (Tue) 23:40' -> datetime; None when unparseable (order then falls back to file order)."""
    try:
        return datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[-1], "%Y/%m/%d %H:%M")
    except (ValueError, IndexError):
        return None


def session_of(turn_id: str) -> str:
    return turn_id.rsplit(":", 1)[0]


def _instance(raw: dict) -> LongMemEvalInstance:
    ids, dates, sessions = raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"]
    if not (len(ids) == len(dates) == len(sessions)):
        raise ValueError(f"{raw.get('question_id')}: haystack ids, dates and sessions differ in length")
    order = sorted(range(len(ids)), key=lambda i: (parse_date(dates[i]) or datetime.min, i))
    dialogue = Dialogue(id=str(raw["question_id"]))
    evidence: list[str] = []
    for n, i in enumerate(order):
        for j, msg in enumerate(sessions[i]):
            role = USER if msg.get("role") == USER else ASSISTANT
            turn = dialogue.add(Turn(role, str(msg.get("content", "")), f"{ids[i]}:{j}", n, role, dates[i]))
            if msg.get("has_answer"):
                evidence.append(turn.turn_id)
    return LongMemEvalInstance(
        question_id=str(raw["question_id"]),
        question_type=str(raw["question_type"]),
        question=str(raw["question"]),
        answer=str(raw["answer"]),
        question_date=str(raw.get("question_date", "")),
        dialogue=dialogue,
        session_ids=tuple(ids[i] for i in order),
        answer_session_ids=tuple(str(s) for s in raw.get("answer_session_ids", [])),
        evidence_turn_ids=tuple(evidence),
    )


def parse_longmemeval(data: list) -> list[LongMemEvalInstance]:
    if not isinstance(data, list):
        raise ValueError("a LongMemEval file is a JSON list of instances")
    return [_instance(raw) for raw in data]


def load_longmemeval(path: str | Path) -> list[LongMemEvalInstance]:
    return load_json_layout(path, parse_longmemeval, "LongMemEval")
