"""Schema migrations with Alembic (scripts in core/db/migrations/versions), run in one transaction
that also holds a lock, so two replicas starting at once migrate once and a process killed
mid-migration leaves the old schema whole (SQLite and PostgreSQL both have transactional DDL).

A database at a revision this code does not know (written by newer code) is refused with
SchemaTooNew before anything is touched. SQLite files from before Alembic are finished by
core.db.legacy and stamped with the baseline first.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from core.db import legacy
from core.db.engine import Database, SchemaTooNew

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_LOCK_ID = 7_303_030  # any constant: the advisory lock every migrating process takes on PostgreSQL


def _config(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = conn
    return cfg


@cache
def _script() -> ScriptDirectory:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(cfg)


def head() -> str:
    return _script().get_current_head()


def current_revision(conn: Connection) -> str | None:
    heads = MigrationContext.configure(conn).get_current_heads()
    return heads[0] if heads else None


def _refuse_newer(conn: Connection) -> None:
    known = {s.revision for s in _script().walk_revisions()}
    for revision in MigrationContext.configure(conn).get_current_heads():
        if revision not in known:
            raise SchemaTooNew(f"the database schema is at revision {revision!r}, which this code does not know "
                               f"(newest here: {head()!r}); it was written by a newer version: upgrade the code. "
                               "Nothing was changed.")


def revision(db: Database) -> str | None:
    """The database's current revision (None: empty, or an SQLite file from before Alembic)."""
    return db.read(current_revision)


def upgrade(db: Database) -> tuple[str | None, str]:
    """Migrate to the newest revision; (revision before, revision after)."""
    def run(conn: Connection) -> tuple[str | None, str]:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")  # released at commit
        _refuse_newer(conn)
        before = current_revision(conn)
        if before == head():
            return before, before
        cfg = _config(conn)
        if conn.dialect.name == "sqlite" and legacy.is_legacy(conn):
            legacy.finish_legacy(conn)
            command.stamp(cfg, "0001")
            before = "legacy"
        command.upgrade(cfg, "head")
        return before, current_revision(conn)

    return db.write(run)


def ensure_schema(db: Database) -> None:
    """What every store does on open: one read when the schema is current, else upgrade()."""
    def check(conn: Connection) -> str | None:
        _refuse_newer(conn)
        return current_revision(conn)

    if db.read(check) != head():
        upgrade(db)
