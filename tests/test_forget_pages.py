"""The pages' forget actions (AppTest, the stub endpoint): the Chat page's "forget everything I said
about ..." lists the matching messages before anything is removed, then forgets them; "Forget" on
one message; the Memory graph page forgets a fact's source message. Each page then says what was
forgotten, counted, never quoted."""

from __future__ import annotations

import os
from pathlib import Path

from core.db.grep import grep
from core.dialogue import ASSISTANT, USER, Reply, Turn
from core.forget import FORGOTTEN
from core.store import Store
from tests.page_fixtures import open_page, stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)
from tests.test_dsm_page import ME as GRAPH_OWNER, seeded_conversation

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
GRAPH = str(REPO / "pages" / "2_Memory_graph.py")
ME = "anon:forget-page"
CODE = "QZ4471"


def seeded(store: Store) -> str:
    cid = store.create_conversation("Hello there", method="base", owner=ME)
    for user, reply in [("Hello there, I live in Lisbon.", "Hi!"), (f"My door code is {CODE}.", f"Your door code is {CODE}."),
                        ("I have a cat.", "Nice.")]:
        store.add_turns(cid, [(Turn(USER, user), None), (Turn(ASSISTANT, reply), Reply(reply, "base", "stub"))], owner=ME)
    return cid


def page_text(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "success", "info", "warning") for e in getattr(at, kind))


def test_chat_lists_the_matching_messages_before_it_forgets_them(stub):
    store = Store(os.environ["WORKBENCH_DB"])
    cid = seeded(store)
    at = open_page(CHAT, ME, conversation_id=cid)
    assert not at.exception
    box = next(t for t in at.sidebar.text_input if t.label.startswith("Forget everything I said about"))
    box.set_value("door code").run()
    assert not at.exception
    assert any(f"round 2: My door code is {CODE}" in m.value.replace("\\", "") for m in at.sidebar.markdown)
    assert store.turns(cid, owner=ME)[2].turn.text == f"My door code is {CODE}."  # listed, nothing removed yet
    next(b for b in at.sidebar.button if b.label == "Forget these 1 message(s)").click().run()
    assert not at.exception
    notice = " ".join(s.value for s in at.success)
    assert "Forgot 1 message(s)" in notice and "round(s) 2" in notice and CODE not in notice and "door" not in notice
    assert [t.turn.text for t in store.turns(cid, owner=ME)][2:4] == [FORGOTTEN, FORGOTTEN]
    assert grep(store.db, CODE) == [] and CODE not in page_text(at)


def test_forget_on_one_message(stub):
    store = Store(os.environ["WORKBENCH_DB"])
    cid = seeded(store)
    at = open_page(CHAT, ME, conversation_id=cid)
    next(b for b in at.button if b.key == f"forget:{cid}:4").click().run()  # "I have a cat."
    assert not at.exception
    texts = [t.turn.text for t in store.turns(cid, owner=ME)]
    assert texts[4:] == [FORGOTTEN, FORGOTTEN] and texts[2] == f"My door code is {CODE}."
    assert "Forgot 1 message(s)" in " ".join(s.value for s in at.success) and "cat" not in " ".join(s.value for s in at.success)
    assert sum(m.markdown[0].value == FORGOTTEN.replace("(", "\\(").replace(")", "\\)") or m.markdown[0].value == FORGOTTEN
               for m in at.chat_message) == 2


def test_memory_graph_forgets_the_message_a_fact_came_from(stub):
    db = os.environ["WORKBENCH_DB"]
    cid = seeded_conversation(db)
    at = open_page(GRAPH, GRAPH_OWNER, conversation_id=cid)
    assert not at.exception
    fact = next(s for s in at.selectbox if s.label == "Fact")
    choice = next(i for i, label in enumerate(fact.options) if "Max" in label)
    fact.select_index(choice).run()
    next(b for b in at.button if b.label == "Forget the message this fact came from").click().run()
    assert not at.exception
    store = Store(db)
    assert [t.turn.text for t in store.turns(cid, owner=GRAPH_OWNER)][2:] == [FORGOTTEN, FORGOTTEN]
    assert "Forgot 1 message(s)" in " ".join(s.value for s in at.success)
    assert grep(store.db, "Max") == [] and grep(store.db, "Rex")  # the fact's round is gone; round 1 is kept
