"""Annotation: people judge atomic facts (Supports / Refutes / Not Enough Info) one at a time, durably;
agreement between them, with the gold labels, and adjudication; import and export."""

from __future__ import annotations

import streamlit as st

from core.annotation import AnnotationError, check_annotator
from ui import annotation as ua, icons
from ui import annotation_agreement, annotation_io, owner
from ui.safe import literal

st.set_page_config(page_title="Annotation", page_icon=icons.FAVICON, layout="wide")
me = owner.current_owner()
owner.sidebar(me)
store = ua.annotation_store()
tasks = {t.id: t for t in store.list_tasks(owner=me)}

with st.sidebar:
    st.subheader("Annotator")
    if "ann_annotator" not in st.session_state:  # a reload keeps the name in the address
        st.session_state["ann_annotator"] = st.query_params.get("annotator", "")
    typed = st.text_input("Your annotator name", key="ann_annotator", max_chars=store.limits.max_annotator_chars)
    st.caption("No accounts: an annotator is a name typed here, within this workspace. Anyone in the workspace can "
               "type any name; labels are kept under it. Names are matched case-insensitively.")
    try:
        annotator = check_annotator(typed, store.limits)
    except AnnotationError as err:
        annotator = None
        if typed.strip():
            st.error(literal(str(err)))
    if annotator and st.query_params.get("annotator") != annotator:
        st.query_params["annotator"] = annotator
    ids = list(tasks)
    wanted = st.session_state.pop(annotation_io.NEXT_TASK, None) or st.session_state.get(annotation_io.TASK) \
        or st.query_params.get("task")
    if wanted in ids:  # a task just imported, or the one in the address after a reload
        st.session_state[annotation_io.TASK] = wanted
    task_id = st.selectbox("Task", ids, format_func=lambda i: f"{tasks[i].name} ({tasks[i].items:,} items)",
                           key=annotation_io.TASK) if ids else None
    if task_id and st.query_params.get("task") != task_id:
        st.query_params["task"] = task_id

st.title("Annotation")
keys = ua.SHORTCUTS
if not tasks:
    st.markdown("**Start here:** make a task under **Import** below: upload a file of facts, or pick a data set on this "
                "server, a benchmark run or one of your chats, then press **Import**.")
elif annotator is None:
    st.markdown("**Start here:** type your annotator name in the sidebar, then judge the task's facts one by one.")
else:
    st.markdown(f"**Next:** judge each fact under **Label**: **Supports** ({keys['label:Supports']}), **Refutes** "
                f"({keys['label:Refutes']}) or **Not Enough Info** ({keys['label:Not Enough Info']}); "
                f"**{keys['next']}** moves to the next fact.")
st.caption("Judge each atomic fact of a response against the dialogue and the evidence: **Supports**, **Refutes** or "
           "**Not Enough Info**. Every label is saved the moment it is given (SQLite), with its history. Tasks belong to "
           "this workspace: nobody in another workspace lists, opens or exports them. Each annotator sees only their own "
           "labels until they have labelled an item; gold labels appear only in adjudication mode.")

task = tasks.get(task_id) if task_id else None
views = ["Label", "Agreement", "Import / export"] if task else ["Import / export"]
view = st.radio("View", views, horizontal=True, key="ann_page_view", label_visibility="collapsed")

if view == "Label":
    if annotator is None:
        st.info("Type your annotator name in the sidebar to start labelling (an empty name is refused).")
    else:
        ua.label_panel(store, task.id, annotator, me, task.adjudication)
elif view == "Agreement":
    annotation_agreement.agreement_panel(store, task, annotator, me)
else:
    if annotation_io.DONE in st.session_state:
        st.success(st.session_state.pop(annotation_io.DONE))
    annotation_io.import_section(store, me, task)
    if task:
        annotation_io.export_section(store, task, me)
        annotation_io.settings_section(store, task, me)
