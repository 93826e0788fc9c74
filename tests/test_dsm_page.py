"""The Memory Graph page (AppTest) and its pyvis rendering: escaping, replay, import, export."""

from __future__ import annotations

import os
from pathlib import Path

from rdflib import RDFS, Graph, Literal
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.dsmart.vocab import DSM, entity
from core.methods.dsmart.vocab import USER as USER_NODE
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "2_Memory_graph.py")
ME = "anon:tests"
EVIL = "<script>alert('x')</script>"


def test_network_html_escapes_labels_and_tooltips_and_inlines_scripts():
    from ui.graphs import network_html

    g = Graph()
    pet = entity("pet")
    g.add((pet, RDFS.label, Literal(EVIL)))
    g.add((USER_NODE, DSM.has, pet))
    g.add((pet, DSM.name, Literal(EVIL)))
    page = network_html(g)
    assert EVIL not in page and "alert(\\u0027x\\u0027)" in page  # JSON-encoded for a <script> block
    labels = {n["label"] for n in vis_data(page, "nodes")}
    assert EVIL in labels  # ... and shown as the very text typed (vis-network draws text, never HTML)
    assert "vis-network" in page and "https://cdn" not in page and "src=\"http" not in page  # works offline


def vis_data(page: str, name: str) -> list[dict]:
    """The nodes or edges pyvis wrote into the page, decoded."""
    import json

    start = page.index(f"{name} = new vis.DataSet(") + len(f"{name} = new vis.DataSet(")
    return json.JSONDecoder().raw_decode(page[start:])[0]


def seeded_conversation(db: str) -> str:
    store = Store(db)
    cid = store.create_conversation("dog names", method="dsm", owner=ME)
    method = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    dialogue = Dialogue()
    for role, text in [(USER, "My dog is Rex."), (ASSISTANT, "Nice."),
                       (USER, f"Actually my dog is called Max. I like Tom & Jerry. I like {EVIL} cheese."),
                       (ASSISTANT, "OK.")]:
        turn = dialogue.add(Turn(role, text))
        store.add_turns(cid, [(turn, None)], owner=ME)
        method.observe(turn)
    method.wait()
    # user text can also arrive through an imported Turtle file (a third record)
    method.memory.import_turtle(f'<{entity("pet")}> <{RDFS.label}> "{EVIL}" . <{USER_NODE}> <{DSM.has}> <{entity("pet")}> .')
    store.put_artifact(cid, "method:dsm", method.observed.to_bytes(8, "little") + method.save_state(), owner=ME)
    return cid


def graph_data(at: AppTest) -> str:
    """The nodes and edges pyvis wrote into the page (not the inlined vis-network library)."""
    page = at.get("iframe")[0].proto.srcdoc
    start = page.index("nodes = new vis.DataSet(")
    return page[start : page.index("network = new vis.Network", start)]


def frames(at: AppTest) -> str:
    return "\n".join(df.value.to_string() for df in at.dataframe)


def test_memory_graph_page_shows_replays_and_escapes(app_env):
    seeded_conversation(os.environ["WORKBENCH_DB"])
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    assert not at.exception
    assert "stored `dsm` memory" in at.caption[1].value and "3 round(s)" in at.caption[1].value
    html = at.get("iframe")[0].proto.srcdoc
    assert "<script>alert" not in html and "\\u003cscript\\u003ealert" in html  # JSON-encoded for a <script> block
    assert any("Tom & Jerry" in n["label"] for n in vis_data(html, "nodes"))  # and shown as typed
    assert "Max" in graph_data(at) and "Rex" not in graph_data(at)  # Rex was pruned
    at.slider[0].set_value(2).run()  # round 2's details: Rex pruned by the functional rule
    assert "Max" in frames(at) and "functional" in frames(at)
    assert at.subheader[0].value == "Round 2"  # the slider's position, counted from 1 as the slider is (was "Round 1")
    at.slider[0].set_value(1).run()  # replay: the graph after round 1
    assert not at.exception
    assert "Rex" in graph_data(at) and "Max" not in graph_data(at)
    at.text_input[0].set_value("livesIn").run()
    assert not at.exception
    at.slider[0].set_value(3).run()  # the graph now: each fact beside what was said, in the second person
    at.text_input[0].set_value("Max").run()
    assert "Actually your dog is called Max" in frames(at) and "said" in at.dataframe[-1].value.columns
    assert {b.label for b in at.get("download_button")} >= {"Turtle", "TriG (per-round graphs)", "JSON-LD"}


def test_page_without_dsm_memory_offers_to_build_it(app_env):
    store = Store(os.environ["WORKBENCH_DB"])
    cid = store.create_conversation("plain", method="base", owner=ME)
    for role, text in [(USER, "I live in Paris."), (ASSISTANT, "Lovely.")]:
        store.add_turns(cid, [(Turn(role, text), None)], owner=ME)
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    assert not at.exception
    assert "no D-SMART memory" in at.info[0].value
    at.button[0].click().run()
    assert not at.exception
    assert store.get_artifact(cid, "method:dsm", owner=ME) is not None
    assert "Paris" in graph_data(at)


def test_page_with_no_conversations(app_env):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert "No conversations yet" in at.info[0].value


def test_reasoner_findings_are_sentences_and_every_fact_says_who_stated_it(app_env):
    """Issue 57: the OWL-RL message ('Disjoint classes http://... have a common individual ...') is
    a sentence naming the thing, the two kinds and the words it came from, beside the facts to fix
    or forget; the Triples tab says who stated each fact."""
    store = Store(os.environ["WORKBENCH_DB"])
    cid = store.create_conversation("rex", method="dsm", owner=ME)
    method = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    dialogue = Dialogue()
    for role, text in [(USER, "Rex is my dog. Rex is a city."), (ASSISTANT, "Your kitchen has a big oven.")]:
        turn = dialogue.add(Turn(role, text))
        store.add_turns(cid, [(turn, None)], owner=ME)
        method.observe(turn)
    method.wait()
    store.put_artifact(cid, "method:dsm", method.observed.to_bytes(8, "little") + method.save_state(), owner=ME)
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["owner_id"] = ME
    at.run()
    at.slider[0].set_value(1).run()
    assert not at.exception
    warning = at.warning[0].value.replace("\\", "")  # Markdown-escaped text
    assert "'Rex' was read both as a city (a place) and as a dog (a thing)" in warning
    assert "round 1" in warning and '"Rex is my dog."' in warning and "http" not in warning
    assert "Rex | is a | dog" in frames(at) and "Rex | is a | city" in frames(at)
    triples = at.dataframe[-1].value
    assert "said by" in triples.columns
    said_by = {(r.subject, r.relation, r.object): r["said by"] for _, r in triples.iterrows()}
    assert said_by[("user", "has", "user's kitchen")] == "assistant"  # only the reply said it
    assert said_by[("Rex", "is a", "dog")] == said_by[("Rex", "is a", "city")] == "user"
    assert "Facts with who said them (CSV)" in {b.label for b in at.get("download_button")}  # that table, as a file
