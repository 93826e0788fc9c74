"""AppTest: the Chat page shows the reasoning tree of a stored D-SMART reply (tree, node table,
node inspector, stage timings), and the tree's HTML escapes user text."""

from __future__ import annotations

import re
from pathlib import Path

from rdflib import RDFS, Graph, Literal, Namespace
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
ME = "anon:tests"
EX = Namespace("http://example.org/")
EVIL = "<script>alert(1)</script>"


def memory_graph() -> Graph:
    g = Graph()
    g.add((EX.user, EX.has, EX.rex))
    g.add((EX.rex, EX.nickname, Literal(EVIL)))
    g.add((EX.user, RDFS.label, Literal("user")))
    g.add((EX.rex, RDFS.label, Literal("Rex")))
    return g


def dsmart_reply(query: str):
    def scorer(messages, candidate):
        if len(candidate) == 1 and candidate.isalpha():  # the choice policy's lettered option
            candidate = re.search(rf"^{candidate}\. (.*)$", messages[-1].content, re.M).group(1)
        if candidate.startswith("EXPAND_ENTITY [Rex]"):
            return 0.0
        if candidate.startswith("ANSWER"):
            return -1.0
        return -40.0 if not candidate[:1].isdigit() else -10.0 * abs(float(candidate) / (9 if len(candidate) == 1 else 1) - 0.8)

    method = create_method("dsmart", Toolkit(llm=ScriptedLLM(replies=["Rex is your dog."], scorer=scorer)))
    method.memory._graph = memory_graph()
    return method.respond(Dialogue(), query)


def test_chat_page_shows_the_tree_of_a_dsmart_reply(app_env):
    query = f"What is my dog Rex called? {EVIL}"
    reply = dsmart_reply(query)
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="tree test", method="dsmart", owner=ME)
    store.add_turns(cid, [(Turn(USER, query, "S0:0"), None)], owner=ME)
    store.add_turns(cid, [(Turn(ASSISTANT, reply.text, "S0:1"), reply)], owner=ME)

    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    at.sidebar.selectbox[1].select_index(1).run()
    assert not at.exception
    assistant = at.chat_message[1]
    assert "dsmart ·" in assistant.caption[0].value
    nodes = assistant.dataframe[2].value  # evidence, timings, then the tree's node table
    assert list(nodes["node"])[0] == "n0" and "EXPAND_ENTITY [Rex]" in list(nodes["action"])
    assert nodes["chosen"].sum() >= 2
    inspector = assistant.selectbox[0]
    assert inspector.label == "Inspect node" and inspector.value == next(n.id for n in reply.trace.nodes if n.detail["best"])
    texts = " ".join(t.value for t in assistant.text)
    assert "Query entities linked to the memory" in texts and "Rex (label" in texts
    stages = set(assistant.dataframe[-1].value["stage"])
    assert {"policy calls", "value calls", "graph actions"} <= stages
    # pick another node: its subgraph shows
    expand = next(n.id for n in reply.trace.nodes if n.label == "EXPAND_ENTITY [Rex]")
    inspector.set_value(expand).run()
    subgraph = at.chat_message[1].dataframe[3].value
    assert EVIL in list(subgraph["object"])  # shown as text by st.dataframe, never as HTML


def test_tree_html_escapes_user_text():
    from ui.trees import tree_html

    reply = dsmart_reply(f"Tell me about Rex {EVIL}")
    page = tree_html(reply.trace)
    assert "<script>alert(1)" not in page
    escaped = "\\u003cscript\\u003ealert(1)"  # JSON-encoded for a <script> block, shown as text by vis-network
    assert page.count(escaped) == 2  # the query in the root's tooltip, the fact in EXPAND's
    assert "cdn.jsdelivr" not in page and "cdnjs" not in page  # offline


def test_chat_page_lists_the_facts_a_dsmart_reply_used_with_their_sentences(app_env):
    """Issue 57: a short dsmart chat's Evidence tab said "No retrieved evidence" (its memory lines were
    all in the recent turns) though the tree used facts; it lists them with the words they came from."""
    method = create_method("dsmart", Toolkit(llm=ScriptedLLM(["Your sister Ana is a nurse."] * 60)))
    dialogue = Dialogue()
    said = "My sister Ana works as a nurse in Lisbon."
    for role, text in ((USER, said), (ASSISTANT, "How nice.")):
        method.observe(dialogue.add(Turn(role, text)))
    method.wait()
    query = "What does my sister do?"
    reply = method.respond(dialogue, query)
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="evidence test", method="dsmart", owner=ME)
    for turn, stored in ((Turn(USER, said, "S0:0"), None), (Turn(ASSISTANT, "How nice.", "S0:1"), None),
                         (Turn(USER, query, "S0:2"), None), (Turn(ASSISTANT, reply.text, "S0:3"), reply)):
        store.add_turns(cid, [(turn, stored)], owner=ME)
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    at.sidebar.selectbox[1].select_index(1).run()
    assert not at.exception
    assistant = at.chat_message[3]
    evidence = assistant.dataframe[0].value
    assert "No retrieved evidence" not in " ".join(m.value for m in assistant.markdown)
    # the memory lines the answer prompt showed (a question about what was told is shown them whole,
    # core.methods.layout), then the facts the tree used
    assert set(evidence["kind"]) == {"sentence", "fact"} and set(evidence["source"]) == {"dsm", "reasoning tree"}
    tree = evidence[evidence["source"] == "reasoning tree"]
    assert set(tree["kind"]) == {"fact"} and "Ana | is a | sister" in list(tree["text"])
    assert any("Your sister Ana works as a nurse in Lisbon." in str(s) for s in evidence["said"])
