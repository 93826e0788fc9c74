"""Chat as a newcomer walks it (issue 57): the method picked in the sidebar is the one a new
conversation uses, after leaving the page and coming back too; a reply stopped before any text
says so and is not judged."""

from __future__ import annotations

import os
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.conversation import PendingRound
from core.store import Store
from tests.page_fixtures import open_page, stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parent.parent
ME = "anon:first-hour"


def db() -> Store:
    return Store(os.environ["WORKBENCH_DB"])


def test_a_new_conversation_uses_the_method_picked_before_leaving_the_page(stub):
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    at.switch_page("pages/1_Chat.py").run()
    at.chat_input[0].set_value("Hi, I live in Murano.").run()  # a conversation with the default method
    at.sidebar.selectbox[0].set_value("kgaug").run()
    at.switch_page("pages/0_Home.py").run()
    at.switch_page("pages/1_Chat.py").run()
    assert not at.exception
    assert at.sidebar.selectbox[0].value == "kgaug"  # the pick survives the visit to another page
    at.sidebar.button[0].click().run()  # New conversation
    at.chat_input[0].set_value("Hello again.").run()
    assert not at.exception
    assert [(c.title, c.method) for c in db().list_conversations(owner=ME)] == [
        ("Hello again.", "kgaug"), ("Hi, I live in Murano.", "base")]


def test_a_reply_stopped_before_any_text_says_so_and_is_not_judged(stub):
    store = db()
    cid = store.create_conversation("Tell me a story.", method="base", owner=ME)
    # what the page held when Stop reran it before the reply's first words
    pending = PendingRound(cid, "base", "Tell me a story.", partial="", model="stub")
    at = open_page(str(REPO / "pages" / "1_Chat.py"), ME, conversation_id=cid, chat_pending_round=pending, stop_reply=True)
    assert not at.exception
    assert any(i.value == "Reply stopped before any text was written: your message is kept." for i in at.info)
    reply = at.chat_message[1]
    captions = [c.value for c in reply.caption]
    assert captions[0] == "base · stub · stopped before any text was written"
    assert not any("Consistency" in c for c in captions)  # nothing to judge
    assert "nli" not in store.turns(cid, owner=ME)[1].checks


def test_a_reply_stopped_with_text_keeps_its_caption(stub):
    store = db()
    cid = store.create_conversation("Tell me a story.", method="base", owner=ME)
    pending = PendingRound(cid, "base", "Tell me a story.", partial="Once upon a", model="stub")
    at = open_page(str(REPO / "pages" / "1_Chat.py"), ME, conversation_id=cid, chat_pending_round=pending, stop_reply=True)
    assert not at.exception
    assert at.chat_message[1].caption[0].value == (
        "base · stub · stopped before it was finished (the text above is what it had written)")
