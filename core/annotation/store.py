"""Durable annotation tasks in SQLite (WAL), in the same database file as the conversations.

- Every task belongs to one owner (a browser's private id, a named workspace, a signed-in account;
  see core/store.py). Every call takes `owner=` and filters on it in SQL; another owner's task
  raises `KeyError` exactly as a missing one does, so no page lists, opens, exports or deletes it.
- Annotators are names within a task (no accounts). Each (item, annotator) has one current label;
  every label ever given is also appended to a history table, with the item's version at the time.
- Each label is committed the moment it is given (one short transaction), so a server killed with
  SIGKILL loses nothing that was acknowledged. Two annotators never touch the same row (the key is
  item + annotator), so working at once they cannot overwrite each other.
- An import is one transaction: a bad row anywhere leaves the task exactly as it was.

The tables have their own schema version (table `annotation_schema`), so they migrate independently
of core/store.py's PRAGMA user_version.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path

from core.annotation import formats
from core.annotation.model import (
    ADJUDICATED,
    DEFAULT_LIMITS,
    LABELS,
    Adjudication,
    AnnotationError,
    ImportBatch,
    ImportReport,
    Item,
    Label,
    Limits,
    TaskInfo,
    check_annotator,
    check_task_name,
    check_text,
    normalize_label,
)
from core.store import SHARED_OWNER, check_owner

VIEWS = ("all", "unlabelled", "labelled", "disagreements", *(f"label:{x}" for x in LABELS))

# a label's fields, in the current labels and in their history alike
_LABEL_FIELDS = """\
        item_id TEXT NOT NULL,
        annotator TEXT NOT NULL COLLATE NOCASE,
        label TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '[]',
        not_claim INTEGER NOT NULL DEFAULT 0,
        comment TEXT NOT NULL DEFAULT '',
        item_version INTEGER NOT NULL,
        created_at REAL NOT NULL"""

MIGRATIONS: list[str] = [
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

_LABEL_COLUMNS = "item_id, annotator, label, evidence, not_claim, comment, item_version, created_at"


def _label_row(row: tuple) -> Label:
    item_id, annotator, label, evidence, not_claim, comment, version, created = row
    return Label(item_id, annotator, label, tuple(json.loads(evidence)), bool(not_claim), comment, version, created)


class AnnotationStore:
    def __init__(self, path: str | Path, limits: Limits = DEFAULT_LIMITS) -> None:
        self.path = Path(path)
        self.limits = limits
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.execute("PRAGMA journal_mode=WAL")  # kept in the file: every later connection uses it
        with self._write() as db:  # one process migrates at a time; a killed migration rolls back whole
            db.execute("CREATE TABLE IF NOT EXISTS annotation_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM annotation_schema").fetchone()
            version = row[0] if row else 0
            if row is None:
                db.execute("INSERT INTO annotation_schema (version) VALUES (0)")
            for i, script in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in (s.strip() for s in script.split(";")):
                    if statement:
                        db.execute(statement)
                db.execute("UPDATE annotation_schema SET version=?", (i,))

    # -- connections ------------------------------------------------------------------------------
    # Opening an SQLite file costs milliseconds (schema, WAL index) and a fresh connection's first
    # commit far more than a warm one's, so a few connections are kept and lent out, one caller at a
    # time (check_same_thread=False is safe that way). Every operation still runs in its own
    # transaction, so the store is shared safely between Streamlit's threads.
    _POOL = 4

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA foreign_keys=ON")
        return db

    @contextmanager
    def _lend(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._idle.pop() if self._idle else None
        db = db or self._open()
        try:
            yield db
        except sqlite3.DatabaseError:
            db.close()  # a broken connection is not lent again
            raise
        with self._lock:
            if len(self._idle) < self._POOL:
                self._idle.append(db)
                return
        db.close()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lend() as db:
            db.execute("BEGIN")  # one consistent snapshot for the whole read
            try:
                yield db
            finally:
                db.execute("COMMIT")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: take the write lock up front (waiting up to 30 s for another writer), so a
        read-then-write never fails half-way with SQLITE_BUSY; commit on success, roll back on error."""
        with self._lend() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _task_row(self, db: sqlite3.Connection, task_id: str, owner: str) -> tuple:
        check_owner(owner)
        row = db.execute(
            """SELECT t.id, t.name, t.owner, (SELECT COUNT(*) FROM annotation_items i WHERE i.task_id = t.id),
                      t.adjudication, t.source, t.created_at, t.updated_at
               FROM annotation_tasks t WHERE t.id=? AND t.owner=?""", (task_id, owner)).fetchone()
        if row is None:
            raise KeyError(f"no annotation task {task_id!r}")
        return row

    @staticmethod
    def _info(row: tuple) -> TaskInfo:
        tid, name, owner, items, adjudication, source, created, updated = row
        return TaskInfo(tid, name, owner, items, bool(adjudication), source, created, updated)

    # -- tasks ------------------------------------------------------------------------------------
    def create_task(self, name: str, *, owner: str, source: str = "") -> str:
        if check_owner(owner) == SHARED_OWNER:
            raise PermissionError("the shared demo owner is read-only")
        name = check_task_name(name, self.limits)
        tid, now = uuid.uuid4().hex[:12], time.time()
        with self._write() as db:
            if db.execute("SELECT 1 FROM annotation_tasks WHERE owner=? AND name=?", (owner, name)).fetchone():
                raise AnnotationError(f"A task named {name!r} already exists: pick it to add items, or choose another name.")
            db.execute("INSERT INTO annotation_tasks (id, owner, name, source, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                       (tid, owner, name, source[:500], now, now))
        return tid

    def list_tasks(self, *, owner: str) -> list[TaskInfo]:
        check_owner(owner)
        with self._read() as db:
            rows = db.execute(
                """SELECT t.id, t.name, t.owner, (SELECT COUNT(*) FROM annotation_items i WHERE i.task_id = t.id),
                          t.adjudication, t.source, t.created_at, t.updated_at
                   FROM annotation_tasks t WHERE t.owner=? ORDER BY t.updated_at DESC""", (owner,)).fetchall()
        return [self._info(r) for r in rows]

    def task(self, task_id: str, *, owner: str) -> TaskInfo:
        with self._read() as db:
            return self._info(self._task_row(db, task_id, owner))

    def find_task(self, name: str, *, owner: str) -> TaskInfo | None:
        check_owner(owner)
        with self._read() as db:
            row = db.execute("SELECT id FROM annotation_tasks WHERE owner=? AND name=?", (owner, name.strip())).fetchone()
            return self._info(self._task_row(db, row[0], owner)) if row else None

    def set_adjudication(self, task_id: str, on: bool, *, owner: str) -> None:
        with self._write() as db:
            self._task_row(db, task_id, owner)
            db.execute("UPDATE annotation_tasks SET adjudication=?, updated_at=? WHERE id=? AND owner=?",
                       (int(on), time.time(), task_id, owner))

    def delete_task(self, task_id: str, *, owner: str) -> None:
        with self._write() as db:
            self._task_row(db, task_id, owner)
            for table in ("annotation_label_history", "annotation_adjudications", "annotation_labels", "annotation_items"):
                db.execute(f"DELETE FROM {table} WHERE task_id=?", (task_id,))
            db.execute("DELETE FROM annotation_tasks WHERE id=? AND owner=?", (task_id, owner))

    # -- import -----------------------------------------------------------------------------------
    def import_batch(self, task_id: str, batch: ImportBatch, *, owner: str) -> ImportReport:
        """Add or update items, then merge labels (same item id + annotator = update) and final
        labels, all in one transaction."""
        now = time.time()
        with self._write() as db:
            self._task_row(db, task_id, owner)
            known = {r[0]: (r[1], r[2]) for r in db.execute(
                "SELECT item_id, version, data FROM annotation_items WHERE task_id=?", (task_id,))}
            added, changed = self._merge_items(db, task_id, batch.items, known)
            if len(known) + added > self.limits.max_items:
                raise AnnotationError(f"the task would hold {len(known) + added:,} items; the limit is {self.limits.max_items:,}")
            counts = self._merge_labels(db, task_id, batch.labels, now)
            for final in batch.adjudications:
                self._adjudicate(db, task_id, final.item_id, final.label, final.lead, now, via="import")
            db.execute("UPDATE annotation_tasks SET updated_at=? WHERE id=?", (now, task_id))
        return ImportReport(items_added=added, items_changed=changed, items_unchanged=len(batch.items) - added - changed,
                            labels_added=counts[0], labels_updated=counts[1], labels_unchanged=counts[2],
                            adjudications=len(batch.adjudications), skipped=batch.skipped)

    def _merge_items(self, db: sqlite3.Connection, task_id: str, items: list[Item], known: dict) -> tuple[int, int]:
        position = db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM annotation_items WHERE task_id=?",
                              (task_id,)).fetchone()[0]
        added = changed = 0
        for item in items:
            data = json.dumps(item.content(), ensure_ascii=False, sort_keys=True)
            if item.item_id not in known:
                db.execute("INSERT INTO annotation_items (task_id, item_id, position, version, data) VALUES (?,?,?,?,?)",
                           (task_id, item.item_id, position, 1, data))
                position, added = position + 1, added + 1
            elif known[item.item_id][1] != data:
                db.execute("UPDATE annotation_items SET version=version+1, data=? WHERE task_id=? AND item_id=?",
                           (data, task_id, item.item_id))
                changed += 1
        return added, changed

    def _merge_labels(self, db: sqlite3.Connection, task_id: str, labels: list[Label], now: float) -> list[int]:
        counts = [0, 0, 0]  # added, updated, unchanged
        missing = []
        for label in labels:
            item = self._item_in(db, task_id, label.item_id)
            if item is None:
                missing.append(label.item_id)
                continue
            self._check_evidence(item, label.evidence)
            current = self._label_in(db, task_id, label.item_id, label.annotator)
            if current is not None and current.same_judgment(label):
                counts[2] += 1
                continue
            self._put_label(db, task_id, label, item.version, label.created_at or now, via="import")
            counts[0 if current is None else 1] += 1
        if missing:
            shown = ", ".join(repr(m) for m in list(dict.fromkeys(missing))[:5])
            raise AnnotationError(f"{len(missing)} labels name items that are not in the task (e.g. {shown}): "
                                  "import the items first, or import a file that has both")
        return counts

    # -- items ------------------------------------------------------------------------------------
    @staticmethod
    def _item_in(db: sqlite3.Connection, task_id: str, item_id: str) -> Item | None:
        row = db.execute("SELECT position, version, data FROM annotation_items WHERE task_id=? AND item_id=?",
                         (task_id, item_id)).fetchone()
        return Item.from_content(item_id, json.loads(row[2]), position=row[0], version=row[1]) if row else None

    def item(self, task_id: str, item_id: str, *, owner: str) -> Item:
        with self._read() as db:
            self._task_row(db, task_id, owner)
            item = self._item_in(db, task_id, item_id)
        if item is None:
            raise KeyError(f"no item {item_id!r} in this task")
        return item

    def items(self, task_id: str, *, owner: str) -> list[Item]:
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute("SELECT item_id, position, version, data FROM annotation_items WHERE task_id=? ORDER BY position",
                              (task_id,)).fetchall()
        return [Item.from_content(i, json.loads(d), position=p, version=v) for i, p, v, d in rows]

    def sequence(self, task_id: str, annotator: str, view: str = "all", *, owner: str) -> list[str]:
        """Item ids in task order for one of VIEWS: all; unlabelled / labelled by `annotator`;
        disagreements (items `annotator` labelled where another annotator chose differently: only
        items they have finished, so no one sees another's label first); `label:X` (their label is X)."""
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}; one of {', '.join(VIEWS)}")
        annotator = annotator if view == "all" else check_annotator(annotator, self.limits)
        mine = "SELECT item_id FROM annotation_labels WHERE task_id=:t AND annotator=:a"
        where = {
            "all": "1",
            "unlabelled": f"i.item_id NOT IN ({mine})",
            "labelled": f"i.item_id IN ({mine})",
            "disagreements": """EXISTS (SELECT 1 FROM annotation_labels m JOIN annotation_labels o
                                ON o.task_id = m.task_id AND o.item_id = m.item_id AND o.annotator != m.annotator
                                WHERE m.task_id=:t AND m.item_id=i.item_id AND m.annotator=:a AND o.label != m.label)""",
        }.get(view, f"i.item_id IN ({mine} AND label=:x)")
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute(f"SELECT i.item_id FROM annotation_items i WHERE i.task_id=:t AND {where} ORDER BY i.position",
                              {"t": task_id, "a": annotator, "x": view.partition(":")[2]}).fetchall()
        return [r[0] for r in rows]

    # -- labels -----------------------------------------------------------------------------------
    @staticmethod
    def _label_in(db: sqlite3.Connection, task_id: str, item_id: str, annotator: str) -> Label | None:
        row = db.execute(f"SELECT {_LABEL_COLUMNS} FROM annotation_labels WHERE task_id=? AND item_id=? AND annotator=?",
                         (task_id, item_id, annotator)).fetchone()
        return _label_row(row) if row else None

    @staticmethod
    def _check_evidence(item: Item, evidence: tuple[str, ...]) -> None:
        unknown = set(evidence) - {p.id for p in item.evidence}
        if unknown:
            raise AnnotationError(f"item {item.item_id!r} has no evidence passage {min(unknown)!r}")

    @staticmethod
    def _put_label(db: sqlite3.Connection, task_id: str, label: Label, version: int, at: float, via: str) -> None:
        values = (task_id, label.item_id, label.annotator, label.label, json.dumps(sorted(label.evidence)),
                  int(label.not_claim), label.comment, version, at)
        db.execute(
            """INSERT INTO annotation_labels (task_id, item_id, annotator, label, evidence, not_claim, comment, item_version, created_at)
               VALUES (?,?,?,?,?,?,?,?,?)
               ON CONFLICT (task_id, item_id, annotator) DO UPDATE SET label=excluded.label, evidence=excluded.evidence,
                   not_claim=excluded.not_claim, comment=excluded.comment, item_version=excluded.item_version,
                   created_at=excluded.created_at""", values)
        db.execute(
            """INSERT INTO annotation_label_history (task_id, item_id, annotator, label, evidence, not_claim, comment,
                   item_version, created_at, via) VALUES (?,?,?,?,?,?,?,?,?,?)""", (*values, via))

    def label(self, task_id: str, item_id: str, annotator: str, label: str, *, owner: str,
              evidence: tuple[str, ...] | list[str] = (), not_claim: bool = False, comment: str = "") -> Label:
        """Give or change `annotator`'s label of one item; committed before this returns. Giving the
        same judgment again changes nothing; a different one replaces it and joins the history."""
        new = Label(item_id=item_id, annotator=check_annotator(annotator, self.limits), label=normalize_label(label),
                    evidence=tuple(sorted({str(e) for e in evidence})), not_claim=bool(not_claim),
                    comment=check_text(comment, "the comment", self.limits.max_comment_chars, "label").strip())
        with self._write() as db:
            self._task_row(db, task_id, owner)
            item = self._item_in(db, task_id, item_id)
            if item is None:
                raise KeyError(f"no item {item_id!r} in this task")
            self._check_evidence(item, new.evidence)
            current = self._label_in(db, task_id, item_id, new.annotator)
            if current is not None and current.same_judgment(new) and current.item_version == item.version:
                return current
            now = time.time()
            self._put_label(db, task_id, new, item.version, now, via="page")
        return replace(new, item_version=item.version, created_at=now)

    def get_label(self, task_id: str, item_id: str, annotator: str, *, owner: str) -> Label | None:
        annotator = check_annotator(annotator, self.limits)
        with self._read() as db:
            self._task_row(db, task_id, owner)
            return self._label_in(db, task_id, item_id, annotator)

    def labels(self, task_id: str, *, owner: str, item_id: str | None = None) -> list[Label]:
        """Every current label of the task (or of one item), in task order then by annotator."""
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute(
                f"""SELECT {", ".join("l." + c.strip() for c in _LABEL_COLUMNS.split(","))} FROM annotation_labels l
                    JOIN annotation_items i ON i.task_id = l.task_id AND i.item_id = l.item_id
                    WHERE l.task_id=? AND (? IS NULL OR l.item_id=?) ORDER BY i.position, l.annotator""",
                (task_id, item_id, item_id)).fetchall()
        return [_label_row(r) for r in rows]

    def history(self, task_id: str, item_id: str, *, owner: str, annotator: str | None = None) -> list[Label]:
        """Every label given for the item (by one annotator, or all), oldest first."""
        annotator = check_annotator(annotator, self.limits) if annotator is not None else None
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute(
                f"""SELECT {_LABEL_COLUMNS} FROM annotation_label_history WHERE task_id=? AND item_id=?
                    AND (? IS NULL OR annotator=?) ORDER BY seq""", (task_id, item_id, annotator, annotator)).fetchall()
        return [_label_row(r) for r in rows]

    def resume_point(self, task_id: str, annotator: str, *, owner: str) -> str | None:
        """The first item (in task order) `annotator` has not labelled; None when they labelled all."""
        ids = self.sequence(task_id, annotator, "unlabelled", owner=owner)
        return ids[0] if ids else None

    def progress(self, task_id: str, *, owner: str) -> dict[str, int]:
        """Items labelled per annotator."""
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute("SELECT annotator, COUNT(*) FROM annotation_labels WHERE task_id=? GROUP BY annotator "
                              "ORDER BY annotator", (task_id,)).fetchall()
        return dict(rows)

    # -- adjudication -------------------------------------------------------------------------------
    def _adjudicate(self, db: sqlite3.Connection, task_id: str, item_id: str, label: str, lead: str, now: float,
                    via: str) -> None:
        item = self._item_in(db, task_id, item_id)
        if item is None:
            raise AnnotationError(f"a final label names item {item_id!r}, which is not in the task")
        db.execute("""INSERT INTO annotation_adjudications (task_id, item_id, label, lead, created_at) VALUES (?,?,?,?,?)
                      ON CONFLICT (task_id, item_id) DO UPDATE SET label=excluded.label, lead=excluded.lead,
                      created_at=excluded.created_at""", (task_id, item_id, label, lead, now))
        db.execute("""INSERT INTO annotation_label_history (task_id, item_id, annotator, label, item_version, created_at,
                      comment, via) VALUES (?,?,?,?,?,?,?,?)""", (task_id, item_id, ADJUDICATED, label, item.version, now,
                                                                   f"final label by {lead}", via))

    def adjudicate(self, task_id: str, item_id: str, label: str, lead: str, *, owner: str) -> None:
        """The lead's final label for an item (replacing an earlier one; both stay in the history)."""
        lead, label = check_annotator(lead, self.limits), normalize_label(label)
        with self._write() as db:
            self._task_row(db, task_id, owner)
            self._adjudicate(db, task_id, item_id, label, lead, time.time(), via="page")

    def adjudications(self, task_id: str, *, owner: str) -> dict[str, Adjudication]:
        with self._read() as db:
            self._task_row(db, task_id, owner)
            rows = db.execute("SELECT item_id, label, lead, created_at FROM annotation_adjudications WHERE task_id=?",
                              (task_id,)).fetchall()
        return {r[0]: Adjudication(*r) for r in rows}

    # -- export -----------------------------------------------------------------------------------
    def export_rows(self, task_id: str, *, owner: str) -> list[dict]:
        """One row per item per annotator, plus the final label (see formats.export_rows)."""
        items = self.items(task_id, owner=owner)
        labels = self.labels(task_id, owner=owner)
        finals = {k: a.label for k, a in self.adjudications(task_id, owner=owner).items()}
        return formats.export_rows(items, labels, finals)
