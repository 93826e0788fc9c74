"""AppTest of the Metrics page's factuality tab: a hybridialogue-facts run folder (FactScore / NEIP
per response from its items, facts escaped) and one of the user's own conversations scored by the
offline verifier (only the owner's conversations listed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Evidence, Reply, Turn
from core.metrics.fact_types import NEI, REFUTES, SUPPORTS
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "4_Metrics.py")
ALICE, BOB = "anon:alice-fs", "anon:bob-fs"


def _item(response_id, fact, label, human):
    return {"method": "nli", "id": fact[:8], "type": "plain", "dialogue_id": "d" + response_id, "response_id": response_id,
            "fact": fact, "human": human, "label": label, "confidence": 0.7, "probs": [0.7, 0.2, 0.1], "note": "",
            "seconds": 0.1, "cpu_s": 0.1, "evidence": [{"text": "The bridge opened in 1937.", "title": "Bridge", "score": 1.0}]}


@pytest.fixture()
def fact_run(app_env, monkeypatch):
    root = app_env / "runs"
    out = root / "facts"
    out.mkdir(parents=True)
    items = [_item("r1", "The bridge opened in 1937.", SUPPORTS, SUPPORTS),
             _item("r1", "<script>alert(1)</script> is *bold*", NEI, NEI),
             _item("r2", "It has 3 lanes.", REFUTES, SUPPORTS)]
    (out / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (out / "summary.json").write_text(json.dumps({"benchmark": "hybridialogue-facts", "data": "x.json", "code_version": "t",
                                                  "settings": {}, "results": {}, "timings": {}}))
    monkeypatch.setenv("WORKBENCH_RUNS", str(root))
    return out


def _texts(at) -> str:
    parts = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error") for e in getattr(at, kind)]
    return "\n".join(parts)


def test_factuality_tab_shows_a_benchmark_run_per_turn_with_escaped_facts(fact_run):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["owner_id"] = ALICE
    at.run()
    assert not at.exception
    at.radio(key="fs_source").set_value("A benchmark run").run()
    assert not at.exception
    frames = [d.value for d in at.dataframe if "factscore" in getattr(d.value, "columns", [])]  # past the Metrics demo's tables
    turns = frames[0]
    assert list(turns["factscore"]) == [0.5, 0.0] and list(turns["neip"]) == [0.5, 0.0]
    assert list(turns["facts"]) == [2, 1]
    values = {m.label: m.value for m in at.metric}
    assert values["FactScore (higher is better)"] == "0.250" and values["NEIP (lower is better)"] == "0.250"
    facts = next(d.value for d in at.dataframe if "label" in getattr(d.value, "columns", []) and "fact" in d.value.columns)
    assert list(facts["label"]) == [SUPPORTS, NEI]
    assert "<script>alert(1)</script> is *bold*" in list(facts["fact"])  # text in a dataframe: shown as is
    shown = [m.value for m in at.markdown if "script" in m.value]
    assert shown and all("\\<script\\>" in m and "\\*bold\\*" in m for m in shown)  # markdown escaped
    assert len(at.get("plotly_chart")) >= 1


@pytest.mark.slow
def test_factuality_tab_scores_my_conversation_with_the_offline_verifier(app_env, monkeypatch):
    from core.metrics.fact_classifier import DEFAULT_FACTCHECK_DIR

    if not (DEFAULT_FACTCHECK_DIR / "model.json").is_file():
        pytest.skip("assets/models/factcheck not trained")
    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "none"))
    store = Store(Path(app_env / "app.sqlite3"))
    cid = store.create_conversation("Bridges", "rag", owner=ALICE)
    store.add_turns(cid, [(Turn(USER, "When did the Golden Gate Bridge open?"), None)], owner=ALICE)
    evidence = (Evidence("The Golden Gate Bridge opened in 1937 and spans the Golden Gate strait.", 1.0, "kb:1", "fact"),)
    store.add_turns(cid, [(Turn(ASSISTANT, "The Golden Gate Bridge opened in 1937 and it is red."), Reply("The Golden Gate Bridge opened in 1937 and it is red.", "rag", "m", evidence))], owner=ALICE)
    store.add_turns(cid, [(Turn(USER, "Thanks"), None)], owner=ALICE)
    store.add_turns(cid, [(Turn(ASSISTANT, ""), None)], owner=ALICE)[0]  # an empty reply: no facts, undefined
    bob_cid = store.create_conversation("Bob's secret chat", "rag", owner=BOB)
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["owner_id"] = ALICE
    at.run()
    assert not at.exception
    box = at.selectbox(key="fs_chat")
    assert all("Bob" not in str(o) for o in box.options) and bob_cid
    at.button(key="fs_go").click().run()
    assert not at.exception
    turns = next(d.value for d in at.dataframe if "factscore" in getattr(d.value, "columns", []))  # past the Metrics demo
    assert list(turns["turn"]) == [1, 3]
    assert list(turns["facts"]) == [2, 0]
    assert turns["factscore"].iloc[1] != turns["factscore"].iloc[1]  # NaN: undefined for the empty reply
    assert "undefined" in turns["note"].iloc[1]
    facts = next(d.value for d in at.dataframe if "label" in getattr(d.value, "columns", []) and "fact" in d.value.columns)
    assert list(facts["fact"]) == ["The Golden Gate Bridge opened in 1937.", "It is red."]
    assert set(facts["label"]) <= {SUPPORTS, REFUTES, NEI}
    assert "1937" in facts["evidence"].iloc[0]
