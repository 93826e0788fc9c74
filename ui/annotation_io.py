"""The Annotation page's import / export / settings panel. Tasks are made from an uploaded file, a
data set on this server, a benchmark run's facts, or the replies of a chat in this workspace."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core.annotation import AnnotationError, AnnotationStore, ImportBatch, TaskInfo
from core.annotation.facts import items_from_turns
from core.annotation.formats import read_bytes, read_path, write_csv, write_jsonl
from core.metrics.atomic_facts import FactSplitter, SentenceFactSplitter
from core.paths import SHARED_DIR, MissingResource
from ui import conversations, resources, runs
from ui.safe import literal

TASK = "ann_task"  # the sidebar's task picker
NEXT_TASK = "ann_next_task"  # set by an import: the picker selects it on the next run
DONE = "ann_import_done"
EXPORT = "ann_export"  # (task id, format, text) of the last prepared export
RUN_BENCHMARKS = ("hybridialogue-facts", "opendialkg-response", "mtbench")
_SAFE_FILE = re.compile(r"[^\w.-]+")
SOURCES = ("Upload a file", "A data set on this server", "A benchmark run", "A chat of this workspace")


def server_files() -> list[Path]:
    """Annotated fact files on this server: ../shared/data/hybridialogue, plus the folders listed in
    WORKBENCH_ANNOTATION_DATA (separated by the path separator). Only these are offered: a user
    never types a server path."""
    folders = [SHARED_DIR / "data" / "hybridialogue"]
    folders += [Path(p) for p in os.environ.get("WORKBENCH_ANNOTATION_DATA", "").split(os.pathsep) if p.strip()]
    found = []
    for folder in folders:
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix.lower() in (".json", ".jsonl", ".csv") and p.is_file())
    return found


def _source(store: AnnotationStore, me: str) -> tuple[str, Callable[[], ImportBatch]] | None:
    """(suggested task name, a loader that parses and checks everything) for the chosen source."""
    kind = st.radio("From", SOURCES, horizontal=True, key="ann_source")
    if kind == SOURCES[0]:
        up = st.file_uploader("HybriDialogue annotated JSON, facts or labels as JSONL / CSV (an export imports back)",
                              type=["json", "jsonl", "csv"], key="ann_upload")
        st.caption(f"At most {store.limits.max_bytes / 1e6:.0f} MB and {store.limits.max_items:,} items per file; "
                   "split bigger files and import the parts into the same task.")
        if up is None:
            return None
        return Path(up.name).stem, lambda: read_bytes(up.name, up.getvalue(), store.limits)
    if kind == SOURCES[1]:
        files = server_files()
        if not files:
            st.caption("No data set found on this server (../shared/data/hybridialogue).")
            return None
        path = st.selectbox("Data set", files, format_func=lambda p: f"{p.parent.name}/{p.name}", key="ann_server_file")
        return path.stem, lambda: read_path(path, store.limits)
    if kind == SOURCES[2]:
        root = runs.runs_root()
        found = runs.find_runs(root, RUN_BENCHMARKS) if root.is_dir() else []
        if not found:
            st.caption(f"No run of {', '.join(RUN_BENCHMARKS)} with facts under {root}.")
            return None
        folder = st.selectbox("Run", found, format_func=lambda p: p.name, key="ann_run")
        return folder.name, lambda: read_path(folder, store.limits)
    chats = resources.default_store().list_conversations(owner=me)
    if not chats:
        st.caption("No chat in this workspace yet.")
        return None
    info = st.selectbox("Chat", chats, format_func=conversations.label, key="ann_chat")
    st.caption("Each reply is split into atomic facts by FactScore's rule splitter, as the Metrics page splits it "
               "(by sentences where no spaCy model is installed).")

    def load() -> ImportBatch:
        stored = resources.default_store().turns(info.id, owner=me)
        items = items_from_turns([s.turn for s in stored], [s.reply for s in stored], prefix=info.id,
                                 splitter=_fact_splitter())
        if not items:
            raise AnnotationError("this chat has no replies to split into facts")
        return ImportBatch(items=items, source=f"chat {info.title}")

    return info.title[:60], load


def _fact_splitter() -> FactSplitter:
    """The FactScore rule splitter (shared spaCy model); one fact per sentence without spaCy."""
    from ui.factscore import rule_splitter

    try:
        return rule_splitter()
    except MissingResource:
        return SentenceFactSplitter()


def import_section(store: AnnotationStore, me: str, task: TaskInfo | None) -> None:
    st.subheader("Import")
    chosen = _source(store, me)
    targets = ["new"] + (["merge"] if task else [])
    target = st.radio("Into", targets, horizontal=True, key="ann_target",
                      format_func=lambda t: "a new task" if t == "new" else f"the selected task ({literal(task.name)}): merge")
    typed = st.text_input("New task name", placeholder=chosen[0] if chosen else "", max_chars=store.limits.max_task_name_chars,
                          key="ann_new_name", disabled=target != "new", help="Empty: the name shown greyed out.")
    name = typed.strip() or (chosen[0] if chosen else "")
    if not st.button("Import", type="primary", disabled=chosen is None, key="ann_import"):
        return
    created = None
    try:
        batch = chosen[1]()
        task_id = task.id if target == "merge" else store.create_task(name, owner=me, source=batch.source)
        created = task_id if target == "new" else None
        report = store.import_batch(task_id, batch, owner=me)
    except (AnnotationError, KeyError, OSError) as err:
        if created:  # nothing half-way: not even the empty task
            store.delete_task(created, owner=me)
        st.error(literal(f"Import refused, nothing was stored: {err}"))
        return
    st.session_state[NEXT_TASK] = task_id
    st.session_state[DONE] = f"Imported: {report.describe()}."
    st.rerun()


def export_section(store: AnnotationStore, task: TaskInfo, me: str) -> None:
    st.subheader("Export")
    fmt = st.radio("Format", ["jsonl", "csv"], horizontal=True, key="ann_export_format")
    st.caption("One row per item per annotator (an unlabelled item gets one row), with the adjudicated label on each "
               "row; lists are JSON in CSV cells. Importing the file into a task merges it back.")
    if st.button("Prepare the export", key="ann_prepare_export"):
        rows = store.export_rows(task.id, owner=me)
        st.session_state[EXPORT] = (task.id, fmt, write_csv(rows) if fmt == "csv" else write_jsonl(rows), len(rows))
    ready = st.session_state.get(EXPORT)
    if ready and ready[0] == task.id and ready[1] == fmt:
        st.download_button(f"Download {ready[3]} rows ({fmt})", ready[2], file_name=f"{_SAFE_FILE.sub('_', task.name)}.{fmt}",
                           mime="text/csv" if fmt == "csv" else "application/x-ndjson", key="ann_download")


def settings_section(store: AnnotationStore, task: TaskInfo, me: str) -> None:
    st.subheader("Task settings")
    on = st.toggle("Adjudication mode: show gold labels, agreement with gold and the adjudication queue",
                   value=task.adjudication, key=f"ann_adj:{task.id}")
    if on != task.adjudication:
        store.set_adjudication(task.id, on, owner=me)
        st.rerun()
    with st.expander("Delete this task"):
        sure = st.checkbox(f"Delete {literal(task.name)} with all its {task.items} items and every label", key="ann_delete_sure")
        if st.button("Delete", disabled=not sure, key="ann_delete"):
            store.delete_task(task.id, owner=me)
            st.session_state.pop(TASK, None)
            st.rerun()
