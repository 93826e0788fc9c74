"""Rendering of a method's Reply: evidence table, timings, trace. Traces are data; this turns them
into widgets. Text goes through st.dataframe / st.text / st.code, which never interpret HTML."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.dialogue import Reply


def caption(reply: Reply) -> str:
    total = sum(reply.timings.values())
    return f"{reply.method} · {reply.model} · {total:.2f} s · {reply.llm_calls} LLM call(s)"


def evidence_frame(reply: Reply) -> pd.DataFrame:
    return pd.DataFrame(
        [{"score": round(e.score, 3), "source": e.source, "kind": e.kind, "text": e.text} for e in reply.evidence]
    )


def timings_frame(reply: Reply) -> pd.DataFrame:
    return pd.DataFrame([{"stage": k, "seconds": round(v, 3)} for k, v in reply.timings.items()])


def render_details(reply: Reply, key: str) -> None:
    st.caption(caption(reply))
    with st.expander("Evidence, timings and trace"):
        tabs = st.tabs(["Evidence", "Timings", "Trace"])
        with tabs[0]:
            if reply.evidence:
                st.dataframe(evidence_frame(reply), hide_index=True, width="stretch")
            else:
                st.write("No retrieved evidence: this method answers from the dialogue history.")
        with tabs[1]:
            st.dataframe(timings_frame(reply), hide_index=True)
        with tabs[2]:
            render_trace(reply, key)


def render_trace(reply: Reply, key: str = "") -> None:
    trace = reply.trace
    if trace is None:
        st.write("No trace.")
        return
    if trace.kind == "tree" and trace.nodes:
        from ui.trees import render_tree

        render_tree(reply, key)
        return
    if trace.kind == "mcts" and trace.nodes:
        from ui.mcts import render_trace as render_mcts

        render_mcts(trace, key)
        return
    if trace.kind == "kg":  # kgaug / kgaug-c: rewrite, linked entities, the chosen triples as a graph
        from ui.kg import render_kg_trace

        render_kg_trace(reply, key)
        return
    if trace.nodes:
        st.dataframe(
            pd.DataFrame(
                [{"id": n.id, "parent": n.parent, "depth": n.depth, "label": n.label, "value": n.value, "chosen": n.chosen} for n in trace.nodes]
            ),
            hide_index=True,
        )
    for m in trace.prompt:
        st.markdown(f"**{m['role']}**")
        st.text(m["content"])
