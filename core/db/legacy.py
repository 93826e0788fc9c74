"""Bring an SQLite file written before Alembic (issue 30) to the baseline revision.

Before, core/store.py versioned its tables with PRAGMA user_version (1: conversations, turns,
artifacts; 2: owners and owner_settings) and core/annotation/store.py its own with the table
`annotation_schema` (1: tasks, items, labels, history, adjudications). Those scripts are kept here
verbatim: a file at any of those versions is first finished with them, in the same transaction,
then stamped with Alembic's baseline revision 0001, whose tables are the same. A file at a version
this code does not know is refused, never changed.
"""

from __future__ import annotations

from sqlalchemy import Connection, inspect

from core.db.engine import SchemaTooNew

SHARED_OWNER = "shared/demo"  # as in core/store.py: rows from before owners are everyone's read-only demo

STORE_SCRIPTS: list[str] = [
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

# a label's fields, in the current labels and in their history alike (the old code's text, byte for byte)
_LABEL_FIELDS = """\
        item_id TEXT NOT NULL,
        annotator TEXT NOT NULL COLLATE NOCASE,
        label TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '[]',
        not_claim INTEGER NOT NULL DEFAULT 0,
        comment TEXT NOT NULL DEFAULT '',
        item_version INTEGER NOT NULL,
        created_at REAL NOT NULL"""

ANNOTATION_SCRIPTS: list[str] = [
    """
    CREATE TABLE annotation_tasks (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        name TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        adjudication INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        UNIQUE (owner, name)
    );
    CREATE TABLE annotation_items (
        task_id TEXT NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        version INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (task_id, item_id)
    );
    CREATE UNIQUE INDEX annotation_items_order ON annotation_items(task_id, position);
    CREATE TABLE annotation_labels (
        task_id TEXT NOT NULL,
""" + _LABEL_FIELDS + """,
        PRIMARY KEY (task_id, item_id, annotator),
        FOREIGN KEY (task_id, item_id) REFERENCES annotation_items(task_id, item_id) ON DELETE CASCADE
    );
    CREATE INDEX annotation_labels_by_annotator ON annotation_labels(task_id, annotator);
    CREATE TABLE annotation_label_history (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
""" + _LABEL_FIELDS + """,
        via TEXT NOT NULL DEFAULT 'page'
    );
    CREATE INDEX annotation_history_by_item ON annotation_label_history(task_id, item_id, annotator);
    CREATE TABLE annotation_adjudications (
        task_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        label TEXT NOT NULL,
        lead TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (task_id, item_id),
        FOREIGN KEY (task_id, item_id) REFERENCES annotation_items(task_id, item_id) ON DELETE CASCADE
    );
    """,
]


def _run(conn: Connection, script: str) -> None:
    for statement in (s.strip() for s in script.split(";")):
        if statement:
            conn.exec_driver_sql(statement)


def is_legacy(conn: Connection) -> bool:
    """An SQLite file with tables of the old code and no Alembic version."""
    tables = set(inspect(conn).get_table_names())
    return "alembic_version" not in tables and bool(tables & {"conversations", "annotation_schema"})


def finish_legacy(conn: Connection) -> None:
    """Run the old migrations a legacy file still lacks (both sets), inside the caller's transaction."""
    tables = set(inspect(conn).get_table_names())
    version = conn.exec_driver_sql("PRAGMA user_version").scalar() or 0
    if "conversations" not in tables:
        version = 0  # an annotation-only file: the old Store never opened it
    if version > len(STORE_SCRIPTS):
        raise SchemaTooNew(f"the database's conversation tables are at version {version}, newer than this code "
                           f"knows ({len(STORE_SCRIPTS)}): upgrade the code; nothing was changed")
    for script in STORE_SCRIPTS[version:]:
        _run(conn, script)
    annotation = 0
    if "annotation_schema" in tables:
        annotation = conn.exec_driver_sql("SELECT version FROM annotation_schema").scalar() or 0
    if annotation > len(ANNOTATION_SCRIPTS):
        raise SchemaTooNew(f"the database's annotation tables are at version {annotation}, newer than this code "
                           f"knows ({len(ANNOTATION_SCRIPTS)}): upgrade the code; nothing was changed")
    for script in ANNOTATION_SCRIPTS[annotation:]:
        _run(conn, script)
    conn.exec_driver_sql(f"PRAGMA user_version={len(STORE_SCRIPTS)}")  # what old code reads, were it run again
    # annotation_schema stays at its version 1: Alembic's alembic_version table versions the file from now on
