"""Chat: pick a method, talk, and see each reply's evidence, trace, timings and model. A reply's
round (stream, store, judge, memory) is core.conversation's; this page reads widgets and draws."""

from __future__ import annotations

import streamlit as st

from core.dialogue import ASSISTANT, USER
from core.limits import InvalidMessage, clean_message
from core.llm import LLMError
from core.methods import METHODS, method_class
from core.paths import MissingResource
from ui import chat_box, consistency, conversations, forget, icons, owner, replies, resources, safe, screens, state, streaming, warmup

st.set_page_config(page_title="Chat", page_icon=icons.FAVICON, layout="wide")
warmup.start()  # shared models load in the background while the page is read
store = resources.default_store()
me = owner.current_owner()
owner.sidebar(me)
service = conversations.service(store, me)
kept_notice = conversations.keep_interrupted(service)  # a message whose reply a rerun cut short is kept first

infos = {c.id: c for c in store.list_conversations(owner=me)}
labels = conversations.labels(infos.values())
conversations.reopen_latest(infos.values(), METHODS)  # a reload or restart opens the owner's latest conversation
with st.sidebar:
    method_name = conversations.method_box(list(METHODS))  # the method a new conversation uses, kept across pages
    screen = screens.screen_of(method_name)
    screen.sidebar()
    ids = [None, *infos]
    if st.button("New conversation"):
        st.session_state[state.CONVERSATION] = None
    current = st.session_state.get(state.CONVERSATION)
    chosen = st.selectbox("Conversation", ids, index=ids.index(current) if current in ids else 0,
                          format_func=lambda i: "— new —" if i is None else labels[i])
    st.session_state[state.CONVERSATION] = chosen
    max_tokens = st.number_input("Max reply tokens", min_value=16, max_value=2048, value=256, step=16, key=state.MAX_TOKENS,
                                 help="Longer replies are cut here (the embedded model writes ~25-40 tokens/s on 2 cores).")

st.title("Chat")
st.caption(f"{method_class(method_name).description}  ·  LLM: {safe.literal(state.llm_settings().describe())}")

if kept_notice:
    st.info(kept_notice)
NOTICE = "chat_notice"  # a note about the last message that must survive the rerun after its reply
if notice := st.session_state.pop(NOTICE, None):
    st.info(notice)
cid = st.session_state[state.CONVERSATION]
read_only = cid is not None and infos[cid].read_only
if read_only:
    st.info("A shared demo conversation: read-only. Make your own copy to continue it.")
    if st.button("Make my own copy"):
        st.session_state[state.CONVERSATION] = store.copy_conversation(cid, owner=me, title=infos[cid].title)
        st.rerun()
total = infos[cid].turns if cid else 0
start = conversations.window_start(total, key=cid or "")
context_from = max(0, start - conversations.NLI_CONTEXT_TURNS)
stored = store.turns(cid, owner=me, start=context_from, limit=start - context_from + conversations.HISTORY_WINDOW) if cid else []
# Each reply's NLI label and CS against the turns before it: computed unasked for the latest
# replies (as the conversation grows), on request for an earlier window (25 replies cost seconds).
judge_from = max(start, total - conversations.NLI_AUTO_TURNS)
earlier = [s for s in stored if start <= s.index < judge_from]
if consistency.unjudged(cid, earlier, start) and st.button("Check the consistency of the replies shown", key=f"judge:{cid}:{start}"):
    judge_from = start
checks = consistency.judge_turns(service, cid, stored, show_from=start, judge_from=judge_from)
forget.panel(service, cid, read_only)  # "forget everything I said about ...": matches listed first
for s in stored[start - context_from:]:
    with st.chat_message(s.turn.role):
        st.markdown(safe.literal(s.turn.text))  # user and model text as text: no HTML, images or links
        if s.reply is not None:
            replies.render_details(s.reply, key=f"{cid}:{s.index}")
        consistency.render(checks.get(s.index))
        forget.message_action(service, cid, s, read_only)

query = chat_box.message_box(disabled=read_only, notice_key=NOTICE)  # a longer paste is cut at the limit, with a notice
if query is not None:
    try:
        query = clean_message(query)  # core checks the bound too, for callers other than this box
    except InvalidMessage as err:
        st.warning(f"Not sent. {err}")
        query = None
if query:  # no page element before the round is held: drawing one is where a rerun may stop this run
    round_ = service.start(cid, method_name, query)
    created = cid is None
    st.session_state[state.CONVERSATION] = cid = round_.conversation_id
    st.session_state[conversations.PENDING] = round_.pending  # kept on the next run if this one is cut short
    with st.chat_message(USER):
        st.markdown(safe.literal(query))
    with st.chat_message(ASSISTANT):
        # A click (Stop, another message) reruns the page: the round stops its reply and keeps the message.
        stop_slot = st.empty()
        stop_slot.button("Stop", key="stop_reply", help="Stop writing this reply (your message and the text so far are kept)")
        try:
            with round_:
                state.current_llm()  # loading it can fail: a missing or corrupt model file
                screen.get_ready()  # e.g. "building the knowledge index: 41%" rather than a bare Stop button
                events = round_.events(max_tokens=int(max_tokens), tick_s=streaming.TICK)
                done = streaming.draw_reply(events, method_name)
        except (LLMError, MissingResource) as err:  # the round kept nothing and removed a conversation it made
            st.session_state.pop(conversations.PENDING, None)
            if created:
                st.session_state[state.CONVERSATION] = None
            st.error(streaming.failure_line(err))  # a full queue (the model is busy) says so
            st.code(query, language=None)
            st.stop()
        replies.render_details(done.reply, key=f"{cid}:new")
        stop_slot.empty()  # the reply is saved: nothing left to stop
        if not created:  # the page is already what a rerun would draw; a second run would cost a replica as much again
            consistency.render(consistency.judgement_of(done.checks))
    with st.spinner("Updating memory…"):  # maintenance and saving happen while the reply is read
        for _ in events:
            pass
    st.session_state.pop(conversations.PENDING, None)
    if created:  # the sidebar's conversation list gains the new conversation: the rerun draws it all
        st.rerun()  # (and the badge: the page shows the consistency line once its last run draws it)
    st.session_state.pop(NOTICE, None)  # shown in this run (no rerun follows)
