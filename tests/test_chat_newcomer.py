"""What a newcomer tripped over on the Chat page (issue 32): a paste over the limit is cut with a
notice (and counted as it nears the limit), and a new session reopens the owner's latest conversation."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Turn
from core.limits import MAX_MESSAGE_CHARS, cut_message
from core.store import SHARED_OWNER, Store
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)
from ui.chat_box import counter_script

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
ME = "anon:newcomer"


def chat_page() -> AppTest:
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME  # as the owner cookie gives after a reload or a restart
    return at.run()


def db() -> Store:
    return Store(os.environ["WORKBENCH_DB"])


def test_cut_message_keeps_the_first_part_and_counts_the_rest():
    assert cut_message("  short  ") == ("short", 0)
    assert cut_message("a" * MAX_MESSAGE_CHARS) == ("a" * MAX_MESSAGE_CHARS, 0)
    kept, cut = cut_message("b" * (MAX_MESSAGE_CHARS + 1))
    assert (len(kept), cut) == (MAX_MESSAGE_CHARS, 1)
    assert cut_message("abcdef", 4) == ("abcd", 2)


def test_counter_script_counts_from_near_the_limit():
    script = counter_script(4000)
    assert "const LIMIT = 4000, NEAR = 3200" in script and "stChatInputTextArea" in script
    assert "innerHTML" not in script  # writes numbers with textContent only


def test_a_paste_over_the_limit_is_sent_cut_with_a_visible_notice(stub):
    at = chat_page()
    assert not at.chat_input[0].proto.max_chars
    pasted = "word " * 800 + "tail"  # 4,004 characters
    at.chat_input[0].set_value(pasted).run()
    assert not at.exception
    notice = at.info[0].value  # shown again after the rerun that follows the reply
    assert f"{len(pasted):,} characters" in notice and f"the limit is {MAX_MESSAGE_CHARS:,}" in notice
    assert f"remaining {len(pasted) - MAX_MESSAGE_CHARS:,} were cut" in notice
    [conv] = db().list_conversations(owner=ME)
    assert db().turns(conv.id, owner=ME)[0].turn.text == pasted[:MAX_MESSAGE_CHARS].rstrip()
    assert stub.requests  # the model answered the kept part
    assert any("stChatInputTextArea" in str(h.proto.body) for h in at.sidebar.get("html"))  # the live count


def seed(store: Store, title: str, method: str, owner: str = ME) -> str:
    cid = store.create_conversation(title, method=method, owner=owner)
    store.add_turns(cid, [(Turn(USER, f"{title}: hello"), None)], owner=owner)
    store.add_turns(cid, [(Turn(ASSISTANT, "Hi."), None)], owner=owner)
    time.sleep(0.01)  # distinct update times
    return cid


def test_a_new_session_reopens_the_latest_conversation_and_its_method(app_env):
    store = db()
    seed(store, "older", "rag")
    latest = seed(store, "latest", "sgmem")
    demo = seed(store, "a shared demo", "base", owner="anon:demo-maker")
    with sqlite3.connect(os.environ["WORKBENCH_DB"]) as con:  # as rows from before owners existed: newer, but not the owner's own
        con.execute("UPDATE conversations SET owner=? WHERE id=?", (SHARED_OWNER, demo))
    assert store.list_conversations(owner=ME)[0].read_only
    at = chat_page()
    assert not at.exception
    assert at.session_state["conversation_id"] == latest
    assert at.sidebar.selectbox[0].value == "sgmem"  # the method it used
    assert "latest" in at.sidebar.selectbox[1].format_func(at.sidebar.selectbox[1].value)
    assert at.chat_message[0].markdown[0].value.startswith("latest")
    # "New conversation" stays new on the reruns that follow
    at.sidebar.button[0].click().run()
    at.run()
    assert at.session_state["conversation_id"] is None and not at.chat_message


def test_the_method_a_conversation_continued_with_is_remembered(stub):
    at = chat_page()
    at.chat_input[0].set_value("Hi, my name is Alice.").run()
    at.sidebar.selectbox[0].set_value("rag").run()
    at.chat_input[0].set_value("Where do I live?").run()
    assert not at.exception
    [conv] = db().list_conversations(owner=ME)
    assert conv.method == "rag"
    again = chat_page()
    assert again.sidebar.selectbox[0].value == "rag" and again.session_state["conversation_id"] == conv.id


def test_nobody_else_s_conversation_is_reopened(app_env):
    seed(db(), "someone else's", "rag", owner="anon:other")
    at = chat_page()
    assert at.session_state["conversation_id"] is None and not at.chat_message
