"""Chat: pick a method, talk, and see each reply's evidence, trace, timings and model."""

from __future__ import annotations

import streamlit as st

from core.dialogue import ASSISTANT, USER, Turn, chat_day
from core.limits import InvalidMessage, clean_message
from core.llm import LLMError
from core.methods import METHODS, create_method, method_class
from core.paths import MissingResource
from ui import chat_box, consistency, conversations, owner, replies, resources, safe, state, streaming, warmup
from ui import mcts as mcts_ui

st.set_page_config(page_title="Chat", page_icon="💬", layout="wide")
warmup.start()  # shared models load in the background while the page is read
store = resources.default_store()
me = owner.current_owner()
owner.sidebar(me)

infos = {c.id: c for c in store.list_conversations(owner=me)}
conversations.reopen_latest(infos.values(), METHODS)  # a reload or restart opens the owner's latest conversation
with st.sidebar:
    method_name = st.selectbox("Method", list(METHODS), key=state.METHOD, format_func=lambda n: f"{n} — {method_class(n).label}")
    if method_name == "mcts":
        mcts_ui.kb_picker()
    ids = [None, *infos]
    if st.button("New conversation"):
        st.session_state[state.CONVERSATION] = None
    current = st.session_state.get(state.CONVERSATION)
    chosen = st.selectbox("Conversation", ids, index=ids.index(current) if current in ids else 0,
                          format_func=lambda i: "— new —" if i is None else conversations.label(infos[i]))
    st.session_state[state.CONVERSATION] = chosen
    max_tokens = st.number_input("Max reply tokens", min_value=16, max_value=2048, value=256, step=16, key=state.MAX_TOKENS,
                                 help="Longer replies are cut here (the embedded model writes ~25-40 tokens/s on 2 cores).")

st.title("Chat")
st.caption(f"{method_class(method_name).description}  ·  LLM: {safe.literal(state.llm_settings().describe())}")

if st.session_state.get("stop_reply"):
    st.info("Reply stopped: that message and its partial reply were not saved.")
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
checks = consistency.judge_turns(cid, stored, show_from=start, judge_from=judge_from, store=store, owner=me)
for s in stored[start - context_from:]:
    with st.chat_message(s.turn.role):
        st.markdown(safe.literal(s.turn.text))  # user and model text as text: no HTML, images or links
        if s.reply is not None:
            replies.render_details(s.reply, key=f"{cid}:{s.index}")
        consistency.render(checks.get(s.index))


def method_for(cid: str):
    """This user's instance of the method for this conversation, caught up with its turns; rebuilt
    (from the saved memory) when the backend settings changed, so a new timeout or endpoint applies."""
    key = f"method:{cid}:{method_name}"
    if key not in st.session_state or st.session_state[key].tools.llm is not state.current_llm():
        method = create_method(method_name, state.toolkit(), mcts_ui.chat_config() if method_name == "mcts" else None)
        saved = store.get_artifact(cid, artifact_kind(), owner=me)
        if saved is not None:
            observed, data = int.from_bytes(saved[:8], "little"), saved[8:]
            method.load_state(data, observed)
        st.session_state[key] = method
    return st.session_state[key]


def artifact_kind() -> str:
    return f"method:{method_name}"


def save_memory(cid: str, method) -> None:
    """Persist memory that is expensive to rebuild, prefixed with how many turns it covers, once
    this round's (possibly background) maintenance is done."""
    method.wait()
    data = method.save_state()
    if data is not None:
        store.put_artifact(cid, artifact_kind(), method.observed.to_bytes(8, "little") + data, owner=me)


query = chat_box.message_box(disabled=read_only, notice_key=NOTICE)  # a longer paste is cut at the limit, with a notice
if query is not None:
    try:
        query = clean_message(query)  # core checks the bound too, for callers other than this box
    except InvalidMessage as err:
        st.warning(f"Not sent. {err}")
        query = None
if query:
    with st.chat_message(USER):
        st.markdown(safe.literal(query))
    created = cid is None
    if created:
        cid = store.create_conversation(title=query[:48], method=method_name, owner=me)
        st.session_state[state.CONVERSATION] = cid
    dialogue = store.dialogue(cid, owner=me)
    with st.chat_message(ASSISTANT):
        # A click reruns the page, which closes the stream and so cancels the generation.
        stop_slot = st.empty()
        stop_slot.button("Stop", key="stop_reply", help="Stop writing this reply (it is not saved)")
        try:
            llm = state.current_llm()  # loading it can fail: a missing or corrupt model file
            if note := streaming.queue_note(llm, state.llm_settings().slots):
                st.caption(note)
            if method_name == "mcts":
                mcts_ui.wait_for_kb()  # "building the knowledge index: 41%" rather than a bare Stop button
            with st.spinner(f"{method_name} is thinking…"):
                method = method_for(cid)
                method.sync(dialogue)
            reply, streamed = streaming.stream_reply(method, dialogue, query, int(max_tokens))
        except (LLMError, MissingResource) as err:
            if created:  # no empty conversation left behind
                store.delete_conversation(cid, owner=me)
                st.session_state[state.CONVERSATION] = None
            st.error(f"The LLM backend failed: {safe.literal(str(err))}. Nothing was saved; your message is below to copy.")
            st.code(query, language=None)
            st.stop()
        if not streamed:
            st.markdown(safe.literal(reply.text))
        replies.render_details(reply, key=f"{cid}:new")
        badge_slot = st.empty()
    day = chat_day()  # the turns' date: a memory resolves "yesterday" against it
    user_turn = dialogue.add(Turn(USER, query, session=dialogue.next_session, date=day))
    before = dialogue.turns()
    bot_turn = dialogue.add(Turn(ASSISTANT, reply.text, session=dialogue.next_session, date=day))
    stored_at = store.add_turns(cid, [(user_turn, None), (bot_turn, reply)], owner=me)  # one transaction: both or neither
    conversations.remember_method(store, infos.get(cid), cid, method_name, owner=me)
    stop_slot.empty()  # the reply is saved: nothing left to stop
    # Judged once, after the turns are safe, and stored with the reply: no later run, replica or tab judges it again.
    judged = consistency.judge_reply(before, reply.text)
    if judged is not None:
        store.put_checks(cid, {stored_at[1]: judged}, owner=me)
    # The reply is on screen first; memory maintenance and saving happen while it is read.
    method.observe(user_turn)
    method.observe(bot_turn)
    if not created:  # the page is already what a rerun would draw; a second run would cost a replica as much again
        with badge_slot.container():
            consistency.render(consistency.judgement_of(judged))
    with st.spinner("Updating memory…"):
        save_memory(cid, method)
    if created:  # the sidebar's conversation list gains the new conversation: the rerun draws it all
        st.rerun()  # (and the badge: the page shows the consistency line once its last run draws it)
    st.session_state.pop(NOTICE, None)  # shown in this run (no rerun follows)
