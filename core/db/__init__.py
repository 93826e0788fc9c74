"""The database both stores use: SQLite (embedded default) or PostgreSQL, over SQLAlchemy 2 Core,
migrated with Alembic. See core/db/engine.py."""

from core.db.engine import Database, DatabaseError, DatabaseUnavailable, SchemaTooNew, normalize_url, shown

__all__ = ["Database", "DatabaseError", "DatabaseUnavailable", "SchemaTooNew", "normalize_url", "shown"]
