"""Owners keep users apart in the store: every call that touches user data takes `owner=`, another
owner's conversation behaves exactly like a missing one, shared demo rows (from databases that
predate owners) are readable by all and writable by none."""

from __future__ import annotations

import inspect
import sqlite3

import pytest

from core.dialogue import Reply, Turn
from core.limits import MAX_MESSAGE_CHARS, InvalidMessage
from core.store import SHARED_OWNER, ReadOnlyConversation, Store

# The first schema of core/store.py (PRAGMA user_version 1, before owners), as main's code wrote it.
SCHEMA_V1 = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT NOT NULL, method TEXT NOT NULL DEFAULT '',
    meta TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE turns (conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
    role TEXT NOT NULL, text TEXT NOT NULL, turn_id TEXT NOT NULL, session INTEGER NOT NULL DEFAULT 0,
    speaker TEXT NOT NULL DEFAULT '', date TEXT NOT NULL DEFAULT '', reply TEXT, created_at REAL NOT NULL,
    PRIMARY KEY (conversation_id, idx));
CREATE TABLE artifacts (conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, data BLOB NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (conversation_id, kind));
"""

ALICE, BOB = "anon:alice", "anon:bob"
NO_USER_DATA = {"integrity_check"}  # reads no conversation, turn, artifact or setting


def public_methods():
    return {name: fn for name, fn in inspect.getmembers(Store, inspect.isfunction) if not name.startswith("_")}


def test_every_store_call_takes_a_required_keyword_owner():
    methods = public_methods()
    assert {"list_conversations", "conversation", "turns", "dialogue", "get_artifact", "delete_conversation",
            "get_settings"} <= set(methods)  # the reads and deletes the pages use
    for name, fn in methods.items():
        if name in NO_USER_DATA:
            continue
        param = inspect.signature(fn).parameters.get("owner")
        assert param is not None, f"Store.{name} takes no owner"
        assert param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is inspect.Parameter.empty, name


@pytest.fixture()
def two_owners(db_url):
    """On both back-ends (tests/conftest.py db_url)."""
    store = Store(db_url)
    cid = store.create_conversation("Alice's secrets", method="base", owner=ALICE)
    store.add_turns(cid, [(Turn("user", "My name is Alice Secretname."), None)], owner=ALICE)
    store.add_turns(cid, [(Turn("assistant", "Hi Alice."), Reply("Hi Alice.", "base", "m"))], owner=ALICE)
    store.put_artifact(cid, "method:dsm", b"graph", owner=ALICE)
    store.put_settings({"llm": {"model": "alice-model"}}, owner=ALICE)
    return store, cid


# Each call as Bob on Alice's conversation id; every one must fail as for a missing id.
BOB_CALLS = {
    "conversation": lambda s, c: s.conversation(c, owner=BOB),
    "turns": lambda s, c: s.turns(c, owner=BOB),
    "dialogue": lambda s, c: s.dialogue(c, owner=BOB),
    "get_artifact": lambda s, c: s.get_artifact(c, "method:dsm", owner=BOB),
    "put_artifact": lambda s, c: s.put_artifact(c, "method:dsm", b"overwritten", owner=BOB),
    "add_turns": lambda s, c: s.add_turns(c, [(Turn("user", "injected"), None)], owner=BOB),
    "update_conversation": lambda s, c: s.update_conversation(c, title="hijacked", owner=BOB),
    "delete_conversation": lambda s, c: s.delete_conversation(c, owner=BOB),
    "copy_conversation": lambda s, c: s.copy_conversation(c, owner=BOB),
    "put_checks": lambda s, c: s.put_checks(c, {1: {"nli": {"forged": True}}}, owner=BOB),
    "artifact_kinds": lambda s, c: s.artifact_kinds(c, owner=BOB),
    "forget_epoch": lambda s, c: s.forget_epoch(c, owner=BOB),
    "write_owned": lambda s, c: s.write_owned(c, lambda conn: conn.exec_driver_sql("DELETE FROM turns"), owner=BOB),
}


def test_bob_cannot_reach_alices_conversation_by_its_id(two_owners):
    store, cid = two_owners
    # every public method with a conversation id is covered
    assert set(BOB_CALLS) == {n for n, fn in public_methods().items() if "cid" in inspect.signature(fn).parameters}
    for name, call in BOB_CALLS.items():
        with pytest.raises(KeyError) as err:
            call(store, cid)
        assert str(err.value) == str(KeyError(f"no conversation {cid!r}")), name  # same as a missing id
    assert store.list_conversations(owner=BOB) == []
    assert store.get_settings(owner=BOB) == {}
    # Alice's data is untouched
    assert [t.turn.text for t in store.turns(cid, owner=ALICE)] == ["My name is Alice Secretname.", "Hi Alice."]
    assert store.get_artifact(cid, "method:dsm", owner=ALICE) == b"graph"
    assert store.conversation(cid, owner=ALICE).title == "Alice's secrets"
    assert store.get_settings(owner=ALICE) == {"llm": {"model": "alice-model"}}


def test_lists_hold_only_the_owners_conversations(two_owners):
    store, alice_cid = two_owners
    bob_cid = store.create_conversation("Bob's", owner=BOB)
    assert [c.id for c in store.list_conversations(owner=ALICE)] == [alice_cid]
    assert [(c.id, c.owner, c.read_only) for c in store.list_conversations(owner=BOB)] == [(bob_cid, BOB, False)]
    store.delete_conversation(bob_cid, owner=BOB)
    assert store.list_conversations(owner=BOB) == []
    assert [c.id for c in store.list_conversations(owner=ALICE)] == [alice_cid]


def test_owner_ids_are_checked(db_url):
    store = Store(db_url)
    for bad in ("", "   ", "x" * 201, None):
        with pytest.raises(ValueError):
            store.list_conversations(owner=bad)
    with pytest.raises(ReadOnlyConversation):
        store.create_conversation("demo", owner=SHARED_OWNER)
    with pytest.raises(ReadOnlyConversation):
        store.put_settings({}, owner=SHARED_OWNER)


def old_database(path) -> str:
    """A database written before owners existed (schema version 1), with one conversation."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V1)
    db.execute("PRAGMA user_version=1")
    db.execute("INSERT INTO conversations VALUES ('old1', 'Hi, my name is Alice', 'dsm', '{}', 1.0, 2.0)")
    db.execute("INSERT INTO turns VALUES ('old1', 0, 'user', 'Hi, my name is Alice', 'S0:0', 0, '', '', NULL, 1.0)")
    db.execute("INSERT INTO artifacts VALUES ('old1', 'method:dsm', x'0102', 1.0)")
    db.commit()
    db.close()
    return "old1"


def test_migration_moves_old_rows_to_the_read_only_shared_demo_owner(tmp_path):
    path = tmp_path / "old.sqlite3"
    cid = old_database(path)
    store = Store(path)
    from core.db.migrate import head

    assert sqlite3.connect(path).execute("SELECT version_num FROM alembic_version").fetchone()[0] == head()
    for who in (ALICE, BOB):  # readable by everyone
        [info] = store.list_conversations(owner=who)
        assert (info.id, info.owner, info.read_only, info.turns) == (cid, SHARED_OWNER, True, 1)
        assert store.turns(cid, owner=who)[0].turn.text == "Hi, my name is Alice"
        assert store.get_artifact(cid, "method:dsm", owner=who) == b"\x01\x02"
    assert store.list_conversations(owner=ALICE, include_shared=False) == []
    writes = [lambda: store.add_turns(cid, [(Turn("user", "x"), None)], owner=ALICE)[0],
              lambda: store.put_artifact(cid, "k", b"", owner=ALICE),
              lambda: store.update_conversation(cid, title="mine", owner=ALICE),
              lambda: store.delete_conversation(cid, owner=ALICE)]
    for write in writes:  # writable by no one
        with pytest.raises(ReadOnlyConversation):
            write()
    copy = store.copy_conversation(cid, owner=ALICE)
    assert store.get_artifact(copy, "method:dsm", owner=ALICE) == b"\x01\x02"
    store.add_turns(copy, [(Turn("assistant", "Hello Alice"), None)], owner=ALICE)
    assert [t.turn.text for t in store.turns(copy, owner=ALICE)] == ["Hi, my name is Alice", "Hello Alice"]
    assert len(store.turns(cid, owner=BOB)) == 1  # the original is unchanged
    with pytest.raises(KeyError):
        store.turns(copy, owner=BOB)
    Store(path)  # opening again migrates nothing twice
    assert store.integrity_check() == "ok"


def test_turn_windows(db_url):
    store = Store(db_url)
    cid = store.create_conversation(owner=ALICE)
    for i in range(7):
        store.add_turns(cid, [(Turn("user", f"t{i}"), None)], owner=ALICE)
    window = store.turns(cid, owner=ALICE, start=2, limit=3)
    assert [(s.index, s.turn.text) for s in window] == [(2, "t2"), (3, "t3"), (4, "t4")]
    assert [s.index for s in store.turns(cid, owner=ALICE, start=5)] == [5, 6]
    assert len(store.turns(cid, owner=ALICE)) == 7


def test_core_refuses_an_oversized_user_turn(db_url):
    store = Store(db_url)
    cid = store.create_conversation(owner=ALICE)
    with pytest.raises(InvalidMessage, match=f"limit is {MAX_MESSAGE_CHARS:,}"):
        store.add_turns(cid, [(Turn("user", "x" * (MAX_MESSAGE_CHARS + 1)), None)], owner=ALICE)
    assert len(store.turns(cid, owner=ALICE)) == 0


def test_checks_are_stored_with_turns_merged_and_copied(two_owners):
    """A reply's judgement (checks) round-trips on both back-ends: stored by put_checks, merged
    (other keys kept), carried by a copy; Bob's forged checks never land."""
    store, cid = two_owners
    nli = {"nli": {"probs": {"entailment": 0.7, "neutral": 0.2, "contradiction": 0.1}, "model": "m"}}
    store.add_turns(cid, [(Turn("user", "And now?"), None), (Turn("assistant", "Still Alice."), Reply("Still Alice.", "base", "m"))],
                    owner=ALICE)
    assert [t.checks for t in store.turns(cid, owner=ALICE)] == [{}, {}, {}, {}]
    store.put_checks(cid, {3: nli}, owner=ALICE)
    assert [t.checks for t in store.turns(cid, owner=ALICE)] == [{}, {}, {}, nli]
    store.put_checks(cid, {1: nli, 3: {"other": 1}}, owner=ALICE)
    assert [t.checks for t in store.turns(cid, owner=ALICE)] == [{}, nli, {}, {**nli, "other": 1}]
    copy = store.copy_conversation(cid, owner=ALICE)
    assert [t.checks for t in store.turns(copy, owner=ALICE)] == [t.checks for t in store.turns(cid, owner=ALICE)]
    with pytest.raises(KeyError):
        store.put_checks(cid, {1: {"nli": {"forged": True}}}, owner=BOB)
    assert store.turns(cid, owner=ALICE)[1].checks == nli
