"""What a blind vote is: one person's judgement of the replies that two to four methods gave to one
user turn, shown in a drawn order under the labels A, B, ...

`winner` is a method name (that reply was the best), "tie" (equally good), "both_bad" (two
methods, neither is acceptable) or "all_bad" (three or four methods). A vote keeps the methods in
the order they were shown, the replies it judged (in the same order) and, where the app knew them,
each reply's automatic measures (`cs`: NLI consistency, `factscore`, `correct`: the reply holds the
turn's expected answer), so the votes can later test those measures (core/votes/measures.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field

TIE = "tie"
BOTH_BAD = "both_bad"  # two methods shown, neither reply is acceptable
ALL_BAD = "all_bad"  # three or four methods shown, none is acceptable
OUTCOMES = (TIE, BOTH_BAD, ALL_BAD)
MEASURES = ("cs", "factscore", "correct")
MIN_METHODS, MAX_METHODS = 2, 4
MAX_NAME_CHARS = 64
MAX_CONVERSATION_CHARS = 200
MAX_REPLY_CHARS = 50_000


class VoteError(ValueError):
    """A vote that is not well formed; the message says what is wrong."""


@dataclass(frozen=True)
class Vote:
    owner: str
    conversation: str  # a conversation id, or a scripted comparison's id
    turn: int  # the user turn's index in the conversation (or comparison)
    methods: tuple[str, ...]  # in the order the columns were shown (A, B, ...)
    winner: str  # a method name, "tie", "both_bad" or "all_bad"
    replies: tuple[str, ...] = ()  # the replies judged, in the order shown ("" where unknown)
    measures: dict = field(default_factory=dict)  # method -> {"cs": float, "factscore": float, "correct": bool}
    created_at: float = 0.0

    @property
    def bad(self) -> bool:
        """No reply was acceptable: counted, but says nothing about which method is better."""
        return self.winner in (BOTH_BAD, ALL_BAD)

    @property
    def decisive(self) -> bool:
        return self.winner in self.methods

    def same_judgement(self, other: "Vote") -> bool:
        return (self.methods, self.winner, self.replies) == (other.methods, other.winner, other.replies)

    def to_json(self) -> dict:
        """The export record: `conversation`, `turn`, `methods` (order shown), `winner`, `owner`,
        `created_at`, plus the replies and measures."""
        return {"conversation": self.conversation, "turn": self.turn, "methods": list(self.methods), "winner": self.winner,
                "owner": self.owner, "created_at": self.created_at, "replies": list(self.replies), "measures": self.measures}


def _method_name(name) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise VoteError(f"a method name is a non-empty string of at most {MAX_NAME_CHARS} characters, not {name!r}")
    if name.strip() in OUTCOMES:
        raise VoteError(f"{name!r} cannot name a method: it is one of the outcomes {', '.join(OUTCOMES)}")
    return name.strip()


def _measures(measures, methods: tuple[str, ...]) -> dict:
    if not measures:
        return {}
    if not isinstance(measures, dict):
        raise VoteError(f"measures must be an object method -> {{cs, factscore, correct}}, not {type(measures).__name__}")
    out = {}
    for method, values in measures.items():
        if method not in methods:
            raise VoteError(f"measures name {method!r}, which the vote did not show")
        if not isinstance(values, dict):
            raise VoteError(f"the measures of {method!r} must be an object")
        kept = {}
        for key, value in values.items():
            if key not in MEASURES or value is None:
                continue  # measures this code does not compare are dropped, not refused
            if key == "correct":
                if not isinstance(value, bool):
                    raise VoteError(f"{method}.correct must be true or false, not {value!r}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise VoteError(f"{method}.{key} must be a finite number, not {value!r}")
            kept[key] = value if key == "correct" else float(value)
        if kept:
            out[method] = kept
    return out


def make_vote(owner: str, conversation: str, turn: int, methods, winner: str, replies=(), measures=None,
              created_at: float = 0.0) -> Vote:
    """A checked, normalised Vote; VoteError on anything malformed. "both_bad" with three or more
    methods is read as "all_bad" and "all_bad" with two as "both_bad" (one meaning, two names)."""
    if not isinstance(conversation, str) or not conversation.strip() or len(conversation) > MAX_CONVERSATION_CHARS:
        raise VoteError(f"a conversation id is a non-empty string of at most {MAX_CONVERSATION_CHARS} characters")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
        raise VoteError(f"a turn is a non-negative integer, not {turn!r}")
    if isinstance(methods, str) or not isinstance(methods, (list, tuple)):
        raise VoteError("methods is a list of method names, in the order shown")
    shown = tuple(_method_name(m) for m in methods)
    if not MIN_METHODS <= len(shown) <= MAX_METHODS or len(set(shown)) != len(shown):
        raise VoteError(f"a vote compares {MIN_METHODS} to {MAX_METHODS} different methods, not {list(shown)}")
    if not isinstance(winner, str):
        raise VoteError(f"the winner is a method name or one of {', '.join(OUTCOMES)}, not {winner!r}")
    winner = winner.strip()
    if winner in (BOTH_BAD, ALL_BAD):
        winner = BOTH_BAD if len(shown) == 2 else ALL_BAD
    elif winner != TIE and winner not in shown:
        raise VoteError(f"the winner {winner!r} is none of the methods shown ({', '.join(shown)}) "
                        f"nor one of {', '.join(OUTCOMES)}")
    replies = tuple(replies or ())
    if replies and (len(replies) != len(shown) or not all(isinstance(r, str) for r in replies)):
        raise VoteError(f"replies: one string per method shown ({len(shown)}), in the order shown")
    if any(len(r) > MAX_REPLY_CHARS for r in replies):
        raise VoteError(f"a reply longer than {MAX_REPLY_CHARS:,} characters cannot be stored with a vote")
    if isinstance(created_at, bool) or not isinstance(created_at, (int, float)) or not math.isfinite(created_at):
        raise VoteError(f"created_at is a time in seconds since 1970, not {created_at!r}")
    return Vote(owner, conversation.strip(), turn, shown, winner, replies or ("",) * len(shown),
                _measures(measures, shown), float(created_at))


def vote_from_json(record: dict, where: str = "") -> Vote:
    """A Vote from an export record (JSON object, or a CSV row with JSON lists in its cells)."""
    prefix = f"{where}: " if where else ""
    if not isinstance(record, dict):
        raise VoteError(f"{prefix}a vote is a JSON object")
    missing = [k for k in ("conversation", "turn", "methods", "winner", "owner") if record.get(k) in (None, "")]
    if missing:
        raise VoteError(f"{prefix}missing {', '.join(missing)}")
    try:
        methods, replies, measures = (json.loads(v) if isinstance(v, str) and v.strip()[:1] in "[{" else v
                                      for v in (record["methods"], record.get("replies") or (), record.get("measures") or {}))
        turn = int(record["turn"]) if isinstance(record["turn"], str) and record["turn"].strip().isdigit() else record["turn"]
        created = record.get("created_at") or 0.0
        created = float(created) if isinstance(created, str) else created
        owner = record["owner"]
        if not isinstance(owner, str):
            raise VoteError(f"owner must be a string, not {owner!r}")
        return make_vote(owner, record["conversation"], turn, methods, record["winner"], replies, measures, created)
    except (VoteError, ValueError) as err:
        raise VoteError(f"{prefix}{err}") from None


def column_labels(n: int) -> list[str]:
    """"A", "B", ... for n columns."""
    return [chr(ord("A") + k) for k in range(n)]


def shown_order(methods, conversation: str, turn: int, salt: str = "") -> list[str]:
    """The methods in the order drawn for one turn's columns: a shuffle seeded by the conversation,
    the turn and `salt` (the owner), so every turn draws afresh, a reload shows the same order, and
    two people need not see the same one."""
    seed = hashlib.sha256(f"{conversation}\x00{turn}\x00{salt}".encode()).digest()
    order = list(methods)
    random.Random(seed).shuffle(order)
    return order
