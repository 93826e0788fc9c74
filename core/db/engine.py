"""One database behind both stores: SQLite (a file, the embedded default) or PostgreSQL (a server
shared by several app replicas), through SQLAlchemy 2 Core.

`Database(target)` takes a file path, an `sqlite:///...` URL or a `postgresql://...` URL. Every
operation runs as one transaction in `read(fn)` / `write(fn)`; a transaction that fails for a
reason that goes away by itself (a serialization failure or deadlock, a server restarting, a
dropped connection, SQLite's busy lock) is run again from the start, with backoff, for up to
`retry_s` seconds. So `fn` must only read and write the database (no side effects outside it).

Nothing here reads the environment: the app and the command line pass the URL in.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError

T = TypeVar("T")

# PostgreSQL SQLSTATEs worth a new attempt: serialization failure, deadlock, the server shutting
# down or starting up (a restart), connection failures.
_RETRY_SQLSTATES = {"40001", "40P01", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"}


class DatabaseError(RuntimeError):
    """The database cannot be used: a malformed or unsupported URL, or a server that does not answer."""


class DatabaseUnavailable(DatabaseError):
    """The server did not answer (or kept failing) for the whole retry window."""


class SchemaTooNew(DatabaseError):
    """The database was migrated by newer code than this: refused, never overwritten."""


def normalize_url(target: str | Path) -> URL:
    """A file path or URL as the SQLAlchemy URL this code drives (psycopg 3 for PostgreSQL)."""
    text = str(target).strip()
    if not text:
        raise DatabaseError("empty database location: give a file path, sqlite:///path or postgresql://user@host/db")
    if "://" not in text and not text.startswith("sqlite:"):
        return URL.create("sqlite", database=str(Path(text).expanduser().resolve()))
    try:
        url = make_url(text)
    except ArgumentError as err:
        raise DatabaseError(f"not a database URL: {text!r} ({err})") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise DatabaseError(f"{text!r} names no database file (an in-memory database would be lost): use sqlite:///path")
        return url
    if backend in ("postgresql", "postgres"):
        return url.set(drivername="postgresql+psycopg")
    raise DatabaseError(f"unsupported database {backend!r} in {url.render_as_string(hide_password=True)}: "
                        "use a file path, sqlite:///path or postgresql://user@host/db")


def shown(url: URL) -> str:
    """The URL for messages and logs, as the user writes it: never the password, no driver name."""
    return url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True)


def _sqlite_engine(url: URL) -> Engine:
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=4, max_overflow=8)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi, _record) -> None:
        dbapi.isolation_level = None  # we issue BEGIN ourselves (below), so transactions are real
        dbapi.execute("PRAGMA journal_mode=WAL")
        dbapi.execute("PRAGMA foreign_keys=ON")
        # WAL + NORMAL: a commit survives the app process dying (SIGKILL, OOM); only a power cut may
        # lose the last commits. FULL would fsync every commit.
        dbapi.execute("PRAGMA synchronous=NORMAL")
        # Freed space (an updated or deleted row, a page left after a rewrite) is overwritten with
        # zeros, so text a person asked to forget (core/forget.py) is not left in the file's free pages.
        dbapi.execute("PRAGMA secure_delete=ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A writer takes the write lock up front (waiting up to 30 s), so a read-then-write never
        # fails half-way with SQLITE_BUSY; readers share a snapshot.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

    return engine


def _postgres_engine(url: URL) -> Engine:
    # No pre-ping: it cost a round trip on every transaction (~15 per chat message). A connection
    # left from before a server restart fails on its first statement instead; SQLAlchemy flags that
    # as a disconnect and invalidates the pool, and `Database._run` retries the transaction, which
    # had done nothing yet. pool_size: the page threads of one busy replica (tens of sessions) keep
    # their connections instead of opening and closing overflow ones, each a TCP and auth handshake.
    return create_engine(url, pool_size=20, max_overflow=20, pool_recycle=1800,
                         connect_args={"connect_timeout": 5, "application_name": "dialogue-workbench"})


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(url: URL) -> Engine:
    """One engine (one connection pool) per database per process."""
    key = url.render_as_string(hide_password=False)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _sqlite_engine(url) if url.get_backend_name() == "sqlite" else _postgres_engine(url)
        return _ENGINES[key]


def retryable(err: DBAPIError) -> bool:
    if err.connection_invalidated:
        return True
    code = getattr(err.orig, "sqlstate", None)
    if code in _RETRY_SQLSTATES:
        return True
    if isinstance(err, OperationalError):
        message = str(err.orig).lower()
        # SQLite's lock timeout; psycopg's failure to connect (server down or restarting)
        return "database is locked" in message or "connection" in message or "server" in message
    return False


class Database:
    def __init__(self, target: str | Path, retry_s: float = 30.0) -> None:
        self.url = normalize_url(target)
        self.engine = engine_for(self.url)
        self.retry_s = retry_s

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name  # "sqlite" | "postgresql"

    @property
    def path(self) -> Path | None:
        """The file, for SQLite; None for a server."""
        return Path(self.url.database) if self.dialect == "sqlite" and self.url.database else None

    def __str__(self) -> str:
        return shown(self.url)

    def read(self, fn: Callable[[Connection], T]) -> T:
        return self._run(fn, write=False)

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self._run(fn, write=True)

    def _run(self, fn: Callable[[Connection], T], write: bool) -> T:
        deadline = time.monotonic() + self.retry_s
        for attempt in range(1_000):
            try:
                with self.engine.connect().execution_options(write=write) as conn, conn.begin():
                    return fn(conn)
            except DBAPIError as err:
                if not retryable(err):
                    raise
                if time.monotonic() >= deadline:
                    raise DatabaseUnavailable(f"the database {self} did not answer for {self.retry_s:g} s: "
                                              f"{str(err.orig).strip().splitlines()[0]}") from err
                # short waits: a restarted server answers ~1 s after it went down, and a page that
                # slept 2 s past that shows it; a retry against a down server costs one refused connect
                time.sleep(min(0.25, 0.05 * 2 ** attempt) * random.uniform(0.5, 1.0))
        raise AssertionError("unreachable")

    def scrub(self, tables: Sequence[str], timeout_s: float = 60.0) -> list[str]:
        """After rows were overwritten (a forget): leave no old copy of them in the files. SQLite
        (secure_delete is on, so freed space is already zeros in the pages) has the old pages in its
        WAL until a checkpoint: checkpoint and TRUNCATE the WAL, retried while readers hold it.
        PostgreSQL keeps an updated row's old version as a dead tuple; plain VACUUM only marks it
        reusable, VACUUM FULL rewrites each table (and its TOAST table) without it. What was done, in words."""
        done = []
        if self.dialect == "sqlite":
            deadline = time.monotonic() + timeout_s
            while True:
                busy, _log, _moved = self._sqlite_outside_transaction("PRAGMA wal_checkpoint(TRUNCATE)")
                if not busy:
                    return done + ["wal checkpointed and truncated"]
                if time.monotonic() >= deadline:
                    raise DatabaseUnavailable(f"the WAL of {self} stayed in use for {timeout_s:g} s: not truncated")
                time.sleep(0.1)
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in tables:  # names from core.db.schema, never from a user
                conn.exec_driver_sql(f"VACUUM (FULL) {table}")
                done.append(f"vacuum full {table}")
        return done

    def vacuum(self) -> None:
        """SQLite: rewrite the whole file, so no free page is left holding old text (a file written
        before secure_delete was on); the caller truncates the WAL after it (`scrub`)."""
        self._sqlite_outside_transaction("VACUUM")

    def _sqlite_outside_transaction(self, sql: str) -> tuple:
        """One statement on a pooled SQLite connection in autocommit (its isolation_level is None:
        no BEGIN from the engine's listener), as VACUUM and a full checkpoint need."""
        raw = self.engine.raw_connection()
        try:
            return tuple(raw.driver_connection.execute(sql).fetchone() or ())
        finally:
            raw.close()

    def ping(self, timeout_s: float = 5.0) -> None:
        """Connect once (no retries beyond `timeout_s`): DatabaseUnavailable with the reason otherwise."""
        saved, self.retry_s = self.retry_s, timeout_s
        try:
            self.read(lambda c: c.exec_driver_sql("SELECT 1").scalar())
        except DatabaseUnavailable:
            raise
        except DBAPIError as err:
            raise DatabaseUnavailable(f"the database {self} cannot be used: {str(err.orig).strip().splitlines()[0]}") from err
        finally:
            self.retry_s = saved
