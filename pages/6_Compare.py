"""Compare: one message, two to four methods, replies side by side under blind labels (A, B, ...);
people vote, the names appear after the vote, and the votes rank the methods (core/votes)."""

from __future__ import annotations

import streamlit as st

from core.limits import InvalidMessage, clean_message
from core.llm import LLMError
from core.methods import METHODS, method_class
from core.paths import MissingResource
from core.votes.model import column_labels, shown_order
from ui import chat_box, compare, compare_live, conversations, icons, owner, resources, safe, state, warmup

st.set_page_config(page_title="Compare", page_icon=icons.FAVICON, layout="wide")
warmup.start()
store = resources.default_store()
me = owner.current_owner()
owner.sidebar(me)
votes = compare.vote_store()
service = conversations.service(store, me)
kept = compare_live.keep_interrupted(service)
group = compare_live.reopen(store, me)

DEFAULT_METHODS = ["base", "rag"]  # the plain LLM and a memory method: a newcomer can type at once
with st.sidebar:
    compare_live.picker(store, me, group)  # the owner's comparisons: the open one, earlier ones to reopen
    if "cmp_methods" not in st.session_state:
        st.session_state["cmp_methods"] = list(group) or DEFAULT_METHODS
    methods = st.multiselect("Methods (2 to 4)", list(METHODS), key="cmp_methods", max_selections=4,
                             format_func=lambda n: f"{n} — {method_class(n).label}")
    st.button("New comparison", on_click=compare_live.start_new)  # before this run draws the picker
    max_tokens = st.number_input("Max reply tokens", min_value=16, max_value=2048, value=256, step=16, key=state.MAX_TOKENS)
    reveal = st.toggle("Show method names before voting", value=False, key="cmp_reveal",
                       help="Off: blind votes. The names appear once you vote on a turn.")

st.title("Compare")
st.caption("One message, several methods: each keeps its own memory and replies. Columns are labelled A, B, ... in an "
           "order drawn per turn; the method names appear after your vote. "
           f"LLM: {safe.literal(state.llm_settings().describe())}")
if kept:
    st.info("Replies stopped: your message and the text written so far are kept (marked stopped).")
if group and list(group) != methods:
    st.info(f"This comparison is of {', '.join(group)}. Your next message starts a new comparison of the methods chosen.")

key = compare_live.group_key(group) if group else ""
shown, apart = service.comparison_rows(group) if group else ([], False)
for row in shown:
    order = shown_order(list(group), key, row.index, me)
    current = votes.get(key, row.index, owner=me)
    revealed = reveal or current is not None
    with st.chat_message("user"):
        st.markdown(safe.literal(row.user))
    for col, label, method in zip(st.columns(len(order)), column_labels(len(order)), order):
        with col:
            st.markdown(compare.header(label, method, revealed))
            compare_live.draw_reply(row.replies[method], f"{key}:{row.index}:{method}", revealed, row.tripped.get(method, ()))
    compare.vote_bar(votes, key, row.index, order, [row.replies[m].turn.text for m in order],
                     compare_live.measures_of(row), me, shortcuts=row is shown[-1])
    st.divider()
if apart:
    st.warning("A method's reply failed where the others' were stored: the turns after it are not compared. "
               "Start a new comparison to go on.")

query = chat_box.message_box(disabled=len(methods) < 2, notice_key="cmp_notice")
if len(methods) < 2:
    st.info("Choose at least two methods in the sidebar.")
if query is not None and len(methods) >= 2:
    try:
        query = clean_message(query)
    except InvalidMessage as err:
        st.warning(f"Not sent. {err}")
        query = None
if query and len(methods) >= 2:
    created = list(group) != methods or apart
    if created:  # a new comparison: one conversation per method
        group = service.start_comparison(methods, query)
        st.session_state[compare_live.GROUP] = group
        key = compare_live.group_key(group)
        st.query_params[compare_live.QUERY] = key
        shown = []
    turn = shown[-1].index + 1 if shown else 0
    order = shown_order(list(group), key, turn, me)
    with st.chat_message("user"):
        st.markdown(safe.literal(query))
    st.button("Stop", key="cmp_stop", help="Stop every reply (your message and the text so far are kept)")
    try:
        compare_live.answer(service, group, order, query, int(max_tokens))
    except (LLMError, MissingResource) as err:
        st.session_state.pop(compare_live.PENDING, None)
        if created and service.discard_comparison(group):  # nothing stored: the new conversations are removed
            st.session_state[compare_live.GROUP] = {}
            st.query_params.pop(compare_live.QUERY, None)
        st.error(f"The LLM backend failed: {safe.literal(str(err))}. Your message is below to copy.")
        st.code(query, language=None)
        st.stop()
    st.rerun()  # the turn, with its vote buttons

st.divider()
compare.ranking_panel(votes, me)
with st.expander("Vote on a scripted comparison (`python -m core compare`)"):
    compare.items_panel(votes, me)
