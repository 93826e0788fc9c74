"""Chat: pick a method, talk, and see each reply's evidence, trace, timings and model."""

from __future__ import annotations

import streamlit as st

from core.dialogue import ASSISTANT, USER, Turn
from core.llm import LLMError
from core.methods import METHODS, create_method, method_class
from ui import consistency, replies, resources, state
from ui import mcts as mcts_ui

st.set_page_config(page_title="Chat", page_icon="💬", layout="wide")
store = resources.default_store()

with st.sidebar:
    method_name = st.selectbox("Method", list(METHODS), key=state.METHOD, format_func=lambda n: f"{n} — {method_class(n).label}")
    if method_name == "mcts":
        mcts_ui.kb_picker()
    conversations = store.list_conversations()
    ids = [None] + [c.id for c in conversations]
    titles = {c.id: f"{c.title} ({c.turns} turns)" for c in conversations}
    if st.button("New conversation"):
        st.session_state[state.CONVERSATION] = None
    current = st.session_state.get(state.CONVERSATION)
    chosen = st.selectbox("Conversation", ids, index=ids.index(current) if current in ids else 0,
                          format_func=lambda i: "— new —" if i is None else titles[i])
    st.session_state[state.CONVERSATION] = chosen

st.title("Chat")
st.caption(f"{method_class(method_name).description}  ·  LLM: {state.llm_settings().describe()}")

cid = st.session_state[state.CONVERSATION]
stored = store.turns(cid) if cid else []
checks = consistency.judge_turns(cid, stored)  # each reply's NLI label and CS against the turns before it
for s in stored:
    with st.chat_message(s.turn.role):
        st.markdown(s.turn.text)
        if s.reply is not None:
            replies.render_details(s.reply, key=f"{cid}:{s.index}")
        consistency.render(checks.get(s.index))


def method_for(cid: str):
    """This user's instance of the method for this conversation, caught up with its turns."""
    key = f"method:{cid}:{method_name}"
    if key not in st.session_state:
        method = create_method(method_name, state.toolkit(), mcts_ui.chat_config() if method_name == "mcts" else None)
        saved = store.get_artifact(cid, artifact_kind())
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
        store.put_artifact(cid, artifact_kind(), method.observed.to_bytes(8, "little") + data)


if query := st.chat_input("Say something"):
    with st.chat_message(USER):
        st.markdown(query)
    if cid is None:
        cid = store.create_conversation(title=query[:48], method=method_name)
        st.session_state[state.CONVERSATION] = cid
    dialogue = store.dialogue(cid)
    try:
        with st.spinner(f"{method_name} is thinking…"):
            method = method_for(cid)
            method.sync(dialogue)
            reply = method.respond(dialogue, query)
    except LLMError as err:
        st.error(f"The LLM backend failed: {err}")
        st.stop()
    user_turn = dialogue.add(Turn(USER, query, session=dialogue.next_session))
    bot_turn = dialogue.add(Turn(ASSISTANT, reply.text, session=dialogue.next_session))
    store.add_turn(cid, user_turn)
    store.add_turn(cid, bot_turn, reply)
    # The reply goes on screen first; memory maintenance and saving happen while it is read.
    with st.chat_message(ASSISTANT):
        st.markdown(reply.text)
        replies.render_details(reply, key=f"{cid}:new")
    method.observe(user_turn)
    method.observe(bot_turn)
    with st.spinner("Updating memory…"):
        save_memory(cid, method)
    st.rerun()
