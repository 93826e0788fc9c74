"""The Chat page's rounds through core/conversation.py (issue 41): a message whose run was cut short
is kept with a notice, conversation labels are unique and pick by id, and no page or ui module
chooses a method's screen by comparing its name with a literal."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.conversation import PendingRound
from core.dialogue import ASSISTANT, USER, Turn
from core.methods import METHODS, method_class
from core.store import ConversationInfo, Store
from tests.page_fixtures import open_page, stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)
from ui import conversations, screens
from ui.safe import literal

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
ME = "anon:rounds"


def chat_page(**state) -> AppTest:
    return open_page(CHAT, ME, **state)


def db() -> Store:
    return Store(os.environ["WORKBENCH_DB"])


def test_a_message_whose_run_was_cut_short_is_kept_and_said_so(stub):
    store = db()
    cid = store.create_conversation("My favourite fruit is mango.", method="base", owner=ME)
    # what the page held when another message reran it before the round could keep its turns itself
    pending = PendingRound(cid, "base", "My favourite fruit is mango. Tell me a story.", partial="Once upon a", model="stub")
    at = chat_page(conversation_id=cid, chat_pending_round=pending)
    assert not at.exception
    assert any("Your earlier message was kept" in i.value for i in at.info)
    turns = store.turns(cid, owner=ME)
    assert [t.turn.text for t in turns] == ["My favourite fruit is mango. Tell me a story.", "Once upon a"]
    assert turns[1].reply.stopped and "stopped before it was finished" in at.chat_message[1].caption[0].value
    at.chat_input[0].set_value("Quick question: what is my favourite fruit?").run()
    assert not at.exception
    assert [t.turn.text for t in store.turns(cid, owner=ME)][2] == "Quick question: what is my favourite fruit?"
    assert "mango" in str(stub.requests[-1]["messages"])  # the next reply's prompt has the kept message
    assert not any("Your earlier message" in i.value for i in at.info)  # said once


def test_a_finished_round_leaves_nothing_pending(stub):
    at = chat_page()
    at.chat_input[0].set_value("Hello there.").run()
    assert not at.exception and "chat_pending_round" not in at.session_state
    [conv] = db().list_conversations(owner=ME)
    assert conv.turns == 2 and not db().turns(conv.id, owner=ME)[1].reply.stopped


def _info(cid: str, created: float, method: str = "base", turns: int = 4) -> ConversationInfo:
    return ConversationInfo(cid, "My sister Ana moved to Lisbon last year and work", method, created, created, turns, ME)


def test_labels_are_unique_and_say_method_time_and_turns():
    now = time.time()
    infos = [_info("a", now), _info("b", now + 60, "dsm"), _info("c", now), _info("d", now)]
    labels = conversations.labels(infos)
    assert len(set(labels.values())) == 4
    assert " · dsm · " in labels["b"] and "(4 turns)" in labels["b"]
    assert labels["c"].endswith("#2") and labels["d"].endswith("#3")


def test_picking_the_second_of_two_same_titled_conversations_opens_it(app_env):
    store = db()
    ids = []
    for reply in ("First answer.", "Second answer."):
        cid = store.create_conversation("Same start", method="base", owner=ME)
        store.add_turns(cid, [(Turn(USER, "Same start"), None), (Turn(ASSISTANT, reply), None)], owner=ME)
        ids.append(cid)
    at = chat_page()
    picker = at.sidebar.selectbox[1]
    assert len(set(picker.options)) == len(picker.options) == 3  # "— new —" and the two, told apart
    picker.set_value(ids[0]).run()  # the older one: listed second (the latest comes first)
    assert not at.exception
    assert at.session_state["conversation_id"] == ids[0]
    assert at.chat_message[1].markdown[0].value == literal("First answer.")


def test_method_screens_are_keyed_by_registered_names():
    assert set(screens.SCREENS) <= set(METHODS)
    assert screens.screen_of("base") is screens.PLAIN
    assert screens.screen_of("mcts").get_ready is not screens.PLAIN.get_ready


def test_no_page_or_ui_module_compares_a_method_name_with_a_literal():
    names = "|".join(re.escape(n) for n in METHODS)
    compare = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=)|\bin\s*\(\s*["']({names})["']""")
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
             for folder in ("pages", "ui") for path in sorted((REPO / folder).glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if compare.search(line)]  # trace views are found by kind constants (ui/trace_views.py), never by name
    assert found == []


def test_the_memory_graph_page_asks_the_method_classes():
    assert [n for n in METHODS if method_class(n).keeps_memory_graph] == ["dsm", "dsmart"]
    assert "DSM_METHODS" not in (REPO / "pages" / "2_Memory_graph.py").read_text(encoding="utf-8")
