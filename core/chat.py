"""Headless chat for scripted studies, behind `python -m core chat --method M [--script FILE]`.

A script is JSONL: `{"user": "..."}` per user turn; `{"new_dialogue": true}` starts a fresh
conversation (new memory); `{"forget": "TEXT"}` forgets every earlier user turn of the current
conversation holding TEXT and the replies that repeated it (core/forget.py, as the Chat page does).
A turn may carry `"expect": ["Lisbon", ...]`: the reply counts as correct when it contains one of
them (case-insensitive). A question about something the script never told carries `"never_told":
true` instead (the right reply declines; `bench replies` counts the replies that do). Each reply
becomes one JSON record with
the method's evidence, so a study's transcript can be read back and scored.
"""

from __future__ import annotations

import functools
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from core.conversation import (ConversationService, MethodProgress, ReplyJudge, ReplyStored, ReplyText, judge_consistency,
                               judgement_of)
from core.dialogue import Dialogue, Reply, chat_day
from core.methods import Method, Toolkit, create_method
from core.reply_check import ReplyCheckSettings
from core.store import Store


class ScriptError(ValueError):
    """A script line is not what the format says; the message names the line."""


@dataclass(frozen=True)
class ScriptStep:
    user: str = ""  # the user's message; "" for a new-dialogue marker
    new_dialogue: bool = False
    expect: tuple[str, ...] = ()  # any of these in the reply makes it correct
    never_told: bool = False  # a question about a fact the dialogue never gave: the reply should decline
    forget: str = ""  # a forget step: the words whose turns are forgotten


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
        elif "forget" in record:
            if not isinstance(record["forget"], str) or not record["forget"].strip():
                raise ScriptError(f"{path}:{number}: \"forget\" must be a non-empty string")
            steps.append(ScriptStep(forget=record["forget"]))
        elif isinstance(record.get("user"), str) and record["user"].strip():
            expect = record.get("expect", [])
            expect = [expect] if isinstance(expect, str) else expect
            if not isinstance(expect, list) or not all(isinstance(e, str) and e.strip() for e in expect):
                raise ScriptError(f"{path}:{number}: \"expect\" must be a string or a list of non-empty strings")
            never_told = record.get("never_told", False)
            if not isinstance(never_told, bool) or (never_told and expect):
                raise ScriptError(f"{path}:{number}: \"never_told\" must be true or false, and not beside \"expect\"")
            steps.append(ScriptStep(user=record["user"], expect=tuple(expect), never_told=never_told))
        else:
            raise ScriptError(f"{path}:{number}: needs a non-empty \"user\" string, \"forget\" or \"new_dialogue\": true")
    return steps


class ChatSession:
    """One method's conversations, one after another: the Chat page's round without a page. Each
    reply goes through core.conversation (the same dating of turns, one write for both turns,
    memory saved) into `store`, by default a temporary SQLite file removed with the session.
    `judge`: the reply's consistency check, as the page stores it (`nli_judge()`), or None;
    `reply_check`: the page's repair of each reply (core.reply_check), or None for the method's text."""

    OWNER = "local:chat"

    def __init__(self, method_name: str, tools: Toolkit, config=None, max_tokens: int = 0,
                 today: Callable[[], str] = chat_day, store: Store | None = None, judge: ReplyJudge | None = None,
                 reply_check: ReplyCheckSettings | None = ReplyCheckSettings()) -> None:
        self.method_name = method_name
        self.tools = tools
        self.config = config
        self.max_tokens = max_tokens  # bound on each reply (0 = the method's own setting)
        if store is None:
            self._folder = tempfile.TemporaryDirectory(prefix="chat-")
            store = Store(Path(self._folder.name) / "chat.sqlite3")
        self.store = store
        self.instances: dict[str, Method] = {}
        self.service = ConversationService(store, self.OWNER, lambda name: create_method(name, tools, config),
                                           instances=self.instances, judge=judge, today=today, reply_check=reply_check)
        self.dialogue_index = -1
        self.new_dialogue()

    def new_dialogue(self) -> None:
        """A fresh conversation (and so a fresh memory)."""
        self.dialogue_index += 1
        self.conversation_id = self.store.create_conversation(f"script-{self.dialogue_index}", method=self.method_name,
                                                              owner=self.OWNER)
        self.method: Method = self.service.method(self.conversation_id, self.method_name)
        self.turn_index = 0

    @property
    def dialogue(self) -> Dialogue:
        return self.store.dialogue(self.conversation_id, owner=self.OWNER)

    def send(self, text: str, sink: Callable[[str], None] | None = None) -> dict:
        """Answer `text` (streamed to `sink` when given), store the round, take it into memory, and
        return the record of the exchange."""
        t0 = time.perf_counter()
        first: dict[str, float] = {}  # when the reply first showed progress, a partial trace, text: as a page would
        stored = None
        with self.service.start(self.conversation_id, self.method_name, text) as round_:
            for event in round_.events(max_tokens=self.max_tokens, tick_s=60.0):
                now = time.perf_counter() - t0  # one time per event: its progress and its trace came together
                if isinstance(event, MethodProgress):
                    first.setdefault("progress", now)
                    if event.progress.trace is not None:
                        first.setdefault("trace", now)
                elif isinstance(event, ReplyText):
                    first.setdefault("text", now)
                    (sink or _discard)(event.piece)
                elif isinstance(event, ReplyStored):
                    stored = event
        reply, seconds = stored.reply, stored.seconds
        self.method = self.instances[self.service.instance_key(self.conversation_id, self.method_name)]
        record = {
            "dialogue": self.dialogue_index,
            "turn": self.turn_index,
            "method": self.method_name,
            "user": text,
            "reply": reply.text,
            **({"draft": reply.draft} if reply.draft else {}),  # the method's own text, where the reply check changed it
            "seconds": round(seconds, 3),
            "first_output_s": round(min(first.values()), 3) if first else round(seconds, 3),
            "first_trace_s": round(first["trace"], 3) if "trace" in first else None,
            "first_text_s": round(first["text"], 3) if "text" in first else None,  # None: no text was streamed
            **prompt_work(reply.cost),
            "model": reply.model,
            "llm_calls": reply.llm_calls,
            "cost": reply.cost,
            "timings": {stage: round(float(t), 3) for stage, t in reply.timings.items()},  # seconds per stage
            "evidence": [{"text": e.text, "score": round(float(e.score), 4), "source": e.source, "kind": e.kind}
                         for e in reply.evidence],
        }
        if stored.checks is not None and (judged := judgement_of(stored.checks)) is not None:
            record["consistency"] = {"label": judged.label, "cs": round(judged.consistency, 4)}
        self.turn_index += 1
        return record

    def forget(self, text: str) -> dict:
        """Forget the current conversation's user turns holding `text` (and what came from them);
        the record says what was forgotten, never the text."""
        matches = self.service.matching_turns(self.conversation_id, text)
        report = self.service.forget(self.conversation_id, [m.index for m in matches], phrase=text)
        self.method = self.service.method(self.conversation_id, self.method_name)
        return {"dialogue": self.dialogue_index, "turn": self.turn_index, "method": self.method_name,
                "forgot": {"user_turns": list(report.user_turns), "redacted": list(report.redacted),
                           "cleaned": list(report.cleaned), "rounds": list(report.rounds), "memories": report.memories,
                           "file": list(report.file), "seconds": round(report.seconds, 3)}}

    def replay(self, text: str, reply: str) -> None:
        """Take a recorded exchange into the conversation and its memory without answering."""
        self.service.add_exchange(self.conversation_id, self.method_name, text,
                                  Reply(text=reply, method=self.method_name, model="transcript"))
        self.turn_index += 1


SPEED_KEYS = ("first_text_s", "prompt_computed", "prompt_reused", "prefill_s", "decode_s")  # a record's speed figures


def speed_medians(records: list[dict]) -> dict[str, float | None]:
    """The median of each of SPEED_KEYS over the records that have it (None where none has)."""
    import statistics

    out = {}
    for key in SPEED_KEYS:
        values = [r[key] for r in records if r.get(key) is not None]
        out[key] = round(float(statistics.median(values)), 3) if values else None
    return out


def prompt_work(reply_cost: dict | None) -> dict:
    """Where a reply's LLM time went, from what the server reported for its requests: prompt tokens
    computed and reused from the cache, and the server's prefill and decode seconds (None each
    where the backend does not report them: an endpoint, the scripted fake)."""
    from core.llm import cost as llm_cost

    work = llm_cost.totals(reply_cost or {})
    keys = (("prompt_computed", "processed_tokens"), ("prompt_reused", "cached_tokens"), ("prefill_s", "prefill_s"),
            ("decode_s", "decode_s"))
    return {name: work.get(key) for name, key in keys}


def nli_judge() -> ReplyJudge:
    """The page's consistency judgement (the project's NLI model, loaded on the first reply)."""
    from core.metrics.nli import load_nli

    scorer = functools.cache(load_nli)
    return functools.partial(judge_consistency, scorer)


def _discard(piece: str) -> None:
    """The sink of a reply nobody watches being written."""


def user_steps(session: ChatSession, steps: list[ScriptStep]) -> Iterator[ScriptStep]:
    """The script's user turns, in order; a new-dialogue marker after the first turn starts the
    session's next dialogue (fresh memory) before the turns that follow it."""
    started = False
    for step in steps:
        if step.new_dialogue:
            if started:
                session.new_dialogue()
            continue
        started = True
        yield step


def scored(record: dict, step: ScriptStep) -> dict:
    """The record with the step's expected answers and whether the reply holds one (case-insensitive)."""
    if step.expect:
        record["expected"] = list(step.expect)
        record["correct"] = any(e.lower() in record["reply"].lower() for e in step.expect)
    return record


def run_script(session: ChatSession, steps: list[ScriptStep]) -> Iterator[dict]:
    """The record of every user turn (and forget step) of the script, in order."""
    for step in user_steps(session, steps):
        yield session.forget(step.forget) if step.forget else scored(session.send(step.user), step)


def summarise(records: list[dict]) -> dict:
    """Reply time over all replies, and without the run's first (it waits for the model and the
    method's one-time loads); time to the first output (progress or text); LLM work per stage
    summed over the replies after the first; accuracy over the replies that had an expected answer."""
    import numpy as np

    from core.llm import cost as llm_cost

    records = [r for r in records if "reply" in r]  # a forget step's record is no reply

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
        # issue 53: the reply's first words and the prompt work behind them, per reply after the first
        **{f"median_{key}_after_first": value for key, value in speed_medians(records[1:]).items()},
        "stages_after_first": stages,
        "questions": len(judged),
        "correct": int(sum(judged)),
        "accuracy": round(sum(judged) / len(judged), 3) if judged else None,
    }
