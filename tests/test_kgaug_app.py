"""AppTests: the Chat page draws a kgaug reply's triples as a graph with its stages; the graph's
HTML escapes names; the Retrieval comparison page ranks OpenDialKG triples with the kg-*
retrievers; a live kgaug chat turn on the shared graph (slow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.kgaug.config import KGAugConfig
from core.methods.kgaug.linking import LinkerSettings
from core.methods.kgaug.pipeline import build_knowledge
from core.store import Store
from tests.kgaug_helpers import small_graph

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
COMPARE = str(REPO / "pages" / "3_Retrieval_comparison.py")
EVIL = "<script>alert(1)</script>"
ME = "anon:tests"  # the owner the AppTests browse as


def iframes(container) -> list:
    """components.html elements (AppTest shows them as UnknownElement of type iframe)."""
    return [el for el in container if getattr(el, "type", "") == "iframe"]


def kgaug_reply(query: str, name: str = "kgaug-c"):
    knowledge = build_knowledge(small_graph(extra=[("Find Me Guilty", "starred_actors", EVIL)]), LinkerSettings(use_spacy=False))
    method = create_method(name, Toolkit(llm=ScriptedLLM(["Vin Diesel starred in it."])), KGAugConfig(ranker="bm25", rewrite="auto"))
    method.knowledge = knowledge
    history = Dialogue.from_turns([Turn(USER, "Do you like Sidney Lumet?"), Turn(ASSISTANT, "Yes, he directed Find Me Guilty.")])
    return method.respond(history, query)


def test_chat_page_draws_the_triples_of_a_kgaug_reply(app_env):
    reply = kgaug_reply("Who starred in it?")
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="kg test", method="kgaug-c", owner=ME)
    store.add_turns(cid, [(Turn(USER, "Who starred in it?", "S0:0"), None)], owner=ME)
    store.add_turns(cid, [(Turn(ASSISTANT, reply.text, "S0:1"), reply)], owner=ME)

    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    methods = at.sidebar.selectbox[0].options
    assert "kgaug — Triton: KG triples (OpenDialKG)" in methods and "kgaug-c — Triton-C: rewrite + KG triples" in methods
    at.sidebar.selectbox[1].select_index(1).run()
    assert not at.exception
    assistant = at.chat_message[1]
    assert "kgaug-c ·" in assistant.caption[0].value
    evidence = assistant.dataframe[0].value
    assert set(evidence["kind"]) == {"triple"} and "(Find Me Guilty, starred_actors, Vin Diesel)" in list(evidence["text"])
    texts = " ".join(t.value for t in assistant.text)
    assert "rewritten: Who starred in Find Me Guilty?" in texts
    assert any("symbolic pronoun rewrite" in m.value for m in assistant.markdown)
    frames = [d.value for d in assistant.dataframe]
    linked = next(f for f in frames if "mention" in f.columns)
    assert list(linked["name"]) == ["Find Me Guilty"]
    triples = next(f for f in frames if "relation" in f.columns and "head" in f.columns)
    assert EVIL in set(triples["tail"])  # shown as text by st.dataframe, never as HTML
    assert any("Triples in the prompt" in m.value for m in assistant.markdown)
    assert len(iframes(assistant)) == 1  # the graph


def test_triple_graph_html_escapes_names():
    from ui.kg import triples_graph_html

    reply = kgaug_reply(f"Tell me about Find Me Guilty {EVIL}", name="kgaug")
    assert any(EVIL in e.text for e in reply.evidence)
    page = triples_graph_html(reply.evidence, {"Find Me Guilty"})
    assert "<script>alert(1)" not in page
    assert "\\u0026lt;script\\u0026gt;alert(1)" in page  # html.escape, then JSON-encoded by pyvis
    assert not re.search(r"<(script|link)\b[^>]*(src|href)=\"https?://", page)  # offline: nothing fetched


def test_no_entity_reply_says_so_in_the_chat_page(app_env):
    knowledge = build_knowledge(small_graph(), LinkerSettings(use_spacy=False))
    method = create_method("kgaug", Toolkit(llm=ScriptedLLM(["Nice."])), KGAugConfig(ranker="bm25"))
    method.knowledge = knowledge
    reply = method.respond(Dialogue(), "what a lovely day")
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="none", method="kgaug", owner=ME)
    store.add_turns(cid, [(Turn(USER, "what a lovely day", "S0:0"), None)], owner=ME)
    store.add_turns(cid, [(Turn(ASSISTANT, reply.text, "S0:1"), reply)], owner=ME)
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    at.sidebar.selectbox[1].select_index(1).run()
    assert any("answered without triples" in i.value for i in at.chat_message[1].info)


@pytest.mark.slow
def test_retrieval_page_ranks_opendialkg_triples(app_env, shared_data):
    at = AppTest.from_file(COMPARE, default_timeout=300).run()
    at.radio[0].set_value("OpenDialKG file").run()
    assert not at.exception
    assert at.multiselect[0].value == ["kg-bm25", "kg-kaping", "kg-triton", "kg-tritonc"]
    at.multiselect[0].set_value(["kg-bm25", "kg-triton"]).run()
    at.button[0].click().run()
    assert not at.exception
    assert [s.value for s in at.subheader][:2] == ["kg-bm25", "kg-triton"]
    shown = " ".join(t.value for t in at.text)
    assert "Sidney Lumet" in shown  # dialogue 1: "Could you recommend any films directed by Sidney Lumet?"


@pytest.mark.slow
def test_live_kgaug_chat_turn_on_the_shared_graph(app_env, shared_data):
    at = AppTest.from_file(CHAT, default_timeout=600).run()
    at.sidebar.selectbox[0].set_value("kgaug").run()
    at.chat_input[0].set_value("Could you recommend any films directed by Sidney Lumet?").run()
    assert not at.exception
    assistant = at.chat_message[1]
    assert "kgaug ·" in assistant.caption[0].value
    evidence = assistant.dataframe[0].value
    # the default Triton ranker reads the asked-for relation: the graph's two films directed by Lumet
    # come first, then his third triple; the 2-hop ones after
    top = list(evidence["text"])
    assert len(top) == 5 and all("directed_by, Sidney Lumet)" in t for t in top[:2]) and "Sidney Lumet" in top[2], top
