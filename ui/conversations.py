"""Conversation pickers and long-history windows shared by the pages. Every list comes from
`Store.list_conversations(owner=...)`, so a page only ever offers the owner's own conversations
and the read-only shared demo ones."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from core.store import ConversationInfo, Store
from ui import state

HISTORY_WINDOW = 50  # turns drawn at once: a 10,000-turn conversation renders as fast as a short one
NLI_AUTO_TURNS = 10  # replies among the latest turns get their consistency check without asking
NLI_CONTEXT_TURNS = 100  # history each shown reply is judged against (the NLI window keeps only its latest chunks)


def label(info: ConversationInfo) -> str:
    """Plain text for a select box (which never interprets Markdown or HTML)."""
    shared = "[shared demo, read-only] " if info.read_only else ""
    return f"{shared}{info.title} ({info.turns:,} turns)"


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


def remember_method(store: Store, info: ConversationInfo | None, cid: str, method: str, *, owner: str) -> None:
    """Record the method a conversation was last continued with, so reopening it picks that one."""
    if info is not None and info.method != method:
        store.update_conversation(cid, owner=owner, method=method)
