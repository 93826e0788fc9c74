"""Headless chat for scripted studies, behind `python -m core chat --method M [--script FILE]`.

A script is JSONL: `{"user": "..."}` per user turn; `{"new_dialogue": true}` starts a fresh
conversation (new memory). A turn may carry `"expect": ["Lisbon", ...]`: the reply counts as
correct when it contains one of them (case-insensitive). Each reply becomes one JSON record with
the method's evidence, so a study's transcript can be read back and scored.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from core.dialogue import ASSISTANT, USER, Dialogue, Turn, chat_day
from core.methods import Method, ReplyStream, Toolkit, create_method


class ScriptError(ValueError):
    """A script line is not what the format says; the message names the line."""


@dataclass(frozen=True)
class ScriptStep:
    user: str = ""  # the user's message; "" for a new-dialogue marker
    new_dialogue: bool = False
    expect: tuple[str, ...] = ()  # any of these in the reply makes it correct


def read_script(path: str | Path) -> list[ScriptStep]:
    """The steps of a JSONL script; ScriptError on the first malformed line (nothing runs)."""
    steps = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ScriptError(f"{path}:{number}: not JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise ScriptError(f"{path}:{number}: expected an object like {{\"user\": \"...\"}}")
        if record.get("new_dialogue"):
            steps.append(ScriptStep(new_dialogue=True))
        elif isinstance(record.get("user"), str) and record["user"].strip():
            expect = record.get("expect", [])
            expect = [expect] if isinstance(expect, str) else expect
            if not isinstance(expect, list) or not all(isinstance(e, str) and e.strip() for e in expect):
                raise ScriptError(f"{path}:{number}: \"expect\" must be a string or a list of non-empty strings")
            steps.append(ScriptStep(user=record["user"], expect=tuple(expect)))
        else:
            raise ScriptError(f"{path}:{number}: needs a non-empty \"user\" string or \"new_dialogue\": true")
    return steps


class ChatSession:
    """One method's conversations, one after another: what the Chat page does, without a page."""

    def __init__(self, method_name: str, tools: Toolkit, config=None, max_tokens: int = 0,
                 today: Callable[[], str] = chat_day) -> None:
        self.method_name = method_name
        self.today = today  # the date each turn is said on, as the Chat page gives it
        self.tools = tools
        self.config = config
        self.max_tokens = max_tokens  # bound on each reply (0 = the method's own setting)
        self.dialogue_index = -1
        self.new_dialogue()

    def new_dialogue(self) -> None:
        self.dialogue_index += 1
        self.dialogue = Dialogue(id=f"script-{self.dialogue_index}")
        self.method: Method = create_method(self.method_name, self.tools, self.config)
        self.turn_index = 0

    def send(self, text: str, sink: Callable[[str], None] | None = None) -> dict:
        """Answer `text` (streamed to `sink` when given), take the round into memory, and return
        the record of the exchange."""
        t0 = time.perf_counter()
        first: dict[str, float] = {}  # when the reply first showed progress, a partial trace, text: as a page would

        def on_progress(event) -> None:
            first.setdefault("progress", time.perf_counter() - t0)
            if event.trace is not None:
                first.setdefault("trace", time.perf_counter() - t0)

        def write(piece: str) -> None:
            first.setdefault("text", time.perf_counter() - t0)
            (sink or _discard)(piece)

        stream = ReplyStream(sink=write, max_tokens=self.max_tokens, progress=on_progress)
        reply = self.method.respond_streaming(self.dialogue, text, stream)
        seconds = time.perf_counter() - t0
        session = self.dialogue.next_session
        day = self.today()
        for turn in (Turn(USER, text, session=session, date=day), Turn(ASSISTANT, reply.text, session=session, date=day)):
            self.method.observe(self.dialogue.add(turn))
        self.method.wait()  # memory is up to date before the next message, as in the app
        record = {
            "dialogue": self.dialogue_index,
            "turn": self.turn_index,
            "method": self.method_name,
            "user": text,
            "reply": reply.text,
            "seconds": round(seconds, 3),
            "first_output_s": round(min(first.values()), 3) if first else round(seconds, 3),
            "first_trace_s": round(first["trace"], 3) if "trace" in first else None,
            "model": reply.model,
            "llm_calls": reply.llm_calls,
            "cost": reply.cost,
            "timings": {stage: round(float(t), 3) for stage, t in reply.timings.items()},  # seconds per stage
            "evidence": [{"text": e.text, "score": round(float(e.score), 4), "source": e.source, "kind": e.kind}
                         for e in reply.evidence],
        }
        self.turn_index += 1
        return record


def _discard(piece: str) -> None:
    """The sink of a reply nobody watches being written."""


def run_script(session: ChatSession, steps: list[ScriptStep]) -> Iterator[dict]:
    """The record of every user turn of the script, in order."""
    started = False
    for step in steps:
        if step.new_dialogue:
            if started:
                session.new_dialogue()
            continue
        started = True
        record = session.send(step.user)
        if step.expect:
            record["expected"] = list(step.expect)
            record["correct"] = any(e.lower() in record["reply"].lower() for e in step.expect)
        yield record


def summarise(records: list[dict]) -> dict:
    """Reply time over all replies, and without the run's first (it waits for the model and the
    method's one-time loads); time to the first output (progress or text); LLM work per stage
    summed over the replies after the first; accuracy over the replies that had an expected answer."""
    import numpy as np

    from core.llm import cost as llm_cost

    seconds = np.array([r["seconds"] for r in records], dtype=float)
    later = seconds[1:]
    first_output = np.array([r.get("first_output_s", r["seconds"]) for r in records[1:]], dtype=float)
    stages: dict = {}
    for r in records[1:]:
        stages = llm_cost.merge(stages, r.get("cost") or {})
    judged = [r["correct"] for r in records if "correct" in r]
    return {
        "replies": len(records),
        "median_s": round(float(np.median(seconds)), 3) if len(seconds) else None,
        "p95_s": round(float(np.percentile(seconds, 95)), 3) if len(seconds) else None,
        "median_s_after_first": round(float(np.median(later)), 3) if len(later) else None,
        "max_s_after_first": round(float(np.max(later)), 3) if len(later) else None,
        "first_output_max_s_after_first": round(float(np.max(first_output)), 3) if len(first_output) else None,
        "stages_after_first": stages,
        "questions": len(judged),
        "correct": int(sum(judged)),
        "accuracy": round(sum(judged) / len(judged), 3) if judged else None,
    }
