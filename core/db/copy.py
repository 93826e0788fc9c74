"""Copy a whole workbench database to another (a lab moving from its SQLite file to PostgreSQL):
both are migrated to the newest schema, every table is copied in one transaction on the target
(foreign keys first), then rows are counted on both sides."""

from __future__ import annotations

from sqlalchemy import Connection, func, insert, select

from core.db.engine import Database, DatabaseError
from core.db.migrate import upgrade
from core.db.schema import COPY_ORDER, annotation_label_history

BATCH = 1000


def count_rows(db: Database) -> dict[str, int]:
    return db.read(lambda c: {t.name: c.execute(select(func.count()).select_from(t)).scalar() for t in COPY_ORDER})


def copy_database(source: Database, target: Database) -> dict:
    """{"source": counts, "target": counts, "copied": counts, "match": bool}. Refuses a target that
    already holds rows (copying twice would duplicate nothing, but mix two labs' data)."""
    upgrade(source)
    upgrade(target)
    if any(count_rows(target).values()):
        raise DatabaseError(f"the target {target} already holds rows: copy into an empty database")

    def run(dst: Connection) -> dict[str, int]:
        copied = {}
        with source.engine.connect() as src:
            for table in COPY_ORDER:
                result = src.execute(select(table).order_by(*table.primary_key.columns))
                copied[table.name] = 0
                while rows := result.fetchmany(BATCH):
                    dst.execute(insert(table), [dict(r._mapping) for r in rows])
                    copied[table.name] += len(rows)
        if dst.dialect.name == "postgresql":  # each history's serial continues after the copied numbers
            for history in (t.name for t in COPY_ORDER if "seq" in t.c):
                dst.exec_driver_sql(f"SELECT setval(pg_get_serial_sequence('{history}', 'seq'), "
                                    f"COALESCE((SELECT MAX(seq) FROM {history}), 0) + 1, false)")
        return copied

    copied = target.write(run)
    before, after = count_rows(source), count_rows(target)
    return {"source": before, "target": after, "copied": copied, "match": before == after == copied,
            "tables": [t.name for t in COPY_ORDER], "history_table": annotation_label_history.name}
