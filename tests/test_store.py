"""Persistence on both back-ends (SQLite, PostgreSQL: tests/conftest.py db_url): round trips, and
conversations surviving a fresh process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.dialogue import Evidence, Reply, Trace, TraceNode, Turn
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
ME = "anon:me"


def _reply() -> Reply:
    return Reply(
        text="Your dog is Rex.",
        method="rag",
        model="smollm2",
        evidence=(Evidence("User: my dog is Rex", 0.91, "S0:0", "turn", {"session": 0}),),
        trace=Trace("tree", nodes=(TraceNode("n0", "root"), TraceNode("n1", "ANSWER", parent="n0", value=0.8, depth=1, chosen=True, detail={"a": [1]}))),
        timings={"retrieve": 0.01, "generate": 1.5},
        llm_calls=1,
    )


def test_conversation_turns_and_reply_round_trip(db_url):
    store = Store(db_url)
    cid = store.create_conversation("Dogs", method="rag", owner=ME)
    store.add_turns(cid, [(Turn("user", "my dog is Rex"), None)], owner=ME)
    store.add_turns(cid, [(Turn("assistant", "Nice!"), _reply())], owner=ME)
    turns = store.turns(cid, owner=ME)
    assert [t.index for t in turns] == [0, 1]
    assert turns[0].reply is None and turns[0].turn.turn_id == "S0:0"
    assert turns[1].reply == _reply()
    info = store.conversation(cid, owner=ME)
    assert (info.title, info.method, info.turns) == ("Dogs", "rag", 2)
    assert [t.text for t in store.dialogue(cid, owner=ME).turns()] == ["my dog is Rex", "Nice!"]


def test_artifacts_and_delete(db_url):
    store = Store(db_url)
    cid = store.create_conversation(owner=ME)
    assert store.get_artifact(cid, "graph", owner=ME) is None
    store.put_artifact(cid, "graph", b"\x00ttl", owner=ME)
    store.put_artifact(cid, "graph", b"\x01ttl", owner=ME)
    assert store.get_artifact(cid, "graph", owner=ME) == b"\x01ttl"
    store.delete_conversation(cid, owner=ME)
    assert store.list_conversations(owner=ME) == []
    with pytest.raises(KeyError):  # gone, with its artifacts (ON DELETE CASCADE)
        store.get_artifact(cid, "graph", owner=ME)
    with pytest.raises(KeyError):
        store.conversation(cid, owner=ME)


def test_wal_mode_and_schema_version(tmp_path):
    import sqlite3

    Store(tmp_path / "db.sqlite3")
    db = sqlite3.connect(tmp_path / "db.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    from core.db.migrate import head

    assert db.execute("SELECT version_num FROM alembic_version").fetchone()[0] == head() == "0005"


def test_conversation_survives_a_fresh_process(db_url):
    db = db_url
    write = (
        "import sys; from core.store import Store; from core.dialogue import Turn, Reply\n"
        "s = Store(sys.argv[1]); cid = s.create_conversation('persisted', method='base', owner='anon:a')\n"
        "s.add_turns(cid, [(Turn('user', 'hello'), None), (Turn('assistant', 'hi'), Reply('hi', 'base', 'm', timings={'generate': 0.5}))], owner='anon:a')\n"
        "print(cid)"
    )
    cid = subprocess.run([sys.executable, "-c", write, db], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    read = (
        "import sys; from core.store import Store\n"
        "s = Store(sys.argv[1]); t = s.turns(sys.argv[2], owner='anon:a')\n"
        "print(s.conversation(sys.argv[2], owner='anon:a').title, [x.turn.text for x in t], t[1].reply.timings)"
    )
    out = subprocess.run([sys.executable, "-c", read, str(db), cid], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "persisted ['hello', 'hi'] {'generate': 0.5}"
