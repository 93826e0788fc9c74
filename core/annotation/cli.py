"""`python -m core annotation import|export|agreement`: annotation tasks from scripts.

Tasks belong to an owner as on the page; `--owner` picks it (default `ws:cli`, which is the
workspace named "cli" when the app runs with WORKBENCH_AUTH=named; `ws:lab` is the workspace "lab")."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

CLI_OWNER = "ws:cli"


def add_parser(sub) -> None:
    p = sub.add_parser("annotation", help="annotation tasks: import items or labels, export, agreement")
    cmds = p.add_subparsers(dest="annotation_command", required=True, metavar="ACTION")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--db", required=True, type=Path, help="SQLite database (the app's WORKBENCH_DB)")
        q.add_argument("--task", required=True, help="task name")
        q.add_argument("--owner", default=CLI_OWNER, help=f"workspace owning the task (default {CLI_OWNER}; ws:NAME = workspace NAME)")

    imp = cmds.add_parser("import", help="items (HybriDialogue JSON, facts JSONL/CSV, a run folder) or labels "
                                         '(JSONL lines {"item_id", "annotator", "label"}); creates the task if needed')
    common(imp)
    imp.add_argument("file", type=Path, help="file, or a benchmark run folder")
    imp.set_defaults(func=run_import)

    exp = cmds.add_parser("export", help="one row per item per annotator, plus the adjudicated label")
    common(exp)
    exp.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    exp.add_argument("--out", required=True, type=Path)
    exp.set_defaults(func=run_export)

    agr = cmds.add_parser("agreement", help="JSON: pairwise_kappa, alpha, observed_agreement, items, annotators")
    common(agr)
    agr.set_defaults(func=run_agreement)


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def _task(store, args):
    task = store.find_task(args.task, owner=args.owner)
    if task is None:
        raise KeyError(f"no task named {args.task!r} for owner {args.owner!r} in {args.db}")
    return task


def run_import(args) -> int:
    from core.annotation.formats import read_path
    from core.annotation.model import AnnotationError
    from core.annotation.store import AnnotationStore

    store = AnnotationStore(args.db)
    try:
        batch = read_path(args.file, store.limits)
        task = store.find_task(args.task, owner=args.owner)
        created = task is None
        task_id = store.create_task(args.task, owner=args.owner, source=args.file.name) if created else task.id
        try:
            report = store.import_batch(task_id, batch, owner=args.owner)
        except (AnnotationError, KeyError):
            if created:  # nothing half-way: not even an empty task
                store.delete_task(task_id, owner=args.owner)
            raise
    except (AnnotationError, KeyError) as err:
        return _fail(f"import refused, nothing stored: {err}")
    print(json.dumps({"task": args.task, "created": created, **report.__dict__}))
    return 0


def run_export(args) -> int:
    from core.annotation.formats import write_csv, write_jsonl
    from core.annotation.store import AnnotationStore

    store = AnnotationStore(args.db)
    try:
        rows = store.export_rows(_task(store, args).id, owner=args.owner)
    except KeyError as err:
        return _fail(str(err.args[0]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(write_csv(rows) if args.format == "csv" else write_jsonl(rows), encoding="utf-8")
    print(json.dumps({"task": args.task, "rows": len(rows), "out": str(args.out)}))
    return 0


def run_agreement(args) -> int:
    from core.annotation.agreement import against, agreement
    from core.annotation.store import AnnotationStore

    store = AnnotationStore(args.db)
    try:
        task = _task(store, args)
    except KeyError as err:
        return _fail(str(err.args[0]))
    labels = store.labels(task.id, owner=args.owner)
    out = agreement(labels, task.items).to_json()
    gold = {i.item_id: i.gold for i in store.items(task.id, owner=args.owner) if i.gold}
    if gold:
        out["kappa_vs_gold"] = {v.annotator: v.kappa for v in against(labels, gold)}
    print(json.dumps(out, indent=2))
    return 0
