"""The Retrieval comparison page charts levels x methods with intervals from a benchmark run (issue 18)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.benchmarks.runner import BenchContext, run_benchmark
from tests.conftest import REPO
from tests.test_data_loaders import tiny_locomo

PAGE = str(REPO / "pages/3_Retrieval_comparison.py")


def test_runs_tab_charts_levels_by_methods(app_env, tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    ctx = BenchContext(name="locomo-retrieval", data=tiny_locomo(tmp_path), out=runs / "r1",
                       methods=["bm25-t", "hybrid-t", "sgmem-t+h", "sgmem-s"], limit=None, seed=0,
                       options={"embedder": "hashing", "embedding_cache": str(tmp_path / "emb")}, progress=False)
    run_benchmark(ctx)
    monkeypatch.setenv("WORKBENCH_RUNS", str(runs))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    levels = [spec for spec in charts if "per chunk level and method" in spec]
    assert levels and '"sgmem+h"' in levels[0] and '"hybrid"' in levels[0]
    radio = next(r for r in at.radio if r.label == "Levels x methods")
    radio.set_value("tok_recall").run()
    assert not at.exception
    assert any("at each level" in c.proto.spec for c in at.get("plotly_chart"))


def test_home_page_switches_the_embedder(app_env, monkeypatch):
    monkeypatch.delenv("WORKBENCH_EMBEDDER", raising=False)
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.session_state["embedder_choice"] == "minilm"
    at.session_state["method:c1:rag"] = object()  # a chat method built with the old embedder
    next(r for r in at.radio if r.label == "Embedder").set_value("mpnet")
    next(b for b in at.button if b.label == "Use this embedder").click().run()
    assert not at.exception
    assert at.session_state["embedder_choice"] == "mpnet"
    assert "method:c1:rag" not in at.session_state  # rebuilt with the new embedder on its next use


def test_runs_tab_charts_a_saved_levels_summary(app_env, tmp_path, monkeypatch):
    """`python -m core retrieval-levels` keeps a run's levels x methods in results/; the page charts it
    with its intervals, and the summary's means are the run's per-question means."""
    import json

    import ui.retrieval as ur
    from core.benchmarks.runner import read_run
    from core.retrieval.report import level_summary

    run = tmp_path / "runs" / "r1"
    ctx = BenchContext(name="locomo-retrieval", data=tiny_locomo(tmp_path), out=run,
                       methods=["bm25-t", "rag-s", "sgmem-t"], limit=None, seed=0,
                       options={"embedder": "hashing", "embedding_cache": str(tmp_path / "emb")}, progress=False)
    run_benchmark(ctx)
    summary, items = read_run(run)
    levels = level_summary(summary, items)
    row = next(r for r in levels["rows"]["recall@5"] if r["method"] == "bm25-t")
    headline = [i["methods"]["bm25-t"]["recall@5"] for i in items if i.get("category") != 5]
    assert row["mean"] == sum(headline) / len(headline) and row["low"] <= row["mean"] <= row["high"]
    results = tmp_path / "results"
    results.mkdir()
    (results / "retrieval-levels-tiny.json").write_text(json.dumps(levels))
    (results / "retrieval-levels-broken.json").write_text("[1, 2]")
    monkeypatch.setattr(ur, "RESULTS_DIR", results)
    monkeypatch.setenv("WORKBENCH_RUNS", str(tmp_path / "none"))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and any("Cannot read" in e.value for e in at.error)  # the first file (by name) is broken
    next(s for s in at.selectbox if s.label == "Measured run").set_value(results / "retrieval-levels-tiny.json").run()
    assert not at.exception
    assert any("per chunk level and method" in c.proto.spec and '"bm25"' in c.proto.spec for c in at.get("plotly_chart"))


def test_a_small_benchmark_runs_on_the_page_and_is_charted(app_env, tmp_path, monkeypatch, shared_data):
    """A first visit has no run: the page offers a small `bench locomo-retrieval` on one LoCoMo
    conversation, shows its progress, and charts the finished run (issue 41)."""
    import ui.retrieval as ur
    from core.benchmarks.runner import read_run

    runs = tmp_path / "runs"
    monkeypatch.setenv("WORKBENCH_RUNS", str(runs))
    monkeypatch.setenv("WORKBENCH_EMBEDDER", "hashing")  # the lexical stand-in: no model to load in a unit test
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert not at.exception
    [panel] = [e for e in at.expander if e.label == "Run a small benchmark here"]
    assert panel.proto.expanded  # open while there is no run to chart
    at.text_input(key="small_run_data").set_value(str(shared_data / "locomo" / "locomo_dev.json")).run()
    assert at.selectbox(key="small_run_conversation").value == "conv-26"
    at.slider(key="small_run_questions").set_value(5).run()
    at.button(key="small_run_start").click().run()
    assert not at.exception
    [bar] = at.get("progress")
    assert bar.proto.value == 100 and bar.proto.text == "5 of 5 questions"
    [folder] = runs.glob("locomo-retrieval-conv-26-*")
    summary, items = read_run(folder)
    assert len(items) == 5 and summary["settings"]["methods"] == list(ur.SMALL_RUN_METHODS)
    assert "--conversations conv-26" in summary["command"] and "--limit 5" in summary["command"]
    assert all(set(ur.SMALL_RUN_METHODS) <= set(i["methods"]) for i in items)
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("per method and group" in spec and '"sgmem-t"' in spec for spec in charts)  # the run's recall chart
    assert any("Done in" in s.value for s in at.success)
