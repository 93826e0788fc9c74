"""SQLite persistence (WAL): conversations, turns with each reply's method, evidence, trace and
timings, per-conversation artifacts (a method's saved memory, e.g. the D-SMART graph), and each
owner's non-secret settings.

Owners keep users apart. Every conversation belongs to one owner (an opaque id: a browser
session's random id, a named workspace, a signed-in account). Every call that reads, lists, writes
or deletes user data takes `owner=` (keyword-only, no default), and every query filters on it:

- an owner sees its own conversations plus the read-only `SHARED_OWNER` ("shared/demo") ones;
- a conversation the owner cannot see raises `KeyError` exactly as a missing one does, so guessing
  an id (from a URL, say) reveals nothing;
- writing to a shared conversation raises `ReadOnlyConversation`; `copy_conversation` gives the
  owner a private copy to continue.

Tables added later (annotations, runs) follow the same rule: an owner column, filtered in SQL.

One short-lived connection per operation, so a Store is safe to share between Streamlit threads.
The schema is versioned with PRAGMA user_version; each migration runs in one transaction together
with its version bump, so a process killed mid-migration leaves the old schema intact.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from core.dialogue import Dialogue, Reply, Turn
from core.limits import check_message_length

SHARED_OWNER = "shared/demo"  # rows that predate owners; everyone may read them, nobody may change them
MAX_OWNER_CHARS = 200

MIGRATIONS: list[str] = [
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        method TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE turns (
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        turn_id TEXT NOT NULL,
        session INTEGER NOT NULL DEFAULT 0,
        speaker TEXT NOT NULL DEFAULT '',
        date TEXT NOT NULL DEFAULT '',
        reply TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (conversation_id, idx)
    );
    CREATE TABLE artifacts (
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        data BLOB NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (conversation_id, kind)
    );
    """,
    # Owners. Conversations stored before this version go to the read-only shared/demo owner.
    f"""
    ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT '{SHARED_OWNER}';
    CREATE INDEX conversations_by_owner ON conversations(owner, updated_at);
    CREATE TABLE owner_settings (
        owner TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    """,
]


class ReadOnlyConversation(PermissionError):
    """A write to a conversation the owner may read but not change (the shared demo ones)."""


@dataclass(frozen=True)
class ConversationInfo:
    id: str
    title: str
    method: str
    created_at: float
    updated_at: float
    turns: int
    owner: str = ""

    @property
    def read_only(self) -> bool:
        return self.owner == SHARED_OWNER


@dataclass(frozen=True)
class StoredTurn:
    index: int
    turn: Turn
    reply: Reply | None  # set for assistant turns produced by a method


def check_owner(owner: str) -> str:
    if not isinstance(owner, str) or not owner.strip() or len(owner) > MAX_OWNER_CHARS:
        raise ValueError(f"an owner id is a non-empty string of at most {MAX_OWNER_CHARS} characters, not {owner!r}")
    return owner


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")  # one process migrates at a time
            version = db.execute("PRAGMA user_version").fetchone()[0]
            for i, script in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in _statements(script):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={i}")
            db.execute("COMMIT")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.execute("PRAGMA foreign_keys=ON")
            # WAL + NORMAL: a commit is durable when the app process dies (SIGKILL, OOM: the WAL is
            # in the OS), and the file is never corrupt; only a power cut or kernel crash may lose
            # the last commits. FULL would fsync every commit (~30 ms each on a busy disk).
            db.execute("PRAGMA synchronous=NORMAL")
            with db:  # commit on success, roll back on error
                yield db

    def _check(self, db: sqlite3.Connection, cid: str, owner: str, write: bool) -> str:
        """The conversation's owner if `owner` may read (or, with `write`, change) it; KeyError as
        for a missing id otherwise."""
        check_owner(owner)
        row = db.execute("SELECT owner FROM conversations WHERE id=? AND owner IN (?, ?)", (cid, owner, SHARED_OWNER)).fetchone()
        if row is None:
            raise KeyError(f"no conversation {cid!r}")
        if write and row[0] != owner:
            raise ReadOnlyConversation(f"conversation {cid!r} is a shared demo: read-only (make your own copy to continue it)")
        return row[0]

    # -- conversations -----------------------------------------------------------------------
    def create_conversation(self, title: str = "New conversation", method: str = "", meta: dict | None = None, *,
                            owner: str) -> str:
        if check_owner(owner) == SHARED_OWNER:
            raise ReadOnlyConversation("the shared demo owner is read-only")
        cid = uuid.uuid4().hex[:12]
        now = time.time()
        with self._connect() as db:
            db.execute(
                "INSERT INTO conversations (id, title, method, meta, created_at, updated_at, owner) VALUES (?,?,?,?,?,?,?)",
                (cid, title, method, json.dumps(meta or {}), now, now, owner),
            )
        return cid

    def list_conversations(self, *, owner: str, include_shared: bool = True) -> list[ConversationInfo]:
        """The owner's conversations (and the shared demo ones), most recently updated first."""
        check_owner(owner)
        visible = (owner, SHARED_OWNER if include_shared else owner)
        with self._connect() as db:
            rows = db.execute(
                """SELECT c.id, c.title, c.method, c.created_at, c.updated_at,
                          (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id), c.owner
                   FROM conversations c WHERE c.owner IN (?, ?) ORDER BY c.updated_at DESC""",
                visible,
            ).fetchall()
        return [ConversationInfo(*r) for r in rows]

    def conversation(self, cid: str, *, owner: str) -> ConversationInfo:
        with self._connect() as db:
            self._check(db, cid, owner, write=False)
            row = db.execute(
                """SELECT c.id, c.title, c.method, c.created_at, c.updated_at,
                          (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id), c.owner
                   FROM conversations c WHERE c.id=?""", (cid,)).fetchone()
        return ConversationInfo(*row)

    def update_conversation(self, cid: str, *, owner: str, title: str | None = None, method: str | None = None) -> None:
        with self._connect() as db:
            self._check(db, cid, owner, write=True)
            if title is not None:
                db.execute("UPDATE conversations SET title=? WHERE id=? AND owner=?", (title, cid, owner))
            if method is not None:
                db.execute("UPDATE conversations SET method=? WHERE id=? AND owner=?", (method, cid, owner))

    def delete_conversation(self, cid: str, *, owner: str) -> None:
        with self._connect() as db:
            self._check(db, cid, owner, write=True)
            db.execute("DELETE FROM conversations WHERE id=? AND owner=?", (cid, owner))

    def copy_conversation(self, cid: str, *, owner: str, title: str | None = None) -> str:
        """A private copy (turns and artifacts) of a conversation the owner can read: how a user
        continues a shared demo conversation."""
        if check_owner(owner) == SHARED_OWNER:
            raise ReadOnlyConversation("the shared demo owner is read-only")
        new = uuid.uuid4().hex[:12]
        now = time.time()
        with self._connect() as db:
            self._check(db, cid, owner, write=False)
            db.execute(
                """INSERT INTO conversations (id, title, method, meta, created_at, updated_at, owner)
                   SELECT ?, COALESCE(?, title), method, meta, ?, ?, ? FROM conversations WHERE id=?""",
                (new, title, now, now, owner, cid),
            )
            db.execute(
                """INSERT INTO turns (conversation_id, idx, role, text, turn_id, session, speaker, date, reply, created_at)
                   SELECT ?, idx, role, text, turn_id, session, speaker, date, reply, created_at FROM turns
                   WHERE conversation_id=?""", (new, cid))
            db.execute(
                """INSERT INTO artifacts (conversation_id, kind, data, updated_at)
                   SELECT ?, kind, data, updated_at FROM artifacts WHERE conversation_id=?""", (new, cid))
        return new

    # -- turns -------------------------------------------------------------------------------
    def add_turn(self, cid: str, turn: Turn, reply: Reply | None = None, *, owner: str) -> int:
        if turn.role == "user":
            check_message_length(turn.text)  # the page checks first; this guards every other caller
        now = time.time()
        with self._connect() as db:
            self._check(db, cid, owner, write=True)
            idx = db.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE conversation_id=?", (cid,)).fetchone()[0]
            db.execute(
                """INSERT INTO turns (conversation_id, idx, role, text, turn_id, session, speaker, date, reply, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?)""",
                (
                    cid, idx, turn.role, turn.text, turn.turn_id or f"S{turn.session}:{idx}", turn.session,
                    turn.speaker, turn.date, json.dumps(reply.to_dict()) if reply else None, now,
                ),
            )
            db.execute("UPDATE conversations SET updated_at=? WHERE id=?", (now, cid))
        return idx

    def count_turns(self, cid: str, *, owner: str) -> int:
        with self._connect() as db:
            self._check(db, cid, owner, write=False)
            return db.execute("SELECT COUNT(*) FROM turns WHERE conversation_id=?", (cid,)).fetchone()[0]

    def turns(self, cid: str, *, owner: str, start: int = 0, limit: int | None = None) -> list[StoredTurn]:
        """Turns in order; `start`/`limit` select a window (pages show long conversations in windows)."""
        with self._connect() as db:
            self._check(db, cid, owner, write=False)
            rows = db.execute(
                """SELECT idx, role, text, turn_id, session, speaker, date, reply FROM turns
                   WHERE conversation_id=? ORDER BY idx LIMIT ? OFFSET ?""",
                (cid, -1 if limit is None else limit, max(0, start)),
            ).fetchall()
        return [
            StoredTurn(idx, Turn(role, text, turn_id, session, speaker, date), Reply.from_dict(json.loads(reply)) if reply else None)
            for idx, role, text, turn_id, session, speaker, date, reply in rows
        ]

    def dialogue(self, cid: str, *, owner: str) -> Dialogue:
        return Dialogue.from_turns([s.turn for s in self.turns(cid, owner=owner)], id=cid)

    # -- artifacts (a method's saved memory) --------------------------------------------------
    def put_artifact(self, cid: str, kind: str, data: bytes, *, owner: str) -> None:
        with self._connect() as db:
            self._check(db, cid, owner, write=True)
            db.execute(
                "INSERT OR REPLACE INTO artifacts (conversation_id, kind, data, updated_at) VALUES (?,?,?,?)",
                (cid, kind, data, time.time()),
            )

    def get_artifact(self, cid: str, kind: str, *, owner: str) -> bytes | None:
        with self._connect() as db:
            self._check(db, cid, owner, write=False)
            row = db.execute("SELECT data FROM artifacts WHERE conversation_id=? AND kind=?", (cid, kind)).fetchone()
        return bytes(row[0]) if row else None

    # -- the owner's settings (never secrets: callers strip keys before saving) ----------------
    def get_settings(self, *, owner: str) -> dict:
        check_owner(owner)
        with self._connect() as db:
            row = db.execute("SELECT data FROM owner_settings WHERE owner=?", (owner,)).fetchone()
        return json.loads(row[0]) if row else {}

    def put_settings(self, settings: dict, *, owner: str) -> None:
        if check_owner(owner) == SHARED_OWNER:
            raise ReadOnlyConversation("the shared demo owner is read-only")
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO owner_settings (owner, data, updated_at) VALUES (?,?,?)",
                       (owner, json.dumps(settings, sort_keys=True), time.time()))

    # -- maintenance (no user data read) -------------------------------------------------------
    def integrity_check(self) -> str:
        """SQLite's PRAGMA integrity_check: "ok" for a sound file."""
        with self._connect() as db:
            return "; ".join(r[0] for r in db.execute("PRAGMA integrity_check").fetchall())


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
