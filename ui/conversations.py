"""Conversation pickers and long-history windows shared by the pages. Every list comes from
`Store.list_conversations(owner=...)`, so a page only ever offers the owner's own conversations
and the read-only shared demo ones."""

from __future__ import annotations

import streamlit as st

from core.store import ConversationInfo

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
