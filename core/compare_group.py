"""A comparison's group of conversations: one message answered by several methods, each in a
conversation of its own (the service runs one method per stored conversation, whose turns are one
linear dialogue), so each method keeps its own memory and its own replies. The group maps each
method to its conversation, in the order the methods were chosen.

The conversation service (core.conversation.ConversationService) exposes these as its methods:
`start_comparison` makes the group, `comparison_rounds` starts one round per method for a message,
`discard_comparison` removes a new group again when nothing compared was stored (the backend failed
on its first message), and `comparison_rows` reads what the group holds, turn by turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from core.metrics.conversing import tripped_checks
from core.store import Store, StoredTurn
from core.votes.groups import remember

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
