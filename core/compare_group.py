"""A comparison's group of conversations: one message answered by several methods, each in a
conversation of its own (the service runs one method per stored conversation, whose turns are one
linear dialogue), so each method keeps its own memory and its own replies. The group maps each
method to its conversation, in the order the methods were chosen.

The conversation service (core.conversation.ConversationService) exposes these as its methods:
`start_comparison` makes the group, `comparison_rounds` starts one round per method for a message,
`discard_comparison` removes a new group again when nothing compared was stored (the backend failed
on its first message), and `comparison_rows` reads what the group holds, turn by turn.

An owner's live comparisons are listed in the owner's settings (`Store.get_settings`), most recently
used first, so a new visit to the Compare page reopens the latest and offers the earlier ones; each
is named by its key (the conversation ids joined by commas, the votes' `conversation`), and one
whose conversations are gone (deleted, forgotten) is left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from core.metrics.conversing import tripped_checks
from core.store import Store, StoredTurn

TITLE_CHARS = 40  # of the first message, in the group's title
SHOWN_TURNS = 20  # the latest turns a page draws


class GroupHost(Protocol):
    """What a comparison needs of the conversation service (core.conversation.ConversationService);
    a protocol, so that this module does not import the service that imports it."""

    store: Store
    owner: str

    def start(self, cid: str | None, method_name: str, message: str, *, title: str | None = None): ...


def comparison_title(message: str) -> str:
    return f"Compare: {message[:TITLE_CHARS]}"


def start_comparison(host: GroupHost, methods: list[str], message: str) -> dict[str, str]:
    """A new group for `message`: one conversation per method, titled by the message and the method."""
    title = comparison_title(message)
    return {m: host.store.create_conversation(title=f"{title} ({m})", method=m, owner=host.owner) for m in methods}


def comparison_rounds(host: GroupHost, group: dict[str, str], order: list[str], message: str) -> dict:
    """One round (core.conversation.ReplyRound, not entered yet) per method of `group` for `message`,
    in `order`; the group is first in the owner's list of comparisons from now on."""
    remember(host.store, host.owner, group, comparison_title(message))
    return {m: host.start(group[m], m, message) for m in order}


def discard_comparison(host: GroupHost, group: dict[str, str]) -> bool:
    """Remove the group's conversations when they hold no compared turn (every method's reply to the
    same message): True when removed. A group that holds one is kept as it is."""
    if comparison_rows(host.store, group, host.owner)[0]:
        return False
    for cid in group.values():
        host.store.delete_conversation(cid, owner=host.owner)
    return True


@dataclass(frozen=True)
class Row:
    """One message of a comparison and each method's reply to it."""

    index: int  # the user turn's number in the comparison
    user: str
    replies: dict[str, StoredTurn]  # method -> the stored reply turn
    tripped: dict[str, tuple[str, ...]] = field(default_factory=dict)  # method -> the reply checks its reply trips


def comparison_rows(store: Store, group: dict[str, str], owner: str, latest: int = SHOWN_TURNS) -> tuple[list[Row], bool]:
    """The comparison's turns (the `latest` ones), and whether the conversations went apart (a
    method's round failed while another's was stored): rows stop where they differ."""
    pairs = {}
    for method, cid in group.items():
        stored = store.turns(cid, owner=owner)
        pairs[method] = [(u, a) for u, a in zip(stored[::2], stored[1::2]) if u.turn.role == "user" and a.reply is not None]
    count = min(len(p) for p in pairs.values())
    out, apart = [], any(len(p) != count for p in pairs.values())
    for k in range(count):
        users = {pairs[m][k][0].turn.text for m in group}
        if len(users) != 1:
            apart = True
            break
        out.append(Row(k, users.pop(), {m: pairs[m][k][1] for m in group}, {m: _tripped(pairs[m], k) for m in group}))
    return out[-latest:], apart


def _tripped(pairs: list, k: int) -> tuple[str, ...]:
    """The checks of `bench replies` the k-th reply trips, judged as a turn of its conversation."""
    before = pairs[:k]
    return tripped_checks(pairs[k][1].turn.text, pairs[k][0].turn.text, [u.turn.text for u, _ in before],
                          [a.turn.text for _, a in before])


# -- the owner's list of comparisons ------------------------------------------------------------------
SETTINGS_KEY = "comparisons"
MAX_KEPT = 50  # the oldest fall off the list (their conversations and votes stay)


@dataclass(frozen=True)
class Comparison:
    key: str  # the group's conversation ids, joined by commas
    methods: tuple[str, ...]  # in the order they were chosen, one per conversation of the key
    title: str
    used_at: float  # when a message was last sent in it

    @property
    def group(self) -> dict[str, str]:
        """method -> conversation id."""
        return dict(zip(self.methods, self.key.split(",")))


def _parse(entry: object) -> Comparison | None:
    """An entry of the settings list, or None for one this code cannot read (hand-edited, older)."""
    if not isinstance(entry, dict):
        return None
    key, methods = entry.get("key"), entry.get("methods")
    if not isinstance(key, str) or not isinstance(methods, list) or len(methods) != len(key.split(",")) or len(methods) < 2:
        return None
    return Comparison(key, tuple(str(m) for m in methods), str(entry.get("title", "")), float(entry.get("used_at", 0.0)))


def comparisons(store: Store, owner: str) -> list[Comparison]:
    """The owner's comparisons whose conversations all still exist, most recently used first."""
    kept = [c for c in map(_parse, store.get_settings(owner=owner).get(SETTINGS_KEY, [])) if c is not None]
    mine = {c.id for c in store.list_conversations(owner=owner, include_shared=False)}
    return [c for c in sorted(kept, key=lambda c: -c.used_at) if set(c.key.split(",")) <= mine]


def remember(store: Store, owner: str, group: dict[str, str], title: str,
             now: Callable[[], float] = time.time) -> Comparison:
    """Put the comparison `group` (method -> conversation id) first in the owner's list (added, or
    moved there when a message is sent in it again); its first title stays."""
    settings = store.get_settings(owner=owner)
    key = ",".join(group.values())
    earlier = [c for c in map(_parse, settings.get(SETTINGS_KEY, [])) if c is not None]
    title = next((c.title for c in earlier if c.key == key), title)
    this = Comparison(key, tuple(group), title, now())
    entries = [this, *(c for c in earlier if c.key != key)][:MAX_KEPT]
    settings[SETTINGS_KEY] = [{"key": c.key, "methods": list(c.methods), "title": c.title, "used_at": c.used_at}
                              for c in entries]
    store.put_settings(settings, owner=owner)
    return this
