"""core.annotation.store on a temporary database: label, change (history kept), resume point, views,
merge without duplicates, owners kept apart, adjudication, and imports that store nothing half-way."""

from __future__ import annotations

import inspect
import multiprocessing

import pytest
from sqlalchemy import func, select

from core.annotation import AnnotationError, AnnotationStore, ImportBatch, Item, Limits, Passage
from core.annotation.formats import batch_from_rows

ME, OTHER = "ws:lab", "ws:elsewhere"


def items(n: int, prefix: str = "f") -> list[Item]:
    return [Item(item_id=f"{prefix}{k}", fact=f"Fact number {k}.", response=f"Fact number {k}. And more.",
                 evidence=(Passage("p1", "first passage"), Passage("p2", "second passage")), gold="Supports")
            for k in range(n)]


@pytest.fixture()
def store(db_url):
    """On both back-ends (tests/conftest.py: an SQLite file, a PostgreSQL database)."""
    return AnnotationStore(db_url)


@pytest.fixture()
def task(store):
    tid = store.create_task("study", owner=ME)
    store.import_batch(tid, ImportBatch(items=items(5)), owner=ME)
    return tid


def test_every_public_call_takes_a_required_keyword_owner():
    methods = {n: f for n, f in inspect.getmembers(AnnotationStore, inspect.isfunction) if not n.startswith("_")}
    assert len(methods) >= 15
    for name, fn in methods.items():
        param = inspect.signature(fn).parameters.get("owner")
        assert param is not None and param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is inspect.Parameter.empty, name


def test_label_change_and_history(store, task):
    first = store.label(task, "f0", "Ana", "Supports", owner=ME, evidence=["p2"], comment="clear")
    assert (first.annotator, first.label, first.evidence, first.item_version) == ("ana", "Supports", ("p2",), 1)
    assert store.label(task, "f0", "ana", "Supports", owner=ME, evidence=["p2"], comment="clear") == first  # no change
    store.label(task, "f0", "ANA", "refutes", owner=ME, not_claim=True)
    current = store.get_label(task, "f0", "ana", owner=ME)
    assert (current.label, current.evidence, current.not_claim, current.comment) == ("Refutes", (), True, "")
    history = store.history(task, "f0", owner=ME, annotator="ana")
    assert [h.label for h in history] == ["Supports", "Refutes"]
    assert history[0].evidence == ("p2",) and history[0].comment == "clear"
    assert len(store.labels(task, owner=ME)) == 1  # one current label per item and annotator


def test_labels_are_checked(store, task):
    with pytest.raises(AnnotationError, match="annotator name"):
        store.label(task, "f0", "   ", "Supports", owner=ME)
    with pytest.raises(AnnotationError, match="not one of"):
        store.label(task, "f0", "ana", "Maybe", owner=ME)
    with pytest.raises(AnnotationError, match="no evidence passage"):
        store.label(task, "f0", "ana", "Supports", owner=ME, evidence=["p9"])
    with pytest.raises(KeyError):
        store.label(task, "nope", "ana", "Supports", owner=ME)
    with pytest.raises(AnnotationError, match="letters"):
        store.label(task, "f0", "<script>x</script>", "Supports", owner=ME)
    assert store.labels(task, owner=ME) == []


def test_resume_point_and_views(store, task):
    assert store.resume_point(task, "ana", owner=ME) == "f0"
    store.label(task, "f0", "ana", "Supports", owner=ME)
    store.label(task, "f2", "ana", "Refutes", owner=ME)  # f1 skipped
    assert store.resume_point(task, "ana", owner=ME) == "f1"
    assert store.resume_point(task, "ben", owner=ME) == "f0"
    assert store.sequence(task, "ana", "unlabelled", owner=ME) == ["f1", "f3", "f4"]
    assert store.sequence(task, "ana", "labelled", owner=ME) == ["f0", "f2"]
    assert store.sequence(task, "ana", "label:Refutes", owner=ME) == ["f2"]
    store.label(task, "f0", "ben", "Supports", owner=ME)
    store.label(task, "f2", "ben", "Supports", owner=ME)
    store.label(task, "f3", "ben", "Refutes", owner=ME)
    assert store.sequence(task, "ana", "disagreements", owner=ME) == ["f2"]  # f3: ana has not labelled it
    assert store.sequence(task, "ben", "disagreements", owner=ME) == ["f2"]
    for k in (1, 3, 4):
        store.label(task, f"f{k}", "ana", "Supports", owner=ME)
    assert store.resume_point(task, "ana", owner=ME) is None
    assert store.progress(task, owner=ME) == {"ana": 5, "ben": 3}


def test_merge_same_item_and_annotator_updates(store, task):
    rows = [{"item_id": "f0", "annotator": "ana", "label": "Supports"}, {"item_id": "f1", "annotator": "ben", "label": "NEI"}]
    report = store.import_batch(task, batch_from_rows(rows), owner=ME)
    assert (report.labels_added, report.labels_updated, report.labels_unchanged) == (2, 0, 0)
    rows[0]["label"] = "Refutes"
    report = store.import_batch(task, batch_from_rows(rows), owner=ME)
    assert (report.labels_added, report.labels_updated, report.labels_unchanged) == (0, 1, 1)
    labels = store.labels(task, owner=ME)
    assert [(lb.item_id, lb.annotator, lb.label) for lb in labels] == [("f0", "ana", "Refutes"), ("f1", "ben", "Not Enough Info")]
    assert [h.label for h in store.history(task, "f0", owner=ME)] == ["Supports", "Refutes"]


def test_reimport_bumps_changed_items_and_keeps_labels(store, task):
    store.label(task, "f1", "ana", "Supports", owner=ME)
    changed = items(6)
    changed[1] = Item(item_id="f1", fact="A corrected fact.", response="A corrected fact.")
    report = store.import_batch(task, ImportBatch(items=changed), owner=ME)
    assert (report.items_added, report.items_changed, report.items_unchanged) == (1, 1, 4)
    assert store.item(task, "f1", owner=ME).version == 2 and store.item(task, "f0", owner=ME).version == 1
    assert store.get_label(task, "f1", "ana", owner=ME).item_version == 1  # given on version 1: the page flags it
    assert [i.item_id for i in store.items(task, owner=ME)] == ["f0", "f1", "f2", "f3", "f4", "f5"]


def test_a_bad_import_stores_nothing(store, task):
    bad = batch_from_rows([{"item_id": "new1", "fact": "A new fact."},
                           {"item_id": "f0", "annotator": "ana", "label": "Supports"},
                           {"item_id": "ghost", "annotator": "ana", "label": "Refutes"}])
    with pytest.raises(AnnotationError, match="not in the task"):
        store.import_batch(task, bad, owner=ME)
    assert len(store.items(task, owner=ME)) == 5 and store.labels(task, owner=ME) == []
    small = AnnotationStore(store.url, Limits(max_items=6))
    with pytest.raises(AnnotationError, match="limit"):
        small.import_batch(task, ImportBatch(items=items(3, "g")), owner=ME)
    assert len(store.items(task, owner=ME)) == 5


def test_another_owner_sees_nothing(store, task):
    store.label(task, "f0", "ana", "Supports", owner=ME)
    assert store.list_tasks(owner=OTHER) == []
    assert [t.name for t in store.list_tasks(owner=ME)] == ["study"]
    for call in (lambda: store.task(task, owner=OTHER), lambda: store.items(task, owner=OTHER),
                 lambda: store.labels(task, owner=OTHER), lambda: store.export_rows(task, owner=OTHER),
                 lambda: store.label(task, "f0", "eve", "Refutes", owner=OTHER),
                 lambda: store.delete_task(task, owner=OTHER), lambda: store.set_adjudication(task, True, owner=OTHER),
                 lambda: store.import_batch(task, ImportBatch(items=items(1, "x")), owner=OTHER)):
        with pytest.raises(KeyError, match="no annotation task"):
            call()
    assert store.find_task("study", owner=OTHER) is None
    other = store.create_task("study", owner=OTHER)  # the same name in another workspace is another task
    assert other != task and store.task(task, owner=ME).items == 5


def test_adjudication_and_delete(store, task):
    store.label(task, "f0", "ana", "Supports", owner=ME)
    store.adjudicate(task, "f0", "refutes", "Lead", owner=ME)
    store.adjudicate(task, "f0", "NEI", "lead", owner=ME)
    assert store.adjudications(task, owner=ME)["f0"].label == "Not Enough Info"
    assert [h.label for h in store.history(task, "f0", owner=ME) if h.annotator == "adjudicated"] == ["Refutes", "Not Enough Info"]
    store.delete_task(task, owner=ME)
    from core.db import schema

    for table in (schema.annotation_items, schema.annotation_labels, schema.annotation_label_history,
                  schema.annotation_adjudications):
        assert store.db.read(lambda c: c.execute(select(func.count()).select_from(table)).scalar()) == 0, table.name


def _label_many(path: str, annotator: str, n: int) -> None:
    store = AnnotationStore(path)
    tid = store.find_task("study", owner=ME).id
    for k in range(n):
        store.label(tid, f"f{k % 5}", annotator, ("Supports", "Refutes")[k % 2], owner=ME)


def test_two_processes_labelling_at_once_never_overwrite_each_other(store, task):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_label_many, args=(store.url.render_as_string(hide_password=False), name, 40)) for name in ("ana", "ben")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    labels = store.labels(task, owner=ME)
    assert sorted((lb.item_id, lb.annotator) for lb in labels) == sorted((f"f{k}", a) for k in range(5) for a in ("ana", "ben"))
    assert len(store.history(task, "f0", owner=ME, annotator="ana")) == 8  # 40 labels, alternating, 8 on f0
