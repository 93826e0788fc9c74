"""Every write of the two stores may run twice: `Database._run` retries a transaction whose
connection broke, and a break after the commit went through but before its acknowledgement came
back means the retry finds its own work done. Here every write is run twice in a row (the first
committed, "acknowledgement lost"), on both back-ends, and must leave what one run leaves, with no
error: no second turn, history row or final label, no "already exists", no "no conversation"."""

from __future__ import annotations

import pytest

from core.annotation import Adjudication, AnnotationStore, ImportBatch, Item, Label, Passage
from core.db import Database
from core.dialogue import Reply, Turn
from core.store import Store

ME = "anon:retry"


@pytest.fixture()
def twice(monkeypatch):
    """Database.write runs each transaction twice: committed, then retried as after a lost ack."""
    def write_twice(self, fn):
        self._run(fn, write=True)
        return self._run(fn, write=True)

    monkeypatch.setattr(Database, "write", write_twice)


def test_chat_store_writes_survive_a_retry_after_commit(db_url, twice):
    store = Store(db_url)
    cid = store.create_conversation("Retry", method="base", owner=ME)
    store.add_turns(cid, [(Turn("user", "Hi, I am Ana."), None), (Turn("assistant", "Hi Ana."), Reply("Hi Ana.", "base", "m"))],
                    owner=ME)
    store.put_checks(cid, {1: {"nli": {"model": "m"}}}, owner=ME)
    store.put_checks(cid, {1: {"other": 1}}, owner=ME)
    store.put_artifact(cid, "method:dsm", b"graph", owner=ME)
    store.update_conversation(cid, title="Renamed", owner=ME)
    store.put_settings({"llm": {"model": "x"}}, owner=ME)
    copy = store.copy_conversation(cid, owner=ME)
    assert [t.turn.text for t in store.turns(cid, owner=ME)] == ["Hi, I am Ana.", "Hi Ana."]
    assert store.turns(cid, owner=ME)[1].checks == {"nli": {"model": "m"}, "other": 1}
    assert sorted(i.id for i in store.list_conversations(owner=ME)) == sorted([cid, copy])
    assert [t.turn.text for t in store.turns(copy, owner=ME)] == ["Hi, I am Ana.", "Hi Ana."]
    store.delete_conversation(copy, owner=ME)
    assert [i.id for i in store.list_conversations(owner=ME)] == [cid]


def test_annotation_writes_survive_a_retry_after_commit(db_url, twice):
    store = AnnotationStore(db_url)
    tid = store.create_task("retry study", owner=ME)
    item = Item(item_id="f1", fact="Fact one.", response="Fact one. More.", evidence=(Passage("p1", "a passage"),))
    report = store.import_batch(tid, ImportBatch(items=[item], labels=[Label("f1", "ann", "Supports")],
                                                 adjudications=[Adjudication("f1", "Supports", "lead")]), owner=ME)
    # the report is the retry's: what the first attempt added, it finds unchanged
    assert (report.items_added + report.items_unchanged, report.labels_added + report.labels_unchanged) == (1, 1)
    assert [i.item_id for i in store.items(tid, owner=ME)] == ["f1"]
    store.label(tid, "f1", "ann", "Refutes", owner=ME)
    store.adjudicate(tid, "f1", "Refutes", "lead", owner=ME)
    assert [t.name for t in store.list_tasks(owner=ME)] == ["retry study"]
    assert [(h.annotator, h.label) for h in store.history(tid, "f1", owner=ME)] == [
        ("ann", "Supports"), ("adjudicated", "Supports"), ("ann", "Refutes"), ("adjudicated", "Refutes")]
