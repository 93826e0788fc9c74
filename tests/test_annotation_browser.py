"""The Annotation page in a real browser against a real server: keyboard labelling, labels and the
resume point intact after the server is killed with SIGKILL and restarted, and two annotators in two
browser contexts labelling the same task at once without touching each other's labels."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.annotation import AnnotationStore
from core.annotation.formats import read_path
from tests.app_process import AppProcess
from tests.browser_annotation import press, shown_item, sign_in, wait_item

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]  # a hang fails, not blocks CI

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "annotation_hybridial_sample.json"
LAB = "ws:lab"


@pytest.fixture()
def lab(tmp_path):
    """A server in named-workspace mode whose workspace "lab" holds the 6-item sample task."""
    db = tmp_path / "app.sqlite3"
    store = AnnotationStore(db)
    task = store.create_task("study", owner=LAB)
    store.import_batch(task, read_path(SAMPLE), owner=LAB)
    app = AppProcess(db, tmp_path / "streamlit.log", {"WORKBENCH_AUTH": "named"})
    with app:
        yield app, store, task


def labels(store: AnnotationStore, task: str) -> dict[tuple[str, str], str]:
    return {(lb.item_id, lb.annotator): lb.label for lb in store.labels(task, owner=LAB)}


def test_three_labels_and_the_resume_point_survive_sigkill(browser, lab):
    app, store, task = lab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        sign_in(page, app.url, "lab", "Ana")
        wait_item(page, "hd-1")
        # typing in the comment field never triggers a shortcut
        comment = page.get_by_placeholder("Comment (optional)")
        comment.press_sequentially("13 neb")
        comment.press("Enter")
        page.wait_for_timeout(500)
        assert shown_item(page) == "hd-1" and labels(store, task) == {}
        press(page, "1", "hd-2")
        press(page, "2", "hd-3")
        press(page, "3", "hd-4")
        assert labels(store, task) == {("hd-1", "ana"): "Supports", ("hd-2", "ana"): "Refutes", ("hd-3", "ana"): "Not Enough Info"}
        assert store.get_label(task, "hd-1", "ana", owner=LAB).comment == "13 neb"

        app.kill()  # SIGKILL: no shutdown handler runs
        with sqlite3.connect(app.db) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(labels(AnnotationStore(app.db), task)) == 3
        app.start()
        page.reload()  # a new session: the cookie brings the workspace back, the address the annotator and task
        wait_item(page, "hd-4")  # the first item Ana has not labelled
        page.get_by_text("ana: 3 of 6 labelled").wait_for(timeout=30_000)
        press(page, "b", "hd-3")
        page.get_by_text("Your label: Not Enough Info").wait_for(timeout=30_000)
        assert labels(store, task)[("hd-3", "ana")] == "Not Enough Info"
    finally:
        context.close()
    assert "Traceback" not in app.log()


def test_two_annotators_label_the_same_task_at_once(browser, lab):
    app, store, task = lab
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        ana, ben = (c.new_page() for c in contexts)
        sign_in(ana, app.url, "lab", "ana")
        sign_in(ben, app.url, "lab", "ben")
        wait_item(ana, "hd-1")
        wait_item(ben, "hd-1")
        press(ana, "1", "hd-2")
        # Ben has not labelled hd-1 yet: Ana's label stays hidden from him (his page reruns on his own keys only)
        press(ben, "e")
        ben.get_by_text("evidence passages hidden").wait_for(timeout=30_000)
        assert "ana: Supports" not in ben.inner_text("body")
        ben.get_by_text("appear once you have labelled it").wait_for(timeout=30_000)
        press(ben, "2", "hd-2")
        press(ana, "1", "hd-3")
        press(ben, "3", "hd-3")
        assert labels(store, task) == {("hd-1", "ana"): "Supports", ("hd-2", "ana"): "Supports",
                                       ("hd-1", "ben"): "Refutes", ("hd-2", "ben"): "Not Enough Info"}
        press(ben, "b", "hd-2")  # now that Ben has labelled hd-2 he sees Ana's label of it
        ben.get_by_text("ana: Supports").wait_for(timeout=30_000)
        press(ana, "n", "hd-4")  # skip: Ana's panel reruns and counts Ben's labels too
        ana.get_by_text("ana: 2 of 6 labelled").wait_for(timeout=30_000)
        assert ana.get_by_text("ben: 2 of 6").count() == 1  # others' progress, in the collapsed expander
    finally:
        for c in contexts:
            c.close()
