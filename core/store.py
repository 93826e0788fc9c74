"""Persistence over SQLAlchemy Core (SQLite by default, PostgreSQL for several replicas; core/db): conversations, turns with each reply's method, evidence, trace and
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

Each operation is one transaction on a pooled connection (retried whole on a serialization failure
or a database restart, core/db/engine.py), so a Store is safe to share between Streamlit threads and
between processes. The schema is migrated with Alembic (core/db/migrate.py) in one transaction, so a
process killed mid-migration leaves the old schema intact.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from sqlalchemy import Connection, Text, delete, func, insert, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.db import Database
from core.db.migrate import ensure_schema
from core.db.schema import artifacts as A
from core.db.schema import conversations as C
from core.db.schema import forget_audit as F
from core.db.schema import owner_settings as S
from core.db.schema import turns as T
from core.dialogue import Dialogue, Reply, Turn
from core.limits import check_message_length

R = TypeVar("R")
SHARED_OWNER = "shared/demo"  # rows that predate owners; everyone may read them, nobody may change them
MAX_OWNER_CHARS = 200


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
    checks: dict = field(default_factory=dict)  # what the app judged about it, e.g. {"nli": {...}}


STORED_DIGITS = 3  # significant digits of a float in a stored reply's JSON


def _short_floats(value):
    if isinstance(value, float):
        return float(f"{value:.{STORED_DIGITS}g}")
    if isinstance(value, dict):
        return {k: _short_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_short_floats(v) for v in value]
    return value


def stored_json(value) -> str:
    """JSON for a stored reply, its floats (timings, evidence scores, trace values) kept to
    STORED_DIGITS significant digits: enough for the pages that show them, and no run of four
    digits a forgotten number (a door code) could match by chance in the file's bytes
    (0.39628154471761656 held "4471"; 0.396 cannot hold a code that does not start with 0).
    A turn's checks keep their NLI probabilities exact (read back as the judgement itself)."""
    return json.dumps(_short_floats(value))


def check_owner(owner: str) -> str:
    if not isinstance(owner, str) or not owner.strip() or len(owner) > MAX_OWNER_CHARS:
        raise ValueError(f"an owner id is a non-empty string of at most {MAX_OWNER_CHARS} characters, not {owner!r}")
    return owner


def _exists(conn: Connection, cid: str) -> bool:
    return conn.execute(select(C.c.id).where(C.c.id == cid)).first() is not None


def _upsert(conn: Connection, table, values: dict, keys: list[str]):
    """INSERT ... ON CONFLICT (keys) DO UPDATE: one statement, atomic on both back-ends."""
    insert = sqlite_insert if conn.dialect.name == "sqlite" else pg_insert
    stmt = insert(table).values(**values)
    return stmt.on_conflict_do_update(index_elements=keys, set_={k: stmt.excluded[k] for k in values if k not in keys})


_INFO_COLUMNS = (C.c.id, C.c.title, C.c.method, C.c.created_at, C.c.updated_at,
                 select(func.count()).where(T.c.conversation_id == C.c.id).scalar_subquery(), C.c.owner)


class Store:
    """`target`: an SQLite file path (the embedded default), `sqlite:///path` or `postgresql://user@host/db`.
    The schema is migrated on open (core.db.migrate); a schema newer than the code raises SchemaTooNew."""

    def __init__(self, target: str | Path, retry_s: float = 30.0) -> None:
        self.db = Database(target, retry_s=retry_s)
        self.path = self.db.path  # the SQLite file; None for a server
        self.url = self.db.url
        ensure_schema(self.db)

    def _check(self, conn: Connection, cid: str, owner: str, write: bool) -> str:
        """The conversation's owner if `owner` may read (or, with `write`, change) it; KeyError as
        for a missing id otherwise. A writer locks the row (PostgreSQL), so writers to one
        conversation take turns instead of racing for the next turn index."""
        check_owner(owner)
        query = select(C.c.owner).where(C.c.id == cid, C.c.owner.in_((owner, SHARED_OWNER)))
        row = conn.execute(query.with_for_update() if write else query).first()
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

        def run(c: Connection) -> None:
            if not _exists(c, cid):  # else: a retry after the commit went through (the id is this call's own)
                c.execute(insert(C).values(id=cid, title=title, method=method, meta=json.dumps(meta or {}),
                                           created_at=now, updated_at=now, owner=owner))

        self.db.write(run)
        return cid

    def list_conversations(self, *, owner: str, include_shared: bool = True) -> list[ConversationInfo]:
        """The owner's conversations (and the shared demo ones), most recently updated first."""
        check_owner(owner)
        visible = (owner, SHARED_OWNER if include_shared else owner)
        query = select(*_INFO_COLUMNS).where(C.c.owner.in_(visible)).order_by(C.c.updated_at.desc())
        return [ConversationInfo(*r) for r in self.db.read(lambda c: c.execute(query).all())]

    def conversation(self, cid: str, *, owner: str) -> ConversationInfo:
        def run(c: Connection):
            self._check(c, cid, owner, write=False)
            return c.execute(select(*_INFO_COLUMNS).where(C.c.id == cid)).one()

        return ConversationInfo(*self.db.read(run))

    def update_conversation(self, cid: str, *, owner: str, title: str | None = None, method: str | None = None) -> None:
        values = {k: v for k, v in (("title", title), ("method", method)) if v is not None}

        def run(c: Connection) -> None:
            self._check(c, cid, owner, write=True)
            if values:
                c.execute(update(C).where(C.c.id == cid, C.c.owner == owner).values(**values))

        self.db.write(run)

    def delete_conversation(self, cid: str, *, owner: str) -> None:
        attempts = []

        def run(c: Connection) -> None:
            attempts.append(1)
            if len(attempts) > 1 and not _exists(c, cid):
                return  # a retry after the first attempt's commit went through: deleted, as asked
            self._check(c, cid, owner, write=True)
            c.execute(delete(C).where(C.c.id == cid, C.c.owner == owner))

        self.db.write(run)

    def copy_conversation(self, cid: str, *, owner: str, title: str | None = None) -> str:
        """A private copy (turns and artifacts) of a conversation the owner can read: how a user
        continues a shared demo conversation."""
        if check_owner(owner) == SHARED_OWNER:
            raise ReadOnlyConversation("the shared demo owner is read-only")
        new = uuid.uuid4().hex[:12]
        now = time.time()
        turn_columns = ["idx", "role", "text", "turn_id", "session", "speaker", "date", "reply", "created_at", "checks"]

        def run(c: Connection) -> None:
            self._check(c, cid, owner, write=False)
            if _exists(c, new):
                return  # a retry after the commit went through: the copy (this call's own id) is made
            c.execute(insert(C).from_select(
                ["id", "title", "method", "meta", "created_at", "updated_at", "owner"],
                select(literal(new), func.coalesce(literal(title, Text), C.c.title), C.c.method, C.c.meta, literal(now),
                       literal(now), literal(owner)).where(C.c.id == cid)))
            c.execute(insert(T).from_select(["conversation_id", *turn_columns],
                                            select(literal(new), *(T.c[k] for k in turn_columns)).where(T.c.conversation_id == cid)))
            c.execute(insert(A).from_select(["conversation_id", "kind", "data", "updated_at"],
                                            select(literal(new), A.c.kind, A.c.data, A.c.updated_at).where(A.c.conversation_id == cid)))

        self.db.write(run)
        return new

    # -- turns -------------------------------------------------------------------------------
    def add_turns(self, cid: str, turns: list[tuple[Turn, Reply | None]], *, owner: str) -> list[int]:
        """Append turns (a user message and its reply) in one transaction: both are stored or
        neither. Exactly once: the write carries a key, so an attempt retried after its commit
        went through (the connection dropped before the acknowledgement) finds its rows."""
        for turn, _ in turns:
            if turn.role == "user":
                check_message_length(turn.text)  # the page checks first; this guards every other caller
        key = uuid.uuid4().hex

        def run(c: Connection) -> list[int]:
            self._check(c, cid, owner, write=True)
            done = c.execute(select(T.c.idx).where(T.c.conversation_id == cid, T.c.write_key.like(f"{key}:%"))
                             .order_by(T.c.idx)).scalars().all()
            if done:
                return list(done)
            start = c.execute(select(func.coalesce(func.max(T.c.idx) + 1, 0)).where(T.c.conversation_id == cid)).scalar()
            now = time.time()
            rows = [dict(conversation_id=cid, idx=start + k, role=turn.role, text=turn.text,
                         turn_id=turn.turn_id or f"S{turn.session}:{start + k}", session=turn.session, speaker=turn.speaker,
                         date=turn.date, reply=stored_json(reply.to_dict()) if reply else None, created_at=now,
                         write_key=f"{key}:{k}") for k, (turn, reply) in enumerate(turns)]
            c.execute(insert(T), rows)
            c.execute(update(C).where(C.c.id == cid).values(updated_at=now))
            return [r["idx"] for r in rows]

        return self.db.write(run)

    def turns(self, cid: str, *, owner: str, start: int = 0, limit: int | None = None) -> list[StoredTurn]:
        """Turns in order; `start`/`limit` select a window (pages show long conversations in windows)."""
        query = (select(T.c.idx, T.c.role, T.c.text, T.c.turn_id, T.c.session, T.c.speaker, T.c.date, T.c.reply, T.c.checks)
                 .where(T.c.conversation_id == cid).order_by(T.c.idx).offset(max(0, start)).limit(limit))

        def run(c: Connection):
            self._check(c, cid, owner, write=False)
            return c.execute(query).all()

        return [
            StoredTurn(idx, Turn(role, text, turn_id, session, speaker, date), Reply.from_dict(json.loads(reply)) if reply else None,
                       json.loads(checks) if checks else {})
            for idx, role, text, turn_id, session, speaker, date, reply, checks in self.db.read(run)
        ]

    def put_checks(self, cid: str, checks: dict[int, dict], *, owner: str) -> None:
        """Merge `checks` (turn index -> {name: judgement}) into the stored turns' checks: a
        judgement made once (the NLI consistency of a reply) is read back by every later page run,
        replica or tab instead of computed again. Readers may store them on a shared demo too: a
        judgement is derived from the turns, it changes none of them."""
        if not checks:
            return

        def run(c: Connection) -> None:
            self._check(c, cid, owner, write=False)
            rows = c.execute(select(T.c.idx, T.c.checks).where(T.c.conversation_id == cid, T.c.idx.in_(list(checks)))).all()
            for idx, old in rows:
                merged = {**(json.loads(old) if old else {}), **checks[idx]}
                c.execute(update(T).where(T.c.conversation_id == cid, T.c.idx == idx).values(checks=json.dumps(merged)))

        self.db.write(run)

    def dialogue(self, cid: str, *, owner: str) -> Dialogue:
        return Dialogue.from_turns([s.turn for s in self.turns(cid, owner=owner)], id=cid)

    # -- artifacts (a method's saved memory) --------------------------------------------------
    def put_artifact(self, cid: str, kind: str, data: bytes, *, owner: str) -> None:
        def run(c: Connection) -> None:
            self._check(c, cid, owner, write=True)
            c.execute(_upsert(c, A, dict(conversation_id=cid, kind=kind, data=data, updated_at=time.time()),
                              ["conversation_id", "kind"]))

        self.db.write(run)

    def get_artifact(self, cid: str, kind: str, *, owner: str) -> bytes | None:
        def run(c: Connection):
            self._check(c, cid, owner, write=False)
            return c.execute(select(A.c.data).where(A.c.conversation_id == cid, A.c.kind == kind)).scalar()

        data = self.db.read(run)
        return bytes(data) if data is not None else None

    def artifact_kinds(self, cid: str, *, owner: str) -> list[str]:
        def run(c: Connection):
            self._check(c, cid, owner, write=False)
            return c.execute(select(A.c.kind).where(A.c.conversation_id == cid).order_by(A.c.kind)).scalars().all()

        return list(self.db.read(run))

    # -- forgetting (core/forget.py) ----------------------------------------------------------
    def write_owned(self, cid: str, fn: Callable[[Connection], R], *, owner: str) -> R:
        """`fn(conn)` in one write transaction, after checking that `owner` may change `cid`
        (KeyError, ReadOnlyConversation otherwise): an operation over several tables, all or nothing."""
        def run(c: Connection) -> R:
            self._check(c, cid, owner, write=True)
            return fn(c)

        return self.db.write(run)

    def forget_epoch(self, cid: str, *, owner: str) -> int:
        """The number of the conversation's latest forget (0: none): a method instance built before
        it holds forgotten text and is rebuilt (core.conversation)."""
        query = select(func.coalesce(func.max(F.c.seq), 0)).where(F.c.conversation == cid)

        def run(c: Connection) -> int:
            self._check(c, cid, owner, write=False)
            return int(c.execute(query).scalar())

        return self.db.read(run)

    # -- the owner's settings (never secrets: callers strip keys before saving) ----------------
    def get_settings(self, *, owner: str) -> dict:
        check_owner(owner)
        data = self.db.read(lambda c: c.execute(select(S.c.data).where(S.c.owner == owner)).scalar())
        return json.loads(data) if data else {}

    def put_settings(self, settings: dict, *, owner: str) -> None:
        if check_owner(owner) == SHARED_OWNER:
            raise ReadOnlyConversation("the shared demo owner is read-only")
        values = dict(owner=owner, data=json.dumps(settings, sort_keys=True), updated_at=time.time())
        self.db.write(lambda c: c.execute(_upsert(c, S, values, ["owner"])))

    # -- maintenance (no user data read) -------------------------------------------------------
    def integrity_check(self) -> str:
        """SQLite's PRAGMA integrity_check: "ok" for a sound file. On PostgreSQL the server keeps
        its pages checksummed itself; this checks that it answers and every turn's conversation exists."""
        if self.db.dialect == "sqlite":
            return self.db.read(lambda c: "; ".join(r[0] for r in c.exec_driver_sql("PRAGMA integrity_check").all()))
        orphans = self.db.read(lambda c: c.execute(
            select(func.count()).select_from(T.outerjoin(C, C.c.id == T.c.conversation_id)).where(C.c.id.is_(None))).scalar())
        return "ok" if orphans == 0 else f"{orphans} turns without their conversation"
