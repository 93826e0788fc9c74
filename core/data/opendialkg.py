"""OpenDialKG (Moon et al., ACL 2019): one dialogue per CSV row, `Messages` a JSON list of actions.

A `kgwalk/choose_path` action carries the knowledge-graph walk the annotator chose to ground the
next utterance: `metadata.path = [score, [[subject, relation, object], ...], rendering]`, where a
relation starting with `~` is the reverse of the relation without it. Any file of this format
works (the shared 15 % test split, the full release, a held-out part).

Rows are read one at a time (the full release is 13,802 rows). A malformed row (unparsable JSON,
missing column, a path of the wrong shape, bytes that are not UTF-8) is skipped and counted in `LoadStats`, never fatal.
The dialogue's `index` is its row position in the file (0-based, header excluded), so splits by
index stay the same whatever else is skipped.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from core.dialogue import ASSISTANT, USER, Dialogue, Turn

RawTriple = tuple[str, str, str]  # as written in the file; a relation may start with "~"
CHOOSE_PATH = "kgwalk/choose_path"
_CSV_FIELD_LIMIT = 1 << 24  # a dialogue's JSON can exceed csv's default 128 KiB field limit


@dataclass(frozen=True)
class KGPath:
    triples: tuple[RawTriple, ...]
    sender: str
    rendering: str = ""


@dataclass(frozen=True)
class DialogueTurn:
    role: str  # user | assistant
    text: str
    path: KGPath | None = None  # the walk chosen right before this utterance, if any


@dataclass(frozen=True)
class OpenDialKGDialogue:
    index: int  # row position in the file
    turns: tuple[DialogueTurn, ...]
    paths: tuple[KGPath, ...]  # every walk in the dialogue, including ones not followed by a turn

    def dialogue(self, upto: int | None = None) -> Dialogue:
        """The chat turns before `upto` (all when None) as a Dialogue."""
        turns = self.turns[:upto] if upto is not None else self.turns
        return Dialogue.from_turns([Turn(t.role, t.text, f"odkg{self.index}:{i}") for i, t in enumerate(turns)],
                                   id=f"odkg{self.index}")

    def examples(self) -> Iterator["TurnExample"]:
        """Assistant turns grounded by a walk that follow at least one user turn."""
        for i, turn in enumerate(self.turns):
            if turn.role != ASSISTANT or turn.path is None or not turn.path.triples:
                continue
            users = [j for j in range(i) if self.turns[j].role == USER]
            if users:
                yield TurnExample(self, i, users[-1])


@dataclass(frozen=True)
class TurnExample:
    """history = chat turns before the response; query = the last user turn among them."""

    source: OpenDialKGDialogue
    position: int  # index of the response in source.turns
    query_position: int

    @property
    def response(self) -> str:
        return self.source.turns[self.position].text

    @property
    def query(self) -> str:
        return self.source.turns[self.query_position].text

    @property
    def gold(self) -> tuple[RawTriple, ...]:
        return self.source.turns[self.position].path.triples

    @property
    def context(self) -> list[DialogueTurn]:
        """Turns before the query (the query is passed separately, as in a chat)."""
        return list(self.source.turns[: self.query_position])

    def history(self) -> Dialogue:
        return self.source.dialogue(self.query_position)

    @property
    def id(self) -> str:
        return f"{self.source.index}:{self.position}"


@dataclass
class LoadStats:
    rows: int = 0
    dialogues: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> rows

    @property
    def skipped_rows(self) -> int:
        return sum(self.skipped.values())

    def as_dict(self) -> dict:
        return {"rows": self.rows, "dialogues": self.dialogues, "skipped_rows": self.skipped_rows,
                "skipped": dict(self.skipped)}


class MalformedRow(ValueError):
    pass


def parse_path(metadata) -> KGPath | None:
    """The walk of a choose_path action; raises MalformedRow when its shape is wrong."""
    try:
        path = metadata["path"]
        raw = path[1]
        rendering = str(path[2]) if len(path) > 2 else ""
    except (KeyError, IndexError, TypeError) as err:
        raise MalformedRow(f"bad kgwalk path: {err}") from None
    triples = []
    for t in raw:
        if not isinstance(t, (list, tuple)) or len(t) != 3 or not all(isinstance(x, str) and x.strip() for x in t):
            raise MalformedRow(f"bad path triple: {t!r}")
        triples.append((t[0].strip(), t[1].strip(), t[2].strip()))
    return KGPath(tuple(triples), "", rendering)


def parse_messages(index: int, messages_json: str) -> OpenDialKGDialogue:
    try:
        actions = json.loads(messages_json)
    except (json.JSONDecodeError, TypeError) as err:
        raise MalformedRow(f"Messages is not JSON: {err}") from None
    if not isinstance(actions, list):
        raise MalformedRow("Messages is not a list")
    turns: list[DialogueTurn] = []
    paths: list[KGPath] = []
    pending: KGPath | None = None
    for action in actions:
        if not isinstance(action, dict):
            raise MalformedRow("an action is not an object")
        sender = action.get("sender")
        if action.get("type") == "chat" and isinstance(action.get("message"), str):
            role = ASSISTANT if sender == ASSISTANT else USER
            path = pending if pending is not None and pending.sender == sender else None
            turns.append(DialogueTurn(role, action["message"].strip(), path))
            pending = None
        elif action.get("action_id") == CHOOSE_PATH:
            parsed = parse_path(action.get("metadata"))
            pending = KGPath(parsed.triples, str(sender), parsed.rendering)
            paths.append(pending)
    return OpenDialKGDialogue(index, tuple(turns), tuple(paths))


def _is_utf8(text: str) -> bool:
    """False when `text` carries undecodable bytes (the file is read with errors="surrogateescape")."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def iter_opendialkg(path: str | Path, stats: LoadStats | None = None) -> Iterator[OpenDialKGDialogue]:
    """Dialogues of an OpenDialKG CSV, one row at a time; bad rows are counted in `stats`."""
    stats = stats if stats is not None else LoadStats()
    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise ValueError(f"{path}: not a CSV file: {err}") from None
        if "Messages" not in header:
            raise ValueError(f"{path}: no 'Messages' column (header {header[:5]}); not an OpenDialKG CSV")
        column = header.index("Messages")
        index = -1
        while True:
            index += 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                stats.rows += 1
                stats.skipped[f"csv error: {str(err)[:60]}"] += 1
                continue
            stats.rows += 1
            if column >= len(row):
                stats.skipped["missing Messages column"] += 1
                continue
            if not _is_utf8(row[column]):
                stats.skipped["not UTF-8"] += 1
                continue
            try:
                dialogue = parse_messages(index, row[column])
            except MalformedRow as err:
                stats.skipped[str(err).split(":")[0]] += 1
                continue
            stats.dialogues += 1
            yield dialogue


def load_opendialkg(path: str | Path) -> tuple[list[OpenDialKGDialogue], LoadStats]:
    stats = LoadStats()
    return list(iter_opendialkg(path, stats)), stats


def in_split(index: int, split: str) -> bool:
    """`train`: index % 5 != 0; `eval`: index % 5 == 0; `all`: every dialogue."""
    if split == "all":
        return True
    if split == "eval":
        return index % 5 == 0
    if split == "train":
        return index % 5 != 0
    raise ValueError(f"split must be train, eval or all, not {split!r}")
