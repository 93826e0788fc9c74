"""The Annotation page's agreement panel: kappa, alpha, observed agreement, confusion heatmaps; in
adjudication mode also each annotator against the gold labels and the queue of disagreements
where a lead picks the final label."""

from __future__ import annotations

import html

import plotly.graph_objects as go
import streamlit as st

from core.annotation import LABELS, AnnotationError, AnnotationStore, TaskInfo
from core.annotation import agreement as ag
from ui.safe import literal

QUEUE_PAGE = 10


def confusion_figure(matrix, rows: str, columns: str) -> go.Figure:
    short = ["Supports", "Refutes", "NEI"]
    fig = go.Figure(go.Heatmap(z=matrix, x=short, y=short, text=matrix, texttemplate="%{text}", colorscale="Blues",
                               showscale=False, hovertemplate="row %{y}, column %{x}: %{z}<extra></extra>"))
    # plotly reads a few HTML tags in titles: the names (already restricted to plain characters) are escaped too
    fig.update_layout(xaxis_title=html.escape(columns), yaxis_title=html.escape(rows), yaxis_autorange="reversed",
                      height=300, margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return fig


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _summary(report: ag.Agreement) -> None:
    c = st.columns(4)
    c[0].metric("Krippendorff's alpha", _fmt(report.alpha), help="Nominal; all annotators and items, missing labels allowed.")
    c[1].metric("Observed agreement", _fmt(report.observed_agreement),
                help="Per item with two or more labels, the share of annotator pairs that agree; averaged over those items.")
    c[2].metric("Items with 2+ labels", f"{report.items_compared} / {report.items}")
    c[3].metric("Annotators", len(report.annotators))
    if report.pairwise_kappa:
        st.dataframe([{"annotators": k.replace("|", " vs "), "Cohen's kappa": v, "items both labelled": report.pairwise_items[k]}
                      for k, v in report.pairwise_kappa.items()], hide_index=True,
                     column_config={"Cohen's kappa": st.column_config.NumberColumn(format="%.3f")})
    st.caption("Kappa and alpha: 1 = perfect agreement, 0 = chance; '–' where undefined (no shared items, or only one "
               "label used by both). Higher is better.")


def _pair_heatmap(table: dict[str, dict[str, str]]) -> None:
    names = list(table)
    if len(names) < 2:
        return
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    a, b = st.selectbox("Confusion matrix of", pairs, format_func=lambda p: f"{p[0]} (rows) vs {p[1]} (columns)",
                        key="ann_pair")
    st.plotly_chart(confusion_figure(ag.confusion(table[a], table[b]), a, b), width="stretch", key="ann_pair_fig")


def _versus(labels, reference: dict[str, str], name: str, key: str) -> None:
    rows = ag.against(labels, reference)
    st.dataframe([{"annotator": r.annotator, f"kappa vs {name}": r.kappa, "accuracy": r.accuracy, "items": r.items}
                  for r in rows], hide_index=True,
                 column_config={f"kappa vs {name}": st.column_config.NumberColumn(format="%.3f"),
                                "accuracy": st.column_config.NumberColumn(format="%.3f")})
    table = ag.by_annotator(labels)
    if table:
        who = st.selectbox(f"Confusion matrix against {name}", list(table), key=f"{key}_who")
        st.plotly_chart(confusion_figure(ag.confusion(reference, table[who]), name, who), width="stretch", key=f"{key}_fig")


VERIFIER_KEY = "ann_verifier_labels"  # (owner, task id, verifier, items) -> {item_id: label}


def verifier_panel(store: AnnotationStore, task: TaskInfo, labels, me: str) -> None:
    """Each annotator against the FactScore verifier's labels of the same items (issue 16)."""
    from core.annotation.verify import verifier_labels

    st.subheader("Against the automatic verifier")
    st.caption("The FactScore verifier labels the task's items (the offline `nli` classifier by default; `llm` uses the "
               "configured model). Gold evidence marks are never shown to it.")
    name = st.radio("Verifier", ["nli", "llm", "judge"], horizontal=True, key="ann_verifier_name")
    key = (me, task.id, name, task.items)
    cache = st.session_state.setdefault(VERIFIER_KEY, {})
    if st.button("Label the items with the verifier", key="ann_verifier_go"):
        from ui import factscore as ufs
        from ui import state

        try:
            verifier = ufs.verifier_for(name, state.toolkit)
        except ValueError as err:
            st.error(literal(str(err)))
            return
        with st.spinner(f"Verifying {task.items} facts…"):
            cache[key] = verifier_labels(store.items(task.id, owner=me), verifier)
    if key in cache:
        _versus(labels, cache[key], f"verifier {name}", "ann_verifier")


def queue(store: AnnotationStore, task: TaskInfo, labels, lead: str | None, me: str) -> None:
    st.subheader("Adjudication queue")
    disputed = ag.disagreements(labels)
    finals = store.adjudications(task.id, owner=me)
    open_only = st.toggle("Only items without a final label", value=True, key="ann_queue_open")
    ids = [i for i in store.sequence(task.id, "", "all", owner=me) if i in disputed and (not open_only or i not in finals)]
    st.caption(f"{len(disputed)} items where annotators disagree; {sum(i in finals for i in disputed)} have a final label.")
    if not ids:
        return
    if not lead:
        st.info("Type your name in the sidebar to pick final labels (it is recorded as the lead).")
    pages = (len(ids) + QUEUE_PAGE - 1) // QUEUE_PAGE
    page = st.number_input("Page", 1, pages, 1, key="ann_queue_page") if pages > 1 else 1
    for item_id in ids[(page - 1) * QUEUE_PAGE: page * QUEUE_PAGE]:
        item = store.item(task.id, item_id, owner=me)
        with st.container(border=True):
            st.markdown(f"**{literal(item_id)}**: {literal(item.fact)}")
            votes = "; ".join(f"{literal(a)}: {x}" for a, x in disputed[item_id].items())
            gold = f" · gold: **{item.gold}**" if item.gold else ""
            final = f" · final: **{finals[item_id].label}** (by {literal(finals[item_id].lead)})" if item_id in finals else ""
            st.caption(votes + gold + final)
            if lead:
                cols = st.columns(len(LABELS))
                for col, label in zip(cols, LABELS):
                    if col.button(f"Final: {label}", key=f"ann_final:{item_id}:{label}"):
                        try:
                            store.adjudicate(task.id, item_id, label, lead, owner=me)
                        except (AnnotationError, KeyError) as err:
                            st.error(str(err))
                        else:
                            st.rerun()


def agreement_panel(store: AnnotationStore, task: TaskInfo, lead: str | None, me: str) -> None:
    labels = store.labels(task.id, owner=me)
    report = ag.agreement(labels, task.items)
    if not labels:
        st.info("No labels yet.")
        return
    _summary(report)
    _pair_heatmap(ag.by_annotator(labels))
    if not task.adjudication:
        st.caption("Gold labels, each annotator's agreement with them and the adjudication queue are shown in "
                   "adjudication mode (switch it on under Import / export when labelling is done).")
    else:
        gold = {i.item_id: i.gold for i in store.items(task.id, owner=me) if i.gold}
        if gold:
            st.subheader("Against the gold labels")
            _versus(labels, gold, "gold", "ann_gold")
        queue(store, task, labels, lead, me)
    verifier_panel(store, task, labels, me)
