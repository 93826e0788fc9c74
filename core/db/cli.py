"""`python -m core db migrate|copy|revision`: the database from the command line."""

from __future__ import annotations

import argparse
import json
import os

from core.db.engine import Database, DatabaseError

DB_VARIABLE = "WORKBENCH_DB"


def add_parser(sub) -> None:
    p = sub.add_parser("db", help="the workbench database: migrate it, copy it to another (SQLite -> PostgreSQL)")
    verbs = p.add_subparsers(dest="db_command", required=True)
    m = verbs.add_parser("migrate", help="migrate to the newest schema (what the app does on start)")
    m.add_argument("--db", default=None, help=f"file path, sqlite:///path or postgresql://user@host/db (default: ${DB_VARIABLE})")
    m.set_defaults(func=_migrate)
    r = verbs.add_parser("revision", help="print the database's schema revision and this code's newest")
    r.add_argument("--db", default=None, help=f"as for migrate (default: ${DB_VARIABLE})")
    r.set_defaults(func=_revision)
    c = verbs.add_parser("copy", help="copy every table into an empty database, counting rows on both sides")
    c.add_argument("--from", dest="source", required=True, help="e.g. sqlite:///.workbench/workbench.sqlite3 or a path")
    c.add_argument("--to", dest="target", required=True, help="e.g. postgresql://workbench@db-host/workbench")
    c.set_defaults(func=_copy)


def _target(args) -> Database:
    given = args.db or os.environ.get(DB_VARIABLE)
    if not given:
        raise DatabaseError(f"give --db or set {DB_VARIABLE}")
    return Database(given)


def _migrate(args) -> int:
    from core.db.migrate import upgrade

    db = _target(args)
    db.ping()
    before, after = upgrade(db)
    print(json.dumps({"database": str(db), "before": before, "after": after}))
    return 0


def _revision(args) -> int:
    from core.db.migrate import head, revision

    db = _target(args)
    print(json.dumps({"database": str(db), "revision": revision(db), "head": head()}))
    return 0


def _copy(args) -> int:
    from core.db.copy import copy_database

    source, target = Database(args.source), Database(args.target)
    source.ping()
    target.ping()
    report = copy_database(source, target)
    print(json.dumps({"from": str(source), "to": str(target), **report}, indent=1))
    return 0 if report["match"] else 1


