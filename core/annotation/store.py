"""Durable annotation tasks in the same database as the conversations (SQLite or PostgreSQL, core/db).

- Every task belongs to one owner (a browser's private id, a named workspace, a signed-in account;
  see core/store.py). Every call takes `owner=` and filters on it in SQL; another owner's task
  raises `KeyError` exactly as a missing one does, so no page lists, opens, exports or deletes it.
- Annotators are names within a task (no accounts). Each (item, annotator) has one current label;
  every label ever given is also appended to a history table, with the item's version at the time.
- Each label is committed the moment it is given (one short transaction), so a server killed with
  SIGKILL loses nothing that was acknowledged. Two annotators never touch the same row (the key is
  item + annotator, written with INSERT ... ON CONFLICT), so working at once, in one process or in
  two replicas, they cannot overwrite each other.
- An import is one transaction: a bad row anywhere leaves the task exactly as it was.

The tables are migrated with the others by Alembic (core/db/migrate.py).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import replace
from pathlib import Path

from sqlalchemy import Connection, delete, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

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
from core.db import Database
from core.db.migrate import ensure_schema
from core.db.schema import annotation_adjudications as ADJ
from core.db.schema import annotation_items as ITEMS
from core.db.schema import annotation_label_history as HIST
from core.db.schema import annotation_labels as LABELS_T
from core.db.schema import annotation_tasks as TASKS
from core.store import SHARED_OWNER, check_owner

VIEWS = ("all", "unlabelled", "labelled", "disagreements", *(f"label:{x}" for x in LABELS))

_LABEL_COLUMNS = ("item_id", "annotator", "label", "evidence", "not_claim", "comment", "item_version", "created_at")


def _label_row(row) -> Label:
    item_id, annotator, label, evidence, not_claim, comment, version, created = row
    return Label(item_id, annotator, label, tuple(json.loads(evidence)), bool(not_claim), comment, version, created)


def _upsert(conn: Connection, table, values: dict, keys: list[str]):
    insert_ = sqlite_insert if conn.dialect.name == "sqlite" else pg_insert
    stmt = insert_(table).values(**values)
    return stmt.on_conflict_do_update(index_elements=keys, set_={k: stmt.excluded[k] for k in values if k not in keys})


_TASK_COLUMNS = (TASKS.c.id, TASKS.c.name, TASKS.c.owner,
                 select(func.count()).where(ITEMS.c.task_id == TASKS.c.id).scalar_subquery(),
                 TASKS.c.adjudication, TASKS.c.source, TASKS.c.created_at, TASKS.c.updated_at)


class AnnotationStore:
    """`target`: the same database as core.store.Store (an SQLite path, sqlite:/// or postgresql:// URL)."""

    def __init__(self, target: str | Path, limits: Limits = DEFAULT_LIMITS, retry_s: float = 30.0) -> None:
        self.db = Database(target, retry_s=retry_s)
        self.path = self.db.path  # the SQLite file; None for a server
        self.url = self.db.url
        self.limits = limits
        ensure_schema(self.db)

    def _task_row(self, db: Connection, task_id: str, owner: str) -> tuple:
        check_owner(owner)
        row = db.execute(select(*_TASK_COLUMNS).where(TASKS.c.id == task_id, TASKS.c.owner == owner)).first()
        if row is None:
            raise KeyError(f"no annotation task {task_id!r}")
        return tuple(row)

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

        def run(db: Connection) -> None:
            if db.execute(select(TASKS.c.id).where(TASKS.c.id == tid)).first():
                return  # a retry after the commit went through: the task (this call's own id) exists
            if db.execute(select(TASKS.c.id).where(TASKS.c.owner == owner, TASKS.c.name == name)).first():
                raise AnnotationError(f"A task named {name!r} already exists: pick it to add items, or choose another name.")
            db.execute(insert(TASKS).values(id=tid, owner=owner, name=name, source=source[:500], created_at=now, updated_at=now))

        self.db.write(run)
        return tid

    def list_tasks(self, *, owner: str) -> list[TaskInfo]:
        check_owner(owner)
        query = select(*_TASK_COLUMNS).where(TASKS.c.owner == owner).order_by(TASKS.c.updated_at.desc())
        return [self._info(tuple(r)) for r in self.db.read(lambda db: db.execute(query).all())]

    def task(self, task_id: str, *, owner: str) -> TaskInfo:
        return self._info(self.db.read(lambda db: self._task_row(db, task_id, owner)))

    def find_task(self, name: str, *, owner: str) -> TaskInfo | None:
        check_owner(owner)

        def run(db: Connection):
            tid = db.execute(select(TASKS.c.id).where(TASKS.c.owner == owner, TASKS.c.name == name.strip())).scalar()
            return self._task_row(db, tid, owner) if tid else None

        row = self.db.read(run)
        return self._info(row) if row else None

    def set_adjudication(self, task_id: str, on: bool, *, owner: str) -> None:
        def run(db: Connection) -> None:
            self._task_row(db, task_id, owner)
            db.execute(update(TASKS).where(TASKS.c.id == task_id, TASKS.c.owner == owner)
                       .values(adjudication=int(on), updated_at=time.time()))

        self.db.write(run)

    def delete_task(self, task_id: str, *, owner: str) -> None:
        def run(db: Connection) -> None:
            self._task_row(db, task_id, owner)
            for table in (HIST, ADJ, LABELS_T, ITEMS):
                db.execute(delete(table).where(table.c.task_id == task_id))
            db.execute(delete(TASKS).where(TASKS.c.id == task_id, TASKS.c.owner == owner))

        self.db.write(run)

    # -- import -----------------------------------------------------------------------------------
    def import_batch(self, task_id: str, batch: ImportBatch, *, owner: str) -> ImportReport:
        """Add or update items, then merge labels (same item id + annotator = update) and final
        labels, all in one transaction."""
        now = time.time()

        def run(db: Connection) -> tuple[int, int, list[int]]:
            self._task_row(db, task_id, owner)
            db.execute(select(TASKS.c.id).where(TASKS.c.id == task_id).with_for_update())  # one import per task at a time
            known = {r[0]: (r[1], r[2]) for r in db.execute(
                select(ITEMS.c.item_id, ITEMS.c.version, ITEMS.c.data).where(ITEMS.c.task_id == task_id))}
            added, changed = self._merge_items(db, task_id, batch.items, known)
            if len(known) + added > self.limits.max_items:
                raise AnnotationError(f"the task would hold {len(known) + added:,} items; the limit is {self.limits.max_items:,}")
            counts = self._merge_labels(db, task_id, batch.labels, now)
            for final in batch.adjudications:
                self._adjudicate(db, task_id, final.item_id, final.label, final.lead, now, via="import")
            db.execute(update(TASKS).where(TASKS.c.id == task_id).values(updated_at=now))
            return added, changed, counts

        added, changed, counts = self.db.write(run)
        return ImportReport(items_added=added, items_changed=changed, items_unchanged=len(batch.items) - added - changed,
                            labels_added=counts[0], labels_updated=counts[1], labels_unchanged=counts[2],
                            adjudications=len(batch.adjudications), skipped=batch.skipped)

    def _merge_items(self, db: Connection, task_id: str, items: list[Item], known: dict) -> tuple[int, int]:
        position = db.execute(select(func.coalesce(func.max(ITEMS.c.position) + 1, 0)).where(ITEMS.c.task_id == task_id)).scalar()
        added = changed = 0
        for item in items:
            data = json.dumps(item.content(), ensure_ascii=False, sort_keys=True)
            if item.item_id not in known:
                db.execute(insert(ITEMS).values(task_id=task_id, item_id=item.item_id, position=position, version=1, data=data))
                position, added = position + 1, added + 1
            elif known[item.item_id][1] != data:
                db.execute(update(ITEMS).where(ITEMS.c.task_id == task_id, ITEMS.c.item_id == item.item_id)
                           .values(version=ITEMS.c.version + 1, data=data))
                changed += 1
        return added, changed

    def _merge_labels(self, db: Connection, task_id: str, labels: list[Label], now: float) -> list[int]:
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
    def _item_in(db: Connection, task_id: str, item_id: str) -> Item | None:
        row = db.execute(select(ITEMS.c.position, ITEMS.c.version, ITEMS.c.data)
                         .where(ITEMS.c.task_id == task_id, ITEMS.c.item_id == item_id)).first()
        return Item.from_content(item_id, json.loads(row[2]), position=row[0], version=row[1]) if row else None

    def item(self, task_id: str, item_id: str, *, owner: str) -> Item:
        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return self._item_in(db, task_id, item_id)

        item = self.db.read(run)
        if item is None:
            raise KeyError(f"no item {item_id!r} in this task")
        return item

    def items(self, task_id: str, *, owner: str) -> list[Item]:
        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(select(ITEMS.c.item_id, ITEMS.c.position, ITEMS.c.version, ITEMS.c.data)
                              .where(ITEMS.c.task_id == task_id).order_by(ITEMS.c.position)).all()

        return [Item.from_content(i, json.loads(d), position=p, version=v) for i, p, v, d in self.db.read(run)]

    def sequence(self, task_id: str, annotator: str, view: str = "all", *, owner: str) -> list[str]:
        """Item ids in task order for one of VIEWS: all; unlabelled / labelled by `annotator`;
        disagreements (items `annotator` labelled where another annotator chose differently: only
        items they have finished, so no one sees another's label first); `label:X` (their label is X)."""
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}; one of {', '.join(VIEWS)}")
        annotator = annotator if view == "all" else check_annotator(annotator, self.limits)
        mine = "SELECT item_id FROM annotation_labels WHERE task_id=:t AND annotator=:a"
        where = {
            "all": "1=1",
            "unlabelled": f"i.item_id NOT IN ({mine})",
            "labelled": f"i.item_id IN ({mine})",
            "disagreements": """EXISTS (SELECT 1 FROM annotation_labels m JOIN annotation_labels o
                                ON o.task_id = m.task_id AND o.item_id = m.item_id AND o.annotator != m.annotator
                                WHERE m.task_id=:t AND m.item_id=i.item_id AND m.annotator=:a AND o.label != m.label)""",
        }.get(view, f"i.item_id IN ({mine} AND label=:x)")
        query = text(f"SELECT i.item_id FROM annotation_items i WHERE i.task_id=:t AND {where} ORDER BY i.position")
        params = {"t": task_id, "a": annotator, "x": view.partition(":")[2]}

        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(query, params).scalars().all()

        return list(self.db.read(run))

    # -- labels -----------------------------------------------------------------------------------
    @staticmethod
    def _label_in(db: Connection, task_id: str, item_id: str, annotator: str) -> Label | None:
        row = db.execute(select(*(LABELS_T.c[k] for k in _LABEL_COLUMNS)).where(
            LABELS_T.c.task_id == task_id, LABELS_T.c.item_id == item_id, LABELS_T.c.annotator == annotator)).first()
        return _label_row(row) if row else None

    @staticmethod
    def _check_evidence(item: Item, evidence: tuple[str, ...]) -> None:
        unknown = set(evidence) - {p.id for p in item.evidence}
        if unknown:
            raise AnnotationError(f"item {item.item_id!r} has no evidence passage {min(unknown)!r}")

    @staticmethod
    def _put_label(db: Connection, task_id: str, label: Label, version: int, at: float, via: str) -> None:
        values = dict(task_id=task_id, item_id=label.item_id, annotator=label.annotator, label=label.label,
                      evidence=json.dumps(sorted(label.evidence)), not_claim=int(label.not_claim), comment=label.comment,
                      item_version=version, created_at=at)
        db.execute(_upsert(db, LABELS_T, values, ["task_id", "item_id", "annotator"]))
        db.execute(insert(HIST).values(**values, via=via))

    def label(self, task_id: str, item_id: str, annotator: str, label: str, *, owner: str,
              evidence: tuple[str, ...] | list[str] = (), not_claim: bool = False, comment: str = "") -> Label:
        """Give or change `annotator`'s label of one item; committed before this returns. Giving the
        same judgment again changes nothing; a different one replaces it and joins the history."""
        new = Label(item_id=item_id, annotator=check_annotator(annotator, self.limits), label=normalize_label(label),
                    evidence=tuple(sorted({str(e) for e in evidence})), not_claim=bool(not_claim),
                    comment=check_text(comment, "the comment", self.limits.max_comment_chars, "label").strip())

        def run(db: Connection) -> Label:
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

        return self.db.write(run)

    def get_label(self, task_id: str, item_id: str, annotator: str, *, owner: str) -> Label | None:
        annotator = check_annotator(annotator, self.limits)

        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return self._label_in(db, task_id, item_id, annotator)

        return self.db.read(run)

    def labels(self, task_id: str, *, owner: str, item_id: str | None = None) -> list[Label]:
        """Every current label of the task (or of one item), in task order then by annotator."""
        query = (select(*(LABELS_T.c[k] for k in _LABEL_COLUMNS))
                 .join(ITEMS, (ITEMS.c.task_id == LABELS_T.c.task_id) & (ITEMS.c.item_id == LABELS_T.c.item_id))
                 .where(LABELS_T.c.task_id == task_id).order_by(ITEMS.c.position, LABELS_T.c.annotator))
        if item_id is not None:
            query = query.where(LABELS_T.c.item_id == item_id)

        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(query).all()

        return [_label_row(r) for r in self.db.read(run)]

    def history(self, task_id: str, item_id: str, *, owner: str, annotator: str | None = None) -> list[Label]:
        """Every label given for the item (by one annotator, or all), oldest first."""
        annotator = check_annotator(annotator, self.limits) if annotator is not None else None
        query = (select(*(HIST.c[k] for k in _LABEL_COLUMNS)).where(HIST.c.task_id == task_id, HIST.c.item_id == item_id)
                 .order_by(HIST.c.seq))
        if annotator is not None:
            query = query.where(HIST.c.annotator == annotator)

        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(query).all()

        return [_label_row(r) for r in self.db.read(run)]

    def resume_point(self, task_id: str, annotator: str, *, owner: str) -> str | None:
        """The first item (in task order) `annotator` has not labelled; None when they labelled all."""
        ids = self.sequence(task_id, annotator, "unlabelled", owner=owner)
        return ids[0] if ids else None

    def progress(self, task_id: str, *, owner: str) -> dict[str, int]:
        """Items labelled per annotator."""
        query = (select(LABELS_T.c.annotator, func.count()).where(LABELS_T.c.task_id == task_id)
                 .group_by(LABELS_T.c.annotator).order_by(LABELS_T.c.annotator))

        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(query).all()

        return {a: n for a, n in self.db.read(run)}

    # -- adjudication -------------------------------------------------------------------------------
    def _adjudicate(self, db: Connection, task_id: str, item_id: str, label: str, lead: str, now: float, via: str) -> None:
        item = self._item_in(db, task_id, item_id)
        if item is None:
            raise AnnotationError(f"a final label names item {item_id!r}, which is not in the task")
        current = db.execute(select(ADJ.c.label, ADJ.c.lead).where(ADJ.c.task_id == task_id, ADJ.c.item_id == item_id)).first()
        if current is not None and tuple(current) == (label, lead):
            return  # the same final label again (a re-import, a retried write): nothing changes, as for labels
        db.execute(_upsert(db, ADJ, dict(task_id=task_id, item_id=item_id, label=label, lead=lead, created_at=now),
                           ["task_id", "item_id"]))
        db.execute(insert(HIST).values(task_id=task_id, item_id=item_id, annotator=ADJUDICATED, label=label,
                                       item_version=item.version, created_at=now, comment=f"final label by {lead}", via=via))

    def adjudicate(self, task_id: str, item_id: str, label: str, lead: str, *, owner: str) -> None:
        """The lead's final label for an item (replacing an earlier one; both stay in the history)."""
        lead, label = check_annotator(lead, self.limits), normalize_label(label)

        def run(db: Connection) -> None:
            self._task_row(db, task_id, owner)
            self._adjudicate(db, task_id, item_id, label, lead, time.time(), via="page")

        self.db.write(run)

    def adjudications(self, task_id: str, *, owner: str) -> dict[str, Adjudication]:
        def run(db: Connection):
            self._task_row(db, task_id, owner)
            return db.execute(select(ADJ.c.item_id, ADJ.c.label, ADJ.c.lead, ADJ.c.created_at)
                              .where(ADJ.c.task_id == task_id)).all()

        return {r[0]: Adjudication(*r) for r in self.db.read(run)}

    # -- export -----------------------------------------------------------------------------------
    def export_rows(self, task_id: str, *, owner: str) -> list[dict]:
        """One row per item per annotator, plus the final label (see formats.export_rows)."""
        items = self.items(task_id, owner=owner)
        labels = self.labels(task_id, owner=owner)
        finals = {k: a.label for k, a in self.adjudications(task_id, owner=owner).items()}
        return formats.export_rows(items, labels, finals)
