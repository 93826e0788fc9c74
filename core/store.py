"""SQLite persistence (WAL): conversations, turns with each reply's method, evidence, trace and
timings, and per-conversation artifacts (a method's saved memory, e.g. the D-SMART graph).

One short-lived connection per operation, so a Store is safe to share between Streamlit threads.
The schema is versioned with PRAGMA user_version; later features append migrations.
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
]


@dataclass(frozen=True)
class ConversationInfo:
    id: str
    title: str
    method: str
    created_at: float
    updated_at: float
    turns: int


@dataclass(frozen=True)
class StoredTurn:
    index: int
    turn: Turn
    reply: Reply | None  # set for assistant turns produced by a method


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            for i, script in enumerate(MIGRATIONS[version:], start=version + 1):
                db.executescript(script)
                db.execute(f"PRAGMA user_version={i}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.execute("PRAGMA foreign_keys=ON")
            with db:  # commit on success, roll back on error
                yield db

    # -- conversations -----------------------------------------------------------------------
    def create_conversation(self, title: str = "New conversation", method: str = "", meta: dict | None = None) -> str:
        cid = uuid.uuid4().hex[:12]
        now = time.time()
        with self._connect() as db:
            db.execute(
                "INSERT INTO conversations (id, title, method, meta, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                (cid, title, method, json.dumps(meta or {}), now, now),
            )
        return cid

    def list_conversations(self) -> list[ConversationInfo]:
        with self._connect() as db:
            rows = db.execute(
                """SELECT c.id, c.title, c.method, c.created_at, c.updated_at, COUNT(t.idx)
                   FROM conversations c LEFT JOIN turns t ON t.conversation_id = c.id
                   GROUP BY c.id ORDER BY c.updated_at DESC"""
            ).fetchall()
        return [ConversationInfo(*r) for r in rows]

    def conversation(self, cid: str) -> ConversationInfo:
        for info in self.list_conversations():
            if info.id == cid:
                return info
        raise KeyError(f"no conversation {cid!r}")

    def update_conversation(self, cid: str, *, title: str | None = None, method: str | None = None) -> None:
        with self._connect() as db:
            if title is not None:
                db.execute("UPDATE conversations SET title=? WHERE id=?", (title, cid))
            if method is not None:
                db.execute("UPDATE conversations SET method=? WHERE id=?", (method, cid))

    def delete_conversation(self, cid: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM conversations WHERE id=?", (cid,))

    # -- turns -------------------------------------------------------------------------------
    def add_turn(self, cid: str, turn: Turn, reply: Reply | None = None) -> int:
        now = time.time()
        with self._connect() as db:
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

    def turns(self, cid: str) -> list[StoredTurn]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT idx, role, text, turn_id, session, speaker, date, reply FROM turns WHERE conversation_id=? ORDER BY idx",
                (cid,),
            ).fetchall()
        return [
            StoredTurn(idx, Turn(role, text, turn_id, session, speaker, date), Reply.from_dict(json.loads(reply)) if reply else None)
            for idx, role, text, turn_id, session, speaker, date, reply in rows
        ]

    def dialogue(self, cid: str) -> Dialogue:
        return Dialogue.from_turns([s.turn for s in self.turns(cid)], id=cid)

    # -- artifacts (a method's saved memory) --------------------------------------------------
    def put_artifact(self, cid: str, kind: str, data: bytes) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO artifacts (conversation_id, kind, data, updated_at) VALUES (?,?,?,?)",
                (cid, kind, data, time.time()),
            )

    def get_artifact(self, cid: str, kind: str) -> bytes | None:
        with self._connect() as db:
            row = db.execute("SELECT data FROM artifacts WHERE conversation_id=? AND kind=?", (cid, kind)).fetchone()
        return bytes(row[0]) if row else None
