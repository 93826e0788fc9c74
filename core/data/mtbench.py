"""MT-Bench-101 (Bai et al., ACL 2024): one dialogue a line, `{"task", "id", "history": [{"user", "bot"}]}`.

The `bot` texts are the benchmark's golden context. The official protocol does not score the first
turn of the tasks in `SKIP_FIRST_TASKS` (it only sets up the dialogue there), and shows the golden
answer to the judge for `NEED_REF_TASKS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.dialogue import ASSISTANT, USER, Dialogue, Turn

TASKS = {
    "CM": "Context Memory", "AR": "Anaphora Resolution", "SI": "Separate Input", "TS": "Topic Shift",
    "CC": "Content Confusion", "CR": "Content Rephrasing", "FR": "Format Rephrasing", "SC": "Self-correction",
    "SA": "Self-affirmation", "MR": "Mathematical Reasoning", "GR": "General Reasoning",
    "IC": "Instruction Clarification", "PI": "Proactive Interaction",
}
SKIP_FIRST_TASKS = frozenset({"FR", "CR", "AR", "SA", "SC", "CM"})
NEED_REF_TASKS = frozenset({"MR", "GR"})


@dataclass(frozen=True)
class MTBenchRound:
    user: str
    bot: str  # the golden answer


@dataclass(frozen=True)
class MTBenchDialogue:
    id: int
    task: str
    rounds: tuple[MTBenchRound, ...]

    @property
    def task_name(self) -> str:
        return TASKS.get(self.task, self.task)

    def is_scored(self, turn_index: int) -> bool:
        """Whether the official protocol scores round `turn_index` (0-based)."""
        return not (turn_index == 0 and self.task in SKIP_FIRST_TASKS)

    def golden_turns(self, upto: int) -> list[Turn]:
        """User and golden bot turns of the rounds before `upto` (0-based), as dialogue turns."""
        turns = []
        for i, r in enumerate(self.rounds[:upto]):
            turns += [Turn(USER, r.user, f"{self.id}:{i}:u"), Turn(ASSISTANT, r.bot, f"{self.id}:{i}:a")]
        return turns

    def golden_dialogue(self, upto: int) -> Dialogue:
        return Dialogue.from_turns(self.golden_turns(upto), id=str(self.id))


def parse_dialogue(row: dict) -> MTBenchDialogue:
    try:
        rounds = tuple(MTBenchRound(str(h["user"]), str(h["bot"])) for h in row["history"])
        return MTBenchDialogue(int(row["id"]), str(row["task"]), rounds)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not an MT-Bench-101 dialogue (need task, id, history of user/bot): {err}") from err


def load_mtbench(path: str | Path) -> list[MTBenchDialogue]:
    """Every dialogue of an MT-Bench-101 JSONL file, in file order."""
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(parse_dialogue(json.loads(line)))
                except (json.JSONDecodeError, ValueError) as err:
                    raise ValueError(f"{path}:{n}: {err}") from err
                except (KeyError, TypeError, AttributeError) as err:  # JSON, but not an MT-Bench-101 dialogue
                    raise ValueError(f"{path}:{n}: not an MT-Bench-101 dialogue ({type(err).__name__}: {err})") from err
    return out


def stratified(dialogues: list[MTBenchDialogue], limit: int | None) -> list[MTBenchDialogue]:
    """At most `limit` dialogues spread over the tasks: round-robin over tasks (in order of first
    appearance), each task's dialogues in file order, so even a small limit covers every task."""
    if limit is None or limit >= len(dialogues):
        return list(dialogues)
    by_task: dict[str, list[MTBenchDialogue]] = {}
    for d in dialogues:
        by_task.setdefault(d.task, []).append(d)
    picked: list[MTBenchDialogue] = []
    depth = 0
    while len(picked) < limit:
        for task_dialogues in by_task.values():
            if depth < len(task_dialogues) and len(picked) < limit:
                picked.append(task_dialogues[depth])
        depth += 1
    return picked
