"""Rendering of a method's Reply: evidence table, timings, trace. Traces are data; this turns them
into widgets. Text goes through st.dataframe / st.text / st.code, which never interpret HTML."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.dialogue import Reply
from core.llm.cost import totals
from ui import screens


def caption(reply: Reply) -> str:
    total = sum(reply.timings.values())
    if reply.stopped and not reply.text.strip():
        return f"{reply.method} · {reply.model} · stopped before any text was written"
    if reply.stopped:  # kept as far as it was written when Stop or another message cut it short
        return f"{reply.method} · {reply.model} · stopped before it was finished (the text above is what it had written)"
    line = f"{reply.method} · {reply.model} · {total:.2f} s · {reply.llm_calls} LLM call(s)"
    if reply.cost:
        used = totals(reply.cost)
        line += f" · {used['prompt_tokens']:,} prompt + {used['completion_tokens']:,} completion tokens"
    if reply.draft:
        line += " · edited by the reply check"
    return line


SOURCE_COLUMNS = ("said", "said by", "round")  # where a memory fact came from (dsmart's tree facts)


def evidence_frame(reply: Reply) -> pd.DataFrame:
    """The evidence, and where an item says so, the words it came from, who said them and the round."""
    extra = [c for c in SOURCE_COLUMNS if any(c in e.meta for e in reply.evidence)]
    return pd.DataFrame(
        [{"score": round(e.score, 3), "source": e.source, "kind": e.kind, "text": e.text,
          **{c: e.meta.get(c) for c in extra}} for e in reply.evidence],
        columns=["score", "source", "kind", "text", *extra],
    )


COST_COLUMNS = ("llm_calls", "prompt_tokens", "completion_tokens")


def timings_frame(reply: Reply) -> pd.DataFrame:
    """Seconds, LLM calls and tokens per stage (stages with calls but no timing too), and for
    methods that maintain memory in the background, the previous round's maintenance."""
    stages = list(reply.timings) + [k for k in reply.cost if k not in reply.timings]
    rows = [{"stage": k, "seconds": round(reply.timings[k], 3) if k in reply.timings else None,
             **{c: reply.cost.get(k, {}).get(c, 0) for c in COST_COLUMNS}} for k in stages]
    root = reply.trace.nodes[0].detail if reply.trace and reply.trace.nodes else {}
    if "memory_maintenance_cost" in root:
        rows.append({"stage": "memory maintenance (previous round, in the background)",
                     "seconds": root.get("memory_maintenance_s"),
                     **{c: root["memory_maintenance_cost"].get(c, 0) for c in COST_COLUMNS}})
    return pd.DataFrame(rows, columns=["stage", "seconds", *COST_COLUMNS])


def render_details(reply: Reply, key: str) -> None:
    st.caption(caption(reply))
    if reply.stopped:  # no evidence, timings or trace were kept
        return
    with st.expander("Evidence, timings and trace"):
        if reply.draft:  # what the method wrote before the reply check (core.reply_check)
            st.caption("The reply check changed the method's text: sentences repeating your message or an earlier "
                       "reply are taken out, your own facts are said back to you as \"you\", and a reply that did "
                       "nothing but repeat is written once more. The method wrote:")
            st.text(reply.draft)
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
    if reply.trace is None:
        st.write("No trace.")
        return
    screens.trace_view(reply.trace.kind).draw(reply, key)
