"""core.db on both back-ends: an SQLite file written by main's code before issue 30 upgrades in
place; a schema newer than the code is refused untouched; two processes appending to one
conversation lose and duplicate nothing; `db copy` SQLite -> PostgreSQL counts rows both sides; a
transaction started while PostgreSQL restarts completes; wrong URLs fail with one clear line."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from core.annotation import AnnotationStore
from core.db import Database, DatabaseError, DatabaseUnavailable, SchemaTooNew
from core.db.migrate import head
from core.dialogue import Reply, Turn
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
OLD_DUMP = REPO / "tests" / "fixtures" / "old_main_schema_v2.sql"  # written by main's code, dumped with iterdump


def old_file(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(OLD_DUMP.read_text())
    db.close()
    return path


def test_a_file_from_mains_code_upgrades_in_place(tmp_path):
    path = old_file(tmp_path / "old.sqlite3")
    store, ann = Store(path), AnnotationStore(path)
    assert sqlite3.connect(path).execute("SELECT version_num FROM alembic_version").fetchone()[0] == head()
    [alice] = store.list_conversations(owner="anon:alice")
    assert (alice.title, alice.turns) == ("Alice's dog", 2)
    turns = store.turns(alice.id, owner="anon:alice")
    assert [t.turn.text for t in turns] == ["My dog is called Rex.", "Nice, Rex!"]
    assert turns[1].reply.timings == {"generate": 0.5} and turns[1].reply.evidence[0].source == "S0:0"
    assert store.get_artifact(alice.id, "method:dsm", owner="anon:alice").endswith(b"graph")
    assert store.get_settings(owner="anon:alice") == {"llm": {"model": "alice-model"}}
    assert store.list_conversations(owner="anon:carol") == []  # owners still apart
    store.add_turns(alice.id, [(Turn("user", "And a cat."), None), (Turn("assistant", "Ok."), Reply("Ok.", "rag", "m"))],
                    owner="anon:alice")
    assert [t.index for t in store.turns(alice.id, owner="anon:alice")] == [0, 1, 2, 3]
    [task] = ann.list_tasks(owner="ws:lab")
    assert [h.label for h in ann.history(task.id, "f0", owner="ws:lab", annotator="ana")] == ["Supports", "Refutes"]
    assert ann.adjudications(task.id, owner="ws:lab")["f0"].label == "Refutes"
    ann.label(task.id, "f2", "ana", "Supports", owner="ws:lab")  # history numbering continues
    assert ann.progress(task.id, owner="ws:lab") == {"ana": 2, "ben": 1}
    assert store.integrity_check() == "ok"
    Store(path)  # opening again migrates nothing twice
    assert len(store.turns(alice.id, owner="anon:alice")) == 4


def test_a_schema_newer_than_the_code_is_refused_untouched(db_url):
    store = Store(db_url)
    cid = store.create_conversation("kept", owner="anon:a")
    store.db.write(lambda c: c.execute(text("UPDATE alembic_version SET version_num='9999_future'")))
    with pytest.raises(SchemaTooNew, match="9999_future.*newer version"):
        Store(db_url)
    with pytest.raises(SchemaTooNew):
        AnnotationStore(db_url)
    assert store.db.read(lambda c: c.execute(text("SELECT version_num FROM alembic_version")).scalar()) == "9999_future"
    assert store.db.read(lambda c: c.execute(text("SELECT title FROM conversations WHERE id=:i"), {"i": cid}).scalar()) == "kept"


def test_an_old_file_at_an_unknown_version_is_refused(tmp_path):
    path = old_file(tmp_path / "old.sqlite3")
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()
    with pytest.raises(SchemaTooNew, match="version 3"):
        Store(path)
    assert sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE name='alembic_version'").fetchone() is None


def _append_rounds(url: str, cid: str, tag: str, n: int) -> None:
    store = Store(url)
    for k in range(n):
        store.add_turns(cid, [(Turn("user", f"{tag} message {k}"), None),
                              (Turn("assistant", f"{tag} reply {k}"), Reply(f"{tag} reply {k}", "base", "m"))], owner="anon:w")


def test_two_processes_appending_to_one_conversation_lose_and_duplicate_nothing(db_url):
    store = Store(db_url)
    cid = store.create_conversation("shared", owner="anon:w")
    url = store.url.render_as_string(hide_password=False)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_rounds, args=(url, cid, tag, 30)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    turns = store.turns(cid, owner="anon:w")
    texts = [t.turn.text for t in turns]
    assert [t.index for t in turns] == list(range(120))
    assert sorted(texts) == sorted(f"{tag} {kind} {k}" for tag in "ab" for kind in ("message", "reply") for k in range(30))
    for i in range(0, 120, 2):  # each round stays together: a message, then its own reply
        assert texts[i].replace("message", "reply") == texts[i + 1]


def test_db_copy_sqlite_to_postgresql_counts_rows(tmp_path, postgres_server):
    path = old_file(tmp_path / "old.sqlite3")
    target = postgres_server.create_database("copy_target")
    out = subprocess.run([sys.executable, "-m", "core", "db", "copy", "--from", f"sqlite:///{path}", "--to", target],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["match"] and report["source"] == report["target"]
    assert report["target"]["turns"] == 3 and report["target"]["annotation_label_history"] == 4
    store, ann = Store(target), AnnotationStore(target)
    [alice] = store.list_conversations(owner="anon:alice")
    assert [t.turn.text for t in store.turns(alice.id, owner="anon:alice")] == ["My dog is called Rex.", "Nice, Rex!"]
    [task] = ann.list_tasks(owner="ws:lab")
    ann.label(task.id, "f2", "cy", "Supports", owner="ws:lab")  # the history's serial continues past the copied rows
    assert len(ann.history(task.id, "f2", owner="ws:lab")) == 1
    again = subprocess.run([sys.executable, "-m", "core", "db", "copy", "--from", str(path), "--to", target],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already holds rows" in again.stderr  # never mixed into a used database


def test_db_migrate_command(tmp_path):
    out = subprocess.run([sys.executable, "-m", "core", "db", "migrate", "--db", str(old_file(tmp_path / "o.sqlite3"))],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["before"] == "legacy" and json.loads(out.stdout)["after"] == head()


def test_a_transaction_during_a_postgresql_restart_completes():
    from ops.postgres import TempPostgres, find_bin

    if find_bin() is None:
        pytest.skip("PostgreSQL is not installed")
    with TempPostgres(durable=False) as pg:
        store = Store(pg.url)
        cid = store.create_conversation("restart", owner="anon:r")
        restart = threading.Thread(target=pg.restart, kwargs={"down_s": 1.0})
        restart.start()
        time.sleep(0.3)  # the server is going down or down
        written = [store.add_turns(cid, [(Turn("user", f"during restart {k}"), None)], owner="anon:r")[0] for k in range(5)]
        restart.join()
        assert written == [0, 1, 2, 3, 4]
        assert len(store.turns(cid, owner="anon:r")) == 5
        short = Store(pg.url, retry_s=2)
        pg.stop()
        t0 = time.monotonic()
        with pytest.raises(DatabaseUnavailable, match="did not answer for 2 s"):
            short.turns(cid, owner="anon:r")
        assert time.monotonic() - t0 < 15


@pytest.mark.parametrize("url, message", [
    ("mysql://root@localhost/x", "unsupported database 'mysql'"),
    ("postgresql://me:hunter2@127.0.0.1:1/x", "Connection refused"),
    ("sqlite:///", "database"),
])
def test_wrong_urls_fail_with_one_clear_message(url, message):
    with pytest.raises(DatabaseError) as err:
        Database(url).ping(timeout_s=1)
        Store(url)
    assert message.lower() in str(err.value).lower() and "hunter2" not in str(err.value)
