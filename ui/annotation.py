"""The Annotation page's labelling panel: one item at a time, labels saved the moment they are given.

Keyboard: the buttons carry Streamlit's own `shortcut=` (1 / 2 / 3 label, n next or skip, b back,
e evidence on/off); Streamlit ignores them while the focus is in a text field, so typing a comment
never labels. The panel is an st.fragment: a label or a step reruns only this panel, which keeps the
key-press-to-next-item time short (docs/annotation.md).

All user and file text is shown as text: Markdown through ui.safe.literal, and the one piece of HTML
(the response with the fact highlighted) through html.escape.
"""

from __future__ import annotations

import html
import time

import streamlit as st

from core.annotation import LABELS, AnnotationError, AnnotationStore, Item, Label
from ui import resources
from ui.safe import literal

SHORTCUTS = {"label:Supports": "1", "label:Refutes": "2", "label:Not Enough Info": "3", "next": "n", "back": "b",
             "evidence": "e"}
BUTTON_KEYS = {name: "ann_btn_" + name.replace("label:", "").replace(" ", "_").lower() for name in SHORTCUTS}
FILTERS = {
    "all": "All items", "unlabelled": "Not yet labelled by me", "labelled": "Labelled by me",
    "disagreements": "Disagreements (items I labelled)", **{f"label:{x}": f"My label: {x}" for x in LABELS},
}
SHOW_EVIDENCE = "ann_show_evidence"
FILTER_KEY = "ann_filter"
MESSAGE = "ann_message"


@st.cache_resource(show_spinner=False)
def _store(path: str) -> AnnotationStore:
    return AnnotationStore(path)  # holds the engine (a small connection pool): every call is its own transaction


def annotation_store() -> AnnotationStore:
    resources.default_store()  # a wrong or unreachable WORKBENCH_DB stops the page here, with one line
    return _store(resources.database_path())


def at_key(task_id: str, annotator: str) -> str:
    return f"ann_at:{task_id}:{annotator}"


def _field(kind: str, task_id: str, item_id: str, extra: str = "") -> str:
    return f"ann_{kind}:{task_id}:{item_id}:{extra}"


# -- moving through the sequence -------------------------------------------------------------------
def _after(seq: list[str], order: dict[str, int], current: str | None) -> str | None:
    """The first item of `seq` after `current` in task order (`current` may have left `seq`)."""
    here = order.get(current, -1)
    return next((i for i in seq if order[i] > here), None)


def _before(seq: list[str], order: dict[str, int], current: str | None) -> str | None:
    here = order.get(current, len(order))
    return next((i for i in reversed(seq) if order[i] < here), None)


def _move(store: AnnotationStore, task_id: str, annotator: str, me: str, current: str, step: str) -> None:
    order = {i: k for k, i in enumerate(store.sequence(task_id, annotator, "all", owner=me))}
    seq = store.sequence(task_id, annotator, st.session_state.get(FILTER_KEY, "all"), owner=me)
    if step == "back":
        target = _before(seq, order, current) or current
    elif step == "next":  # skip: on to the next item, wrapping round
        target = _after(seq, order, current) or (seq[0] if seq else current)
    else:  # after a label: the next item, else the first one still unlabelled, else stay
        target = _after(seq, order, current) or store.resume_point(task_id, annotator, owner=me) or current
    st.session_state[at_key(task_id, annotator)] = target


def _give(store: AnnotationStore, task_id: str, item: Item, annotator: str, me: str, label: str) -> None:
    evidence = [item.evidence[k - 1].id for k in st.session_state.get(_field("ev", task_id, item.item_id)) or []]
    try:
        store.label(task_id, item.item_id, annotator, label, owner=me, evidence=evidence,
                    not_claim=bool(st.session_state.get(_field("nc", task_id, item.item_id))),
                    comment=st.session_state.get(_field("comment", task_id, item.item_id), ""))
    except (AnnotationError, KeyError) as err:
        st.session_state[MESSAGE] = f"Not saved: {err}"
        return
    _move(store, task_id, annotator, me, item.item_id, "label")


def _toggle_evidence() -> None:
    st.session_state[SHOW_EVIDENCE] = not st.session_state.get(SHOW_EVIDENCE, True)


# -- drawing -----------------------------------------------------------------------------------------
def highlight_html(response: str, span: tuple[int, int] | None) -> str:
    """The response as escaped HTML, the fact's span marked."""
    body = html.escape(response)
    if span:
        a, b = span
        body = f"{html.escape(response[:a])}<mark>{html.escape(response[a:b])}</mark>{html.escape(response[b:])}"
    return f'<div style="white-space: pre-wrap">{body}</div>'


def _progress(store: AnnotationStore, task_id: str, annotator: str, total: int, me: str) -> None:
    done = store.progress(task_id, owner=me)
    mine = done.get(annotator, 0)
    st.progress(mine / total if total else 0.0, text=f"{annotator}: {mine} of {total} labelled")
    others = {a: n for a, n in done.items() if a != annotator}
    if others:
        with st.expander(f"Progress of the other {len(others)} annotator(s)"):
            for name, n in others.items():
                st.progress(n / total if total else 0.0, text=f"{name}: {n} of {total}")


def _context(item: Item) -> None:
    if item.history:
        lines = [f"**{literal(speaker or '?')}:** {literal(text)}" for speaker, text in item.history]
        with st.expander(f"Dialogue history ({len(item.history)} turns)", expanded=len(item.history) <= 4):
            st.markdown("  \n".join(lines))
    if item.query:
        st.markdown(f"**Query:** {literal(item.query)}")
    if item.response:
        st.caption("Response (the fact's place is highlighted)" if item.span else "Response")
        st.html(highlight_html(item.response, item.span))


def _evidence(task_id: str, item: Item, mine: Label | None, adjudication: bool) -> None:
    """The passages as one block of text and one multi-select of their numbers: two elements
    rather than two per passage, which keeps each item quick to draw."""
    if not item.evidence:
        st.caption("No evidence passages with this item.")
        return
    if not st.session_state.get(SHOW_EVIDENCE, True):
        st.caption(f"{len(item.evidence)} evidence passages hidden (press e to show them).")
        return
    blocks = [f"**Evidence passages** ({len(item.evidence)})"]
    for k, passage in enumerate(item.evidence, start=1):
        gold = " (gold evidence)" if adjudication and passage.id in item.gold_evidence else ""
        title = " · ".join(x for x in (passage.title, passage.section) if x)
        blocks.append(f"**{k}.**{gold} " + (f"{literal(title)}: " if title else "") + literal(passage.text))
    st.markdown("\n\n".join(blocks))
    chosen = set(mine.evidence) if mine else set()
    st.pills("Passages that are evidence for your label", list(range(1, len(item.evidence) + 1)), selection_mode="multi",
             default=[k for k, p in enumerate(item.evidence, start=1) if p.id in chosen],
             key=_field("ev", task_id, item.item_id))


def _judgments(store: AnnotationStore, task_id: str, item: Item, annotator: str, mine: Label | None, me: str,
               adjudication: bool) -> None:
    if adjudication and item.gold:
        claim = "" if item.gold_claim is None else (" · a factual claim" if item.gold_claim else " · not a factual claim")
        st.info(f"Gold label (adjudication mode): **{item.gold}**{claim}")
    if mine is None:
        st.caption("Other annotators' labels of this item appear once you have labelled it.")
        return
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(mine.created_at))
    st.caption(f"Your label: **{mine.label}** ({when})" + (" · not a factual claim" if mine.not_claim else ""))
    if mine.item_version < item.version:
        st.warning(f"The item changed since you labelled it (version {mine.item_version} → {item.version}): check your label.")
    others = [lb for lb in store.labels(task_id, owner=me, item_id=item.item_id) if lb.annotator != annotator]
    if others:
        st.caption("Other annotators: " + "; ".join(f"{literal(o.annotator)}: {o.label}" for o in others))
    history = store.history(task_id, item.item_id, owner=me, annotator=annotator)
    if len(history) > 1:
        with st.expander(f"Your {len(history)} labels of this item"):
            st.dataframe([{"label": h.label, "evidence": ", ".join(h.evidence), "not a claim": h.not_claim,
                           "comment": h.comment, "item version": h.item_version,
                           "at": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(h.created_at))} for h in history],
                         hide_index=True)


def _buttons(store: AnnotationStore, task_id: str, item: Item, annotator: str, mine: Label | None, me: str) -> None:
    cols = st.columns([3, 3, 3, 2, 2, 2])
    for col, label in zip(cols, LABELS):
        name = f"label:{label}"
        col.button(label, key=BUTTON_KEYS[name], shortcut=SHORTCUTS[name], width="stretch",
                   type="primary" if mine is not None and mine.label == label else "secondary",
                   on_click=_give, args=(store, task_id, item, annotator, me, label))
    cols[3].button("Back", key=BUTTON_KEYS["back"], shortcut=SHORTCUTS["back"], width="stretch",
                   on_click=_move, args=(store, task_id, annotator, me, item.item_id, "back"))
    cols[4].button("Next / skip", key=BUTTON_KEYS["next"], shortcut=SHORTCUTS["next"], width="stretch",
                   on_click=_move, args=(store, task_id, annotator, me, item.item_id, "next"))
    cols[5].button("Evidence", key=BUTTON_KEYS["evidence"], shortcut=SHORTCUTS["evidence"], width="stretch",
                   on_click=_toggle_evidence)


@st.fragment
def label_panel(store: AnnotationStore, task_id: str, annotator: str, me: str, adjudication: bool) -> None:
    order = store.sequence(task_id, annotator, "all", owner=me)
    if not order:
        st.info("This task has no items yet: add some under Import / export.")
        return
    _progress(store, task_id, annotator, len(order), me)
    view = st.selectbox("Show", list(FILTERS), format_func=FILTERS.get, key=FILTER_KEY)
    seq = order if view == "all" else store.sequence(task_id, annotator, view, owner=me)
    key = at_key(task_id, annotator)
    if key not in st.session_state:  # a new session (a reload, a restart): resume where this annotator stopped
        st.session_state[key] = store.resume_point(task_id, annotator, owner=me) or order[0]
    current = st.session_state[key]
    if current not in seq:
        positions = {i: k for k, i in enumerate(order)}
        current = _after(seq, positions, current) or (seq[0] if seq else None)
    if current is None:
        st.success("Nothing in this view." if view != "unlabelled" else "You have labelled every item of this task.")
        return
    st.session_state[key] = current
    if MESSAGE in st.session_state:
        st.error(literal(st.session_state.pop(MESSAGE)))
    item = store.item(task_id, current, owner=me)
    mine = store.get_label(task_id, current, annotator, owner=me)
    st.markdown(f"**Item {order.index(current) + 1} of {len(order)}** ({seq.index(current) + 1} of {len(seq)} shown) · "
                f"id {literal(current)}" + (f" · response by {literal(item.source)}" if item.source else ""))
    _context(item)
    st.markdown("**Fact to judge:**")
    st.markdown(f"> {literal(item.fact)}")
    _evidence(task_id, item, mine, adjudication)
    c1, c2 = st.columns([1, 3])
    c1.checkbox("Not a factual claim", value=bool(mine and mine.not_claim), key=_field("nc", task_id, current))
    c2.text_input("Comment (optional)", value=mine.comment if mine else "", max_chars=2000,
                  key=_field("comment", task_id, current), label_visibility="collapsed", placeholder="Comment (optional)")
    _buttons(store, task_id, item, annotator, mine, me)
    st.caption("Keys: **1** Supports · **2** Refutes · **3** Not Enough Info (saves and moves on) · **n** next/skip · "
               "**b** back · **e** evidence on/off. Keys do nothing while typing in a field.")
    _judgments(store, task_id, item, annotator, mine, me, adjudication)
