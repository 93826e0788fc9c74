"""Conversation pickers, long-history windows and the Chat page's conversation service. Every list
comes from `Store.list_conversations(owner=...)`, so a page only ever offers the owner's own
conversations and the read-only shared demo ones."""

from __future__ import annotations

import time
from collections.abc import Iterable

import streamlit as st

from core.conversation import NLI_CONTEXT_TURNS, ConversationService  # noqa: F401 (NLI_CONTEXT_TURNS: for pages)
from core.methods import create_method, method_class
from core.store import ConversationInfo, Store
from ui import consistency, screens, state

HISTORY_WINDOW = 50  # turns drawn at once: a 10,000-turn conversation renders as fast as a short one
NLI_AUTO_TURNS = 10  # replies among the latest turns get their consistency check without asking
PENDING = "chat_pending_round"  # st.session_state: the round of a message sent in this session, until it finishes
CHOSEN_METHOD = "chat_method_chosen"  # st.session_state: the Method box's last value, kept apart from the widget's key


def label(info: ConversationInfo) -> str:
    """Plain text for a select box (which never interprets Markdown or HTML): title, method, when
    it started and its length, so conversations that open with the same message differ."""
    shared = "[shared demo, read-only] " if info.read_only else ""
    started = time.strftime("%d %b %H:%M:%S", time.localtime(info.created_at))
    method = f" · {info.method}" if info.method else ""
    return f"{shared}{info.title}{method} · {started} ({info.turns:,} turns)"


def labels(infos: Iterable[ConversationInfo]) -> dict[str, str]:
    """Conversation id -> a label no other conversation of the list has (a select box picks by its
    label: two alike would both open the first)."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for info in infos:
        text = label(info)
        seen[text] = seen.get(text, 0) + 1
        out[info.id] = text if seen[text] == 1 else f"{text} #{seen[text]}"
    return out


def window_start(total: int, key: str, size: int = HISTORY_WINDOW) -> int:
    """First turn index to draw: the latest `size` turns, or an earlier page the user picks."""
    if total <= size:
        return 0
    pages = (total + size - 1) // size
    page = st.select_slider(
        f"Showing {size} turns at a time ({total:,} in all)", options=list(range(1, pages + 1)), value=pages,
        format_func=lambda p: f"{(p - 1) * size + 1:,}–{min(p * size, total):,}", key=f"history_window:{key}",
    )
    return (page - 1) * size


def reopen_latest(infos: Iterable[ConversationInfo], methods: Iterable[str]) -> None:
    """On a session's first visit to Chat (a reload, a restart, a new tab), select the owner's most
    recently updated conversation and the method it last used, instead of an empty "— new —".
    `infos` come most recent first (Store.list_conversations). Once the page has run, the choice is
    the user's: "New conversation" stays new."""
    if state.CONVERSATION in st.session_state:
        return
    latest = next((c for c in infos if not c.read_only), None)  # shared demos are not "yours"
    if latest is None:
        return
    st.session_state[state.CONVERSATION] = latest.id
    if latest.method in set(methods):
        st.session_state[state.METHOD] = latest.method


def method_box(methods: list[str]) -> str:
    """The sidebar's Method box; its value is the method the next message (and a new conversation)
    uses. Streamlit drops a widget's value when a run of another page does not draw it, so after a
    visit to another page the box came back as the first method while the person had picked
    another: the last pick is kept under its own key and put back before the box is drawn."""
    if state.METHOD not in st.session_state and st.session_state.get(CHOSEN_METHOD) in methods:
        st.session_state[state.METHOD] = st.session_state[CHOSEN_METHOD]
    chosen = st.selectbox("Method", methods, key=state.METHOD, format_func=lambda n: f"{n} — {method_class(n).label}")
    st.session_state[CHOSEN_METHOD] = chosen
    return chosen


def service(store: Store, owner: str) -> ConversationService:
    """This user's conversation service: method instances kept in this session (st.session_state),
    built with the method's screen config and rebuilt when the backend settings change."""
    return ConversationService(
        store, owner, lambda name: create_method(name, state.toolkit(), screens.screen_of(name).chat_config()),
        instances=st.session_state, judge=consistency.judge_reply,
        is_current=lambda method: method.tools.llm is state.current_llm())


def keep_interrupted(conversations: ConversationService) -> str:
    """A message of this session whose run stopped before its reply was stored (Stop, or another
    message sent while it was written) is kept now if it was not already; returns what to tell."""
    pending = st.session_state.pop(PENDING, None)
    if pending is None:
        return ""
    conversations.keep(pending)  # nothing when the stopped run kept it itself
    if not pending.stopped:
        return ""
    if st.session_state.get("stop_reply") and not pending.partial.strip():
        return "Reply stopped before any text was written: your message is kept."
    if st.session_state.get("stop_reply"):
        return "Reply stopped: your message and the part of the reply written so far are kept (marked stopped)."
    return "Your earlier message was kept; its reply was stopped when you sent another."
