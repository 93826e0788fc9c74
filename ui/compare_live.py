"""The live half of the Compare page: one message answered by several methods at once, each
through core.conversation's round in a conversation of its own, drawn blind into columns.

A comparison is a group of per-method conversations that receive the same user messages; the
conversation service makes, answers and discards it (core/compare_group.py), this module keeps it
in the session and draws it. The group's key (the vote's `conversation`) is its conversation ids
joined by commas; the address holds it, so a reload reopens the comparison.
"""

from __future__ import annotations

import time
from contextlib import ExitStack

import streamlit as st

from core.compare_group import Comparison, Row, comparisons
from core.conversation import ConversationService, MethodProgress, Queued, ReplyStored, ReplyText, Working, judgement_of
from core.dialogue import Reply
from core.store import Store, StoredTurn
from core.votes.measures import cs_of
from core.votes.model import column_labels
from ui import consistency, replies
from ui.safe import literal
from ui.streaming import queue_line

GROUP = "cmp_group"  # session: {method: conversation id}, in the order the methods were chosen
METHODS_KEY = "cmp_methods"  # session: the sidebar's methods (its widget key)
PICK = "cmp_pick"  # session: the comparisons picker's widget key
PENDING = "cmp_pending"  # session: the rounds of a message whose run was cut short (kept on the next run)
QUERY = "compare"  # the address's parameter: the group's conversation ids
TICK = 0.1  # seconds each round's events wait before the next column's turn (2-4 columns: a page update every <= 0.4 s)


def group_key(group: dict[str, str]) -> str:
    return ",".join(group.values())


def reopen(store: Store, owner: str) -> dict[str, str]:
    """The comparison in the session, else the one named in the address (conversations this owner
    can read; an id of someone else's is ignored, as a missing one), else the owner's latest (a
    new tab, the sidebar's entry: the address is set to it)."""
    if GROUP in st.session_state:
        return st.session_state[GROUP]
    group = {}
    for cid in [c for c in st.query_params.get(QUERY, "").split(",") if c][:4]:
        try:
            info = store.conversation(cid, owner=owner)
        except KeyError:
            continue
        if info.method and info.method not in group:
            group[info.method] = cid
    if QUERY not in st.query_params and (latest := comparisons(store, owner)):
        group = latest[0].group
        st.query_params[QUERY] = latest[0].key
    st.session_state[GROUP] = group if len(group) >= 2 else {}
    return st.session_state[GROUP]


def _open(comparison: Comparison | None) -> None:
    """The picker's choice, opened before the page runs (a callback): the methods follow it."""
    if comparison is None:
        return
    st.session_state[GROUP] = comparison.group
    st.session_state[METHODS_KEY] = list(comparison.methods)
    st.query_params[QUERY] = comparison.key


def start_new() -> None:
    """"New comparison": the next message starts one with the methods chosen."""
    st.session_state[GROUP] = {}
    st.query_params.pop(QUERY, None)


def comparison_label(c: Comparison) -> str:
    when = time.strftime("%d %b %H:%M", time.localtime(c.used_at))
    return f"{c.title} · {' vs '.join(c.methods)} · {when}"


def picker(store: Store, owner: str, group: dict[str, str]) -> None:
    """The owner's comparisons, latest first, the open one selected; picking another opens it."""
    found = comparisons(store, owner)
    if not found:
        return
    current = next((c for c in found if c.group == group), None)
    options = found if current is not None else [None, *found]
    st.session_state[PICK] = current
    st.selectbox("Your comparisons", options, key=PICK, on_change=lambda: _open(st.session_state[PICK]),
                 format_func=lambda c: "— a new one —" if c is None else comparison_label(c))


def keep_interrupted(service: ConversationService) -> bool:
    """Rounds of a message whose run stopped (Stop, another click) are kept now: the user's message
    and each reply's text so far, marked stopped. True when there were any."""
    pending = st.session_state.pop(PENDING, None) or []
    for p in pending:
        service.keep(p)
    return bool(pending)


def blind_caption(reply: Reply) -> str:
    """What a column says about its reply before the vote: no method name."""
    line = f"{sum(reply.timings.values()):.2f} s · {reply.llm_calls} LLM call(s)"
    return line + " · stopped" if reply.stopped else line


def draw_reply(stored: StoredTurn, key: str, revealed: bool, tripped: tuple[str, ...] = ()) -> None:
    if stored.turn.text.strip():
        st.markdown(literal(stored.turn.text))
    else:
        st.markdown("*(stopped before any text was written)*" if stored.reply.stopped else "*(no text)*")
    st.caption(blind_caption(stored.reply))
    if tripped and stored.turn.text.strip():  # the same checks as `bench replies` (docs/replies.md)
        st.caption("Reply checks tripped: " + ", ".join(tripped))
    consistency.render(judgement_of(stored.checks))
    if revealed:
        replies.render_details(stored.reply, key=key)


def measures_of(row: Row) -> dict:
    """What the vote keeps of each reply's automatic measures: its CS, where it was judged."""
    out = {}
    for method, stored in row.replies.items():
        cs = cs_of(stored.checks)
        if cs is not None:
            out[method] = {"cs": cs}
    return out


def answer(service: ConversationService, group: dict[str, str], order: list[str], message: str,
           max_tokens: int) -> dict[str, ReplyStored]:
    """Send `message` to every method of the group at once and draw the replies blind, in `order`,
    as they stream. Leaving early (Stop, another click: Streamlit stops the run at a page update)
    stops every round; each keeps the message and its partial reply, marked stopped."""
    rounds = service.comparison_rounds(group, order, message)  # the group goes first in the owner's list
    st.session_state[PENDING] = [r.pending for r in rounds.values()]
    boxes = {}
    for col, label, method in zip(st.columns(len(order)), column_labels(len(order)), order):
        with col:
            st.markdown(f"**{label}**")
            boxes[method] = (st.empty(), st.empty())  # status line, text
    done: dict[str, ReplyStored] = {}
    with ExitStack() as stack:
        for r in rounds.values():
            stack.enter_context(r)
        events = {m: rounds[m].events(max_tokens=max_tokens, tick_s=TICK) for m in order}
        texts = dict.fromkeys(order, "")
        waiting = dict.fromkeys(order, "")  # each column's place in the model's queue, while it waits
        while len(done) < len(order):
            for method in order:
                if method in done:
                    continue
                event = next(events[method])
                status, text = boxes[method]
                if isinstance(event, ReplyText):
                    texts[method] += event.piece
                    text.markdown(literal(texts[method]))
                elif isinstance(event, Queued):  # shown until the model takes the request
                    waiting[method] = "" if event.place.started else queue_line(event.place)
                    status.caption(waiting[method] or f"working… {event.elapsed_s:.0f} s")
                elif isinstance(event, (Working, MethodProgress)):
                    status.caption(waiting[method] or f"working… {event.elapsed_s:.0f} s")
                elif isinstance(event, ReplyStored):
                    done[method] = event
                    status.caption(f"done in {event.seconds:.1f} s")
                    if not event.streamed or event.reply.text != texts[method]:  # a method may change it after streaming
                        text.markdown(literal(event.reply.text))
        with st.spinner("Updating the methods' memories…"):
            for method in order:
                for _ in events[method]:
                    pass
    st.session_state.pop(PENDING, None)
    return done
