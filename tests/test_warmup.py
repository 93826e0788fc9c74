"""Warm start: shared models load once in the background; the Home page reports it; the Retrieval
comparison page builds a user's indexes while the query is typed."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from core.resources import load_once
from core.warmup import WarmUp
from tests.conftest import REPO

HOME = str(REPO / "streamlit_app.py")
RETRIEVAL = str(REPO / "pages/3_Retrieval_comparison.py")


def test_concurrent_calls_load_once():
    calls, release = [], threading.Event()

    @load_once
    def load(name: str = "", device: str = "cpu"):
        calls.append(name)
        release.wait(5)
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(load("slow"))) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    release.set()
    for t in threads:
        t.join(5)
    assert calls == ["slow"] and len(results) == 4 and len({id(r) for r in results}) == 1
    other = load("fast")
    assert load("fast") is other and load(name="fast", device="cpu") is other  # defaults bound: one key
    load.cache_clear()
    assert load("fast") is not other


def test_loads_of_different_models_never_run_at_once():
    """Importing torch/transformers from two threads at once fails, so loads take turns; a
    warm-up step that holds the lock around a first pass does not deadlock a query's load."""
    from core.resources import loading

    running, most = [0], [0]
    guard = threading.Lock()

    @load_once
    def load(name: str):
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with guard:
            running[0] -= 1
        return name

    def warm_step(name):
        model = load(name)
        with loading():  # the first pass, as core.warmup does it
            time.sleep(0.02)
        return model

    threads = [threading.Thread(target=warm_step, args=(n,)) for n in "abcab"]
    threads += [threading.Thread(target=load, args=(n,)) for n in "cba"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert most[0] == 1


def test_warmup_runs_steps_in_order_in_the_background_and_records_failures():
    order, gate = [], threading.Event()

    def first():
        gate.wait(5)
        order.append("first")

    def broken():
        raise FileNotFoundError("no model at /nowhere")

    warm = WarmUp([("first", first), ("broken", broken), ("last", lambda: order.append("last"))])
    assert warm.start() is warm.start()  # one thread however often started
    assert not warm.done  # start() returned while the first step waits
    gate.set()
    assert warm.wait(5)
    assert order == ["first", "last"]
    assert [r.name for r in warm.results] == ["first", "broken", "last"]
    assert warm.results[1].error == "FileNotFoundError: no model at /nowhere" and not warm.results[2].error
    assert warm.seconds is not None and warm.seconds >= warm.results[0].seconds


@pytest.fixture()
def warm_app(app_env, monkeypatch):
    """The app with warm start on, over fast fake steps (no real model loads)."""
    import ui.warmup

    monkeypatch.setenv("WORKBENCH_WARMUP", "1")
    monkeypatch.setattr(ui.warmup, "_warmup", None)
    monkeypatch.setattr(ui.warmup, "default_steps", lambda **models: [("sentence embedder", lambda: None), ("spaCy", lambda: None)])
    monkeypatch.setenv("WORKBENCH_WARMUP_KB", "1")
    monkeypatch.setattr(ui.warmup, "mcts_kb_step", lambda **kb: lambda: None)  # the MCTS index: last, faked here
    return ui.warmup


def test_home_starts_the_warm_up_and_reports_it(warm_app):
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert not at.exception
    assert warm_app._warmup is not None and warm_app._warmup.wait(5)
    at.run()
    captions = " ".join(c.value for c in at.caption)
    assert "Shared models ready" in captions and "sentence embedder" in captions
    assert [r.name for r in warm_app._warmup.results][-1] == "knowledge index"


def test_home_says_when_warm_start_is_off(app_env, monkeypatch):
    monkeypatch.setenv("WORKBENCH_WARMUP", "0")
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert not at.exception
    assert "warm start is off" in " ".join(c.value for c in at.caption)


def test_retrieval_page_builds_indexes_while_the_query_is_typed(warm_app, monkeypatch, tmp_path):
    from core.resources import HashingEmbedder
    from core.retrieval.cache import CachedEmbedder
    from tests.test_data_loaders import tiny_locomo
    import ui.retrieval as ur

    embedder = CachedEmbedder(HashingEmbedder(64), tmp_path / "emb")
    monkeypatch.setattr(ur, "shared_cached_embedder", lambda choice="": embedder)
    monkeypatch.setattr(ur, "LOCOMO_DEFAULT", tiny_locomo(tmp_path))
    at = AppTest.from_file(RETRIEVAL, default_timeout=60).run()
    assert not at.exception
    pending = at.session_state[ur.PENDING]
    assert sorted(slot[2] for slot in pending) == ["bm25-t", "rag-t", "sgmem-t", "sgmem-t+h"]  # the default retrievers
    for future in list(pending.values()):
        future.result(timeout=30)
    at.selectbox[1].set_value(0).run()  # a benchmark question: the query
    at.button[0].click().run()
    assert not at.exception
    assert sorted(slot[2] for slot in at.session_state[ur.INDEXES]) == ["bm25-t", "rag-t", "sgmem-t", "sgmem-t+h"]
    assert not any("index ready after" in c.value for c in at.caption)  # nothing waited for an index
    assert {"rag-t", "bm25-t", "sgmem-t", "sgmem-t+h"} <= {s.value for s in at.subheader}
    assert "sgmem-t+h (not in the paper)" in at.multiselect[0].value or "sgmem-t+h" in at.multiselect[0].value


def test_the_app_warms_the_dsm_recall_embedder_too():
    """A first dsm or dsmart reply ranks its memory with the recall embedder; the warm-up loads it,
    last, so the first reply does not."""
    from core.warmup import default_steps

    names = [name for name, _ in default_steps()]
    assert names[-1] == "recall embedder" and "sentence embedder" in names


def test_the_app_warms_the_language_identifier_and_loads_it_once():
    """Every reply's check tells its sentences' language; the identifier's model takes 0.7 s to
    load, so the warm-up loads it, and first replies arriving together share one load."""
    import threading

    from core import language
    from core.warmup import default_steps

    steps = dict(default_steps())
    assert steps["language identifier"]() == "en"  # the model loaded and used once
    language._load_identifier.cache_clear()
    found = []
    threads = [threading.Thread(target=lambda: found.append(language._identifier())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(f) for f in found}) == 1 and language._load_identifier.cache_info().misses == 1

