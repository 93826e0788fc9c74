"""Forgetting on the pages (core/forget.py does the work): "Forget" on a user message, "forget
everything I said about ..." (the matching messages are listed before anything is removed), and on
the Memory graph page a fact's source message. After a forget the page says what was forgotten,
counted, never quoted."""

from __future__ import annotations

import streamlit as st

from core.conversation import ConversationService
from core.forget import FORGOTTEN, ForgetReport, user_turn_of_round
from core.store import StoredTurn
from ui import safe

NOTICE = "forget_notice"  # what the last forget did, shown after the rerun it causes


def _forget(service: ConversationService, cid: str, indices: list[int], phrase: str = "") -> None:
    with st.spinner("Forgetting: the memories are rebuilt from the remaining turns…"):
        try:
            report = service.forget(cid, indices, phrase=phrase)
        except TimeoutError as err:  # a reply is still being written to this conversation
            st.warning(safe.literal(str(err)))
            return
    st.session_state[NOTICE] = said(report)
    st.rerun()


def said(report: ForgetReport) -> str:
    """What the page says after a forget (no forgotten word in it)."""
    return report.summary() + " The database file keeps no copy."


def show_notice() -> None:
    if notice := st.session_state.pop(NOTICE, None):
        st.success(notice)


def message_action(service: ConversationService, cid: str | None, turn: StoredTurn, read_only: bool) -> None:
    """A "Forget" action under one of the owner's messages (confirmed first)."""
    if cid is None or read_only or turn.turn.role != "user" or turn.turn.text == FORGOTTEN:
        return
    with st.popover("Forget", help="Remove this message from the conversation, from every memory and from the file"):
        st.caption("This message, the reply to it and any later reply repeating it become “(forgotten)”; "
                   "every method's memory is rebuilt without them.")
        if st.button("Forget this message", key=f"forget:{cid}:{turn.index}", type="primary"):
            _forget(service, cid, [turn.index])


def panel(service: ConversationService, cid: str | None, read_only: bool) -> None:
    """The sidebar's "forget everything I said about ...": matching messages listed, then forgotten on a click."""
    show_notice()
    if cid is None or read_only:
        return
    with st.sidebar.expander("Forget what I said"):
        phrase = st.text_input("Forget everything I said about …", key=f"forget_phrase:{cid}",
                               help="Case-insensitive. The messages holding it are listed before anything is removed.")
        if not phrase.strip():
            return
        matches = service.matching_turns(cid, phrase)
        if not matches:
            st.caption("None of your messages in this conversation holds that.")
            return
        st.caption(f"{len(matches)} of your message(s) hold it:")
        for match in matches:
            st.markdown(f"- round {match.round}: {safe.literal(match.text)}")  # the owner's own words, before removal
        if st.button(f"Forget these {len(matches)} message(s)", key=f"forget_all:{cid}", type="primary"):
            _forget(service, cid, [m.index for m in matches], phrase)


def fact_action(service: ConversationService, cid: str, rounds: list[int | None], labels: list[str]) -> None:
    """Memory graph: pick a fact (`labels[i]`, asserted in round `rounds[i]`) and forget the message it came from."""
    show_notice()
    if not rounds:
        return
    with st.expander("Forget a fact (the message it came from)"):
        choice = st.selectbox("Fact", range(len(rounds)), format_func=lambda i: labels[i], key=f"forget_fact:{cid}")
        source = user_turn_of_round(service.store, cid, rounds[choice], owner=service.owner)
        if source is None:
            st.caption("This fact came from no message of yours (an import, or a round without one).")
        elif st.button("Forget the message this fact came from", key=f"forget_fact_go:{cid}", type="primary"):
            _forget(service, cid, [source])
