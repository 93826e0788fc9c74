"""AppTest for the Metrics page with a small fixture run (golden + base on three MT-Bench-101
dialogues, written by `python -m core bench mtbench`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import DEFAULT_NLI_MODEL_DIR

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "4_Metrics.py")
FIXTURE_RUN = REPO / "tests" / "fixtures" / "mtbench_run"
FIXTURE_DATA = REPO / "tests" / "fixtures" / "mtbench_small.jsonl"


@pytest.fixture()
def runs_dir(app_env, monkeypatch):
    root = app_env / "runs"
    shutil.copytree(FIXTURE_RUN, root / "fixture")
    monkeypatch.setenv("WORKBENCH_RUNS", str(root))
    return root


def test_page_lists_run_and_shows_table_figures_and_drilldown(runs_dir):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert at.sidebar.multiselect[0].value == [str(runs_dir / "fixture")]
    table = at.dataframe[0].value
    assert list(table["method"]) == ["golden", "base"]
    assert {"CS", "DER", "Word F1", "BLEU", "ROUGE-L"} <= set(table.columns)
    from core.benchmarks.runner import read_run
    from core.metrics.report import summarise

    _, items = read_run(runs_dir / "fixture")
    expected = summarise(items)["base"]["cs"]
    assert table.loc[table["method"] == "base", "CS"].iloc[0].startswith(f"{expected:.3f}")
    assert pd_isna(table.loc[table["method"] == "golden", "Word F1"].iloc[0])  # no lexical score of the gold itself
    assert len(at.get("plotly_chart")) == 2
    # drill down: the first base dialogue, turn by turn, with NLI label and probabilities
    at.selectbox(key="drill_method").set_value("base").run()
    turns = at.dataframe[-1].value
    first = min(i["dialogue_id"] for i in items if i["method"] == "base")
    expected_turns = sorted((i for i in items if i["method"] == "base" and i["dialogue_id"] == first), key=lambda i: i["turn"])
    assert list(turns["turn"]) == [i["turn"] for i in expected_turns]
    assert list(turns["nli_label"]) == [i["nli_label"] for i in expected_turns]
    assert {"p_entailment", "p_neutral", "p_contradiction", "cs"} <= set(turns.columns)


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_page_loads_an_extra_folder_and_warns_on_a_bad_one(app_env, monkeypatch):
    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "empty"))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("Demo" in i.value for i in at.info)  # the shipped demo, not an empty page
    at.sidebar.text_area(key="metrics_extra_paths").set_value(f"{FIXTURE_RUN}\n{app_env / 'nowhere'}").run()
    assert not at.exception
    assert any("nowhere" in w.value for w in at.warning)
    assert list(at.dataframe[0].value["method"]) == ["golden", "base"]


@pytest.mark.slow
def test_page_starts_a_small_golden_run(app_env, monkeypatch):
    if not (DEFAULT_NLI_MODEL_DIR / "config.json").exists():
        pytest.skip(f"the trained NLI model is not in {DEFAULT_NLI_MODEL_DIR}")
    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "runs"))
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    at.text_input[0].set_value(str(FIXTURE_DATA))
    at.number_input[0].set_value(2)
    at.button[0].click().run()
    assert not at.exception
    assert any("Done" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert list(table["method"]) == ["golden"] and int(table["dialogues"].iloc[0]) == 2


def test_a_fresh_install_opens_on_the_shipped_demo_with_a_chart(app_env, monkeypatch):
    import json

    from ui import metrics_demo

    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "empty"))  # no run of the user's own
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("**Demo**" in i.value for i in at.info)
    table = at.dataframe[0].value
    shipped = sorted(metrics_demo.DEMO_DIR.glob(metrics_demo.DEMO_GLOB))
    assert len(shipped) == 5 and list(table["method"]) == ["golden", "base", "dsm", "dsmart", "rag", "sgmem"]
    base = json.loads(shipped[0].read_text())["results"]["base"]  # mtbench-l13-qwen05-base.json
    assert table.loc[table["method"] == "base", "CS"].iloc[0].startswith(f"{base['cs']:.3f} [")
    [chart] = at.get("plotly_chart")
    figure = json.loads(chart.proto.spec)
    assert {trace["name"] for trace in figure["data"]} == set(table["method"])


def test_without_the_shipped_files_the_page_says_no_run_is_loaded(app_env, monkeypatch):
    from ui import metrics_demo

    monkeypatch.setenv("WORKBENCH_RUNS", str(app_env / "empty"))
    monkeypatch.setattr(metrics_demo, "DEMO_DIR", app_env / "no-results")
    monkeypatch.setattr(metrics_demo.demo_summaries, "__defaults__", (app_env / "no-results",))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and any("No run loaded" in i.value for i in at.info)
