"""AppTests: the Chat page draws a stored `mcts` reply's search trees; the Retrieval comparison page
compares KB retrievers with the MCTS trees (knowledge tab), runs mcts-t over a dialogue, and charts
knowledge-retrieval runs; the tree HTML escapes user text."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.mcts.config import KBSettings, MCTSConfig, ReasonerSettings
from core.resources import HashingEmbedder
from core.store import Store
from tests.mcts_helpers import ROWS, write_kb
from tests.test_mcts_method import _reply_by_relation

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
COMPARE = str(REPO / "pages" / "3_Retrieval_comparison.py")
EVIL = "<script>alert(1)</script>"


ME = "anon:mcts-test"


def mcts_reply(tmp_path, query: str):
    rows = [("dog", f"Dogs are loyal animals {EVIL}.", "1.0")] + ROWS[1:]
    config = MCTSConfig(kb=KBSettings(path=str(write_kb(tmp_path, rows)), concepts_per_group=4, cache_dir=str(tmp_path / "c")),
                        reasoner=ReasonerSettings(cache=False))
    llm = ScriptedLLM(lambda m: "Dogs love parks." if "Knowledge:" in m[0].content else _reply_by_relation(m))
    method = create_method("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config)
    return method.respond(Dialogue.from_turns([Turn(USER, "My dog runs in the park.")]), query)


def test_chat_page_draws_the_mcts_trees(app_env):
    query = "Does my dog like other animals?"
    reply = mcts_reply(app_env, query)
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="mcts test", method="mcts", owner=ME)
    store.add_turns(cid, [(Turn(USER, query, "S0:0"), None)], owner=ME)
    store.add_turns(cid, [(Turn(ASSISTANT, reply.text, "S0:1"), reply)], owner=ME)
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME  # the conversation's owner, as the owner cookie would give
    at.run()
    at.sidebar.selectbox[1].select_index(1).run()
    assert not at.exception
    assistant = at.chat_message[1]
    assert "mcts ·" in assistant.caption[0].value
    assert any("COMET is not available offline" in c.value for c in assistant.caption)
    evidence = assistant.dataframe[0].value
    assert len(evidence) == 5 and set(evidence["kind"]) == {"knowledge"}
    frames = [d.value for d in assistant.dataframe]
    reasoning = next(f for f in frames if "relation" in f.columns)
    assert len(reasoning) == 10 and reasoning["selected"].sum() == 3  # 11 relations, one empty completion
    nodes = next(f for f in frames if "visits" in f.columns and "sentence" in f.columns)
    assert {"bridge", "r1"} <= set(nodes["tree"]) and nodes["chosen"].sum() >= 2
    assert "Context concepts N_C: dog" in " ".join(t.value for t in assistant.text)


def test_chat_sidebar_offers_the_kb_file(app_env):
    at = AppTest.from_file(CHAT, default_timeout=120).run()
    at.sidebar.selectbox[0].set_value("mcts").run()
    assert not at.exception
    kb = at.sidebar.text_input[0]
    assert kb.label.startswith("Knowledge base") and kb.value.endswith("GenericsKB.txt")
    kb.set_value(str(app_env / "nowhere.txt")).run()
    assert any("No file at" in w.value for w in at.sidebar.warning)


def _widget(items, label):
    return next(w for w in items if w.label == label)


def test_knowledge_tab_compares_retrievers_with_the_tree(app_env):
    path = write_kb(app_env)
    at = AppTest.from_file(COMPARE, default_timeout=180).run()
    assert not at.exception
    _widget(at.radio, "Context from").set_value("Type a context").run()
    _widget(at.text_area, "Context, one turn per line").set_value(f"A: My dog runs in the park. {EVIL}\nB: Do dogs like cats?").run()
    _widget(at.text_input, "Knowledge base (GenericsKB format)").set_value(str(path)).run()
    _widget(at.multiselect, "Methods").set_value(["dense", "bm25", "mcts-no-reasoner"]).run()
    _widget(at.checkbox, "Run the reasoner (the configured LLM)").uncheck().run()
    _widget(at.button, "Retrieve knowledge").click().run()
    assert not at.exception
    heads = [s.value for s in at.subheader]
    assert {"dense", "bm25", "mcts-no-reasoner"} <= set(heads)
    texts = [t.value for t in at.text]
    assert any("Dogs" in t for t in texts)
    assert any(t.startswith("Context concepts N_C:") for t in texts)
    assert any("visits" in d.value.columns for d in at.dataframe)


def test_compare_tab_runs_mcts_over_the_dialogue(app_env):
    from tests.test_data_loaders import tiny_locomo

    at = AppTest.from_file(COMPARE, default_timeout=180).run()
    at.text_input[0].set_value(str(tiny_locomo(app_env))).run()
    at.selectbox[1].set_value(0).run()
    at.multiselect[0].set_value(["mcts-t", "bm25-t"]).run()
    at.button[0].click().run()
    assert not at.exception
    heads = [s.value for s in at.subheader]
    assert "mcts-t" in heads and any("MCTS search over the dialogue" in h for h in heads)


def test_runs_tab_charts_a_knowledge_retrieval_run(app_env, monkeypatch):
    run = app_env / "runs" / "k1"
    run.mkdir(parents=True)
    curve = {f"{t / 10:.1f}": 100 - 10 * t for t in range(11)}
    results = {m: {"semantic_overlap_p": 80.0, "semantic_overlap_r": 80.0, "semantic_overlap_f1": 80.0, "rouge1_overlap": 20.0,
                   "rouge2_overlap": 5.0, "rougel_overlap": 18.0, "alignment@0.5": 40.0, "alignment_no_threshold": 45.0,
                   "alignment_curve": curve, "n": 3} for m in ("mcts", "dense")}
    (run / "summary.json").write_text(json.dumps({"benchmark": "knowledge-retrieval", "data": "../shared/data/dd.txt",
                                                  "results": results, "contexts": 3,
                                                  "paired": {"mcts - dense": {"rougel_overlap": {"diff": -4.06, "low": -6.34,
                                                                                                 "high": -1.94, "n": 3}}},
                                                  "timings": {"mcts": {"query": {"median_s": 0.5, "p95_s": 0.9, "n": 3}}}}))
    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "runs"))
    at = AppTest.from_file(COMPARE, default_timeout=120).run()
    assert not at.exception
    frames = [d.value for d in at.dataframe]
    table = next(f for f in frames if "alignment@0.5" in f.columns)
    assert list(table["method"]) == ["mcts", "dense"] and table["query median s"][0] == 0.5
    paired = next(f for f in frames if "95% low" in f.columns)
    assert paired.to_dict("records") == [{"pair": "mcts - dense", "metric": "rougel_overlap", "difference": -4.06,
                                          "95% low": -6.34, "95% high": -1.94, "contexts": 3}]


def test_mcts_tree_html_escapes_user_text(tmp_path):
    from ui.mcts import tree_html

    reply = mcts_reply(tmp_path, f"Tell me about dogs {EVIL}")
    page = tree_html(reply.trace)
    assert "<script>alert(1)" not in page
    assert "cdn.jsdelivr" not in page and "cdnjs" not in page
