"""AppTest: the comparison page's "Answer accuracy (QA)" tab reads a locomo-qa run: the method
table with intervals, the paired differences, the published figures kept apart (with reader,
judge and source), and the per-question drill-down with user text escaped."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.llm.fake import ScriptedLLM
from tests.test_qa_bench import _reader_by_question, _run

REPO = Path(__file__).resolve().parent.parent
COMPARE = str(REPO / "pages" / "3_Retrieval_comparison.py")
EVIL = "<img src=x onerror=alert(1)>"


def _qa_run(root: Path) -> None:
    def reader(messages):
        answer = _reader_by_question(messages)
        return answer if answer != "I do not know" else EVIL

    judge = ScriptedLLM(lambda m: '{"label": "CORRECT"}' if "Generated answer: Pixel" in m[-1].content else '{"label": "WRONG"}')
    _run(root, ScriptedLLM(reader), ["base", "bm25-t", "full"], out="runs/locomo-qa", window=64, judge=lambda r: judge)


def test_qa_tab_shows_methods_pairs_published_and_drilldown(app_env, monkeypatch):
    _qa_run(app_env)
    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "runs"))
    at = AppTest.from_file(COMPARE, default_timeout=180).run()
    assert not at.exception
    frames = [d.value for d in at.dataframe]
    table = next(f for f in frames if "F1 95% CI" in f.columns)
    assert set(table["method"]) == {"base", "bm25-t", "full"}
    by = table.set_index("method")
    assert by.loc["bm25-t", "F1"] == 1.0 and by.loc["base", "F1"] == 0.0 and by.loc["full", "window too small"] == 3
    assert "judge (unvalidated)" in table.columns and abs(by.loc["bm25-t", "judge (unvalidated)"] - 1 / 3) < 1e-3
    pairs = next(f for f in frames if "difference" in f.columns)
    assert "bm25-t - base" in set(pairs["difference"])
    published = next(f for f in frames if "system" in f.columns)
    assert {"Mem0", "Zep", "A-Mem", "full context"} <= set(published["system"])
    assert {"reader", "judge", "source"} <= set(published.columns)
    assert published.set_index("system").loc["A-Mem", "accuracy"] == 0.484
    # drill-down: the reader's answer is shown as text, never as HTML
    shown = " ".join(m.value for m in at.markdown)
    assert "onerror" in shown and EVIL not in shown
    assert any("Bad input" in c.value for c in at.caption)


def test_memory_build_rows_come_from_the_sources_that_report_one():
    from ui.qa import build_frame

    settings = {"sources": {"base": {"context": "most recent turns"},
                            "mem0": {"memory": "mem0ai", "build": {"rounds": 250, "invalid_json": 3, "search_p50_s": 0.02}}}}
    frame = build_frame(settings)
    assert frame.to_dict("records") == [{"method": "mem0", "rounds": 250, "invalid_json": 3, "search_p50_s": 0.02}]
    assert build_frame({}).empty
