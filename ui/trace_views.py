"""How the page draws each kind of trace (core.dialogue's TRACE_* constants): a stored reply's whole
trace, in its details, and for a kind that has one, the trace as it grows while the method works.
Each method's screen (ui.screens) holds the view of the kind its method writes; the page finds a
trace's view by the trace's own kind, so a reply drawn later shows as it was made. Traces are data;
text goes through st.dataframe / st.text, which never interpret HTML."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.dialogue import TRACE_KG, TRACE_MCTS, TRACE_PROMPT, TRACE_STEPS, TRACE_TREE, Reply, Trace
from ui import kg, mcts, trees

DrawTrace = Callable[[Reply, str], None]  # (the reply, a key unique on the page for its widgets)


def draw_table(reply: Reply, key: str = "") -> None:
    """Any trace: its nodes as a table, then the messages of the prompt."""
    trace = reply.trace
    if trace.nodes:
        rows = [{"id": n.id, "parent": n.parent, "depth": n.depth, "label": n.label, "value": n.value, "chosen": n.chosen}
                for n in trace.nodes]
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    for m in trace.prompt:
        st.markdown(f"**{m['role']}**")
        st.text(m["content"])


def nodes_or_table(draw: DrawTrace) -> DrawTrace:
    """A view of a tree, which reads its root's details: a trace of that kind with no node at all
    shows as the plain table instead."""
    def view(reply: Reply, key: str = "") -> None:
        (draw if reply.trace.nodes else draw_table)(reply, key)

    return view


def draw_mcts(reply: Reply, key: str = "") -> None:
    """ui.mcts draws from the trace alone: the retrieval pages show searches that have no reply."""
    mcts.render_trace(reply.trace, key)


@dataclass(frozen=True)
class TraceView:
    kind: str  # the core.dialogue TRACE_* constant of the traces it draws
    draw: DrawTrace = draw_table  # the whole trace of a reply, in the reply's details
    partial: Callable[[Trace], None] | None = None  # in the reply box while the method works; None: its progress lines as text


PROMPT = TraceView(TRACE_PROMPT)
STEPS = TraceView(TRACE_STEPS)
TREE = TraceView(TRACE_TREE, nodes_or_table(trees.render_tree))
MCTS = TraceView(TRACE_MCTS, nodes_or_table(draw_mcts), partial=mcts.render_partial)
KG = TraceView(TRACE_KG, kg.render_kg_trace)  # the rewrite, linked entities, the chosen triples as a graph
