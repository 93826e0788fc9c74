"""The Retrieval Comparison page: compare tab on a tiny LoCoMo file, runs tab on a tiny run."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.benchmarks.runner import BenchContext, run_benchmark
from tests.conftest import REPO
from tests.test_data_loaders import tiny_locomo

PAGE = str(REPO / "pages/3_Retrieval_comparison.py")


def test_page_compares_bm25_with_gold_marked(app_env, tmp_path):
    path = tiny_locomo(tmp_path)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    at.text_input[0].set_value(str(path)).run()
    at.selectbox[1].set_value(0).run()  # the first benchmark question, "Q1", gold D1:2 and D2:1
    at.multiselect[0].set_value(["bm25-t"]).run()
    at.button[0].click().run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "bm25-t" in [s.value for s in at.subheader]
    assert "Gold evidence" in " ".join(c.value for c in at.caption)
    assert "**1.**" in shown


def test_page_escapes_nothing_into_html_and_lists_runs(app_env, tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    ctx = BenchContext(name="locomo-retrieval", data=tiny_locomo(tmp_path), out=runs / "r1", methods=["bm25-t", "rag-s"],
                       limit=None, seed=0, options={"embedder": "hashing", "embedding_cache": str(tmp_path / "emb")},
                       progress=False)
    run_benchmark(ctx)
    monkeypatch.setenv("WORKBENCH_RUNS", str(runs))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any(s.value.replace("\\", "").find("locomo-retrieval") >= 0 for s in at.subheader)  # shown escaped
    assert at.dataframe  # the summary table


def test_sentence_graph_html_escapes_user_text():
    from core.dialogue import USER, Dialogue, Turn
    from core.methods.sgmem.config import SGMemConfig
    from core.methods.sgmem.retriever import SGMemRetriever
    from core.resources import HashingEmbedder
    from ui.retrieval import sentence_graph_html

    d = Dialogue.from_turns([Turn(USER, "<script>alert(1)</script> is my dog.", "D1:1", 1, "Ann"),
                             Turn(USER, "My dog likes <b>bones</b>.", "D1:2", 1, "Ann")])
    r = SGMemRetriever(HashingEmbedder(64), SGMemConfig(knn_k=1, gamma=0.0))
    r.index(d)
    page = sentence_graph_html(r, r.search("dog", 2), gold=("D1:2",))
    assert "<script>alert(1)" not in page
    assert "<b>bones</b>" not in page
    import json

    start = page.index("nodes = new vis.DataSet(") + len("nodes = new vis.DataSet(")
    labels = [n["label"] for n in json.JSONDecoder().raw_decode(page[start:])[0]]
    assert any(label.startswith("<script>alert(1)</script>") for label in labels)  # JSON-encoded, shown as typed


@pytest.mark.slow
def test_page_runs_sgmem_with_the_real_embedder(app_env, tmp_path):
    path = tiny_locomo(tmp_path)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    at.text_input[0].set_value(str(path)).run()
    at.selectbox[1].set_value(0).run()
    at.multiselect[0].set_value(["rag-t", "sgmem-t"]).run()
    at.button[0].click().run()
    assert not at.exception
    assert any("Sentence graph" in s.value for s in at.subheader)
