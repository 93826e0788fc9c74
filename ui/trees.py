"""The Reasoning Tree of a D-SMART reply: an interactive tree (pyvis, offline), a node table, the
subgraph and trajectory of any node, and per-stage timings.

The trace is data (`Trace(kind=TRACE_TREE)`, stored as JSON with the reply); this module only draws it.
Dialogue text in node labels and tooltips is shown as text (see ui/graphs.py: pyvis's `tojson` and
vis-network's canvas and innerText); everything else goes through st.dataframe / st.text, which never
interpret HTML.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from pyvis.network import Network

from core.dialogue import Reply, Trace, TraceNode
from ui.graphs import offline_page

ACTION_COLOURS = {"ROOT": "#9d9d9d", "EXPAND_ENTITY": "#4c78a8", "FIND_PATH": "#54a24b", "THINK": "#eeca3b",
                  "ANSWER": "#e45756"}
CHOSEN_EDGE = "#d62728"
OTHER_EDGE = "#c7c7c7"
STAGES = (("link", "entity linking"), ("policy", "policy calls"), ("graph_actions", "graph actions"),
          ("think", "THINK texts"), ("value", "value calls"), ("answer_drafts", "answer drafts"),
          ("generate", "final generation"), ("read_memory", "read memory"))


def short(text: str, limit: int = 40) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_tooltip(node: TraceNode) -> str:
    d = node.detail
    lines = [node.label, f"value {node.value:.3f} · depth {node.depth} · prior {d.get('prior', 1.0):.3f}"]
    if d.get("query"):
        lines.append("query: " + short(d["query"], 300))
    if d.get("text"):
        lines.append(short(d["text"], 300))
    if d.get("new_facts"):
        lines.append("new facts: " + "; ".join(d["new_facts"][:8]))
    return "\n".join(lines)


def tree_html(trace: Trace, height: str = "460px") -> str:
    """The tree top-down as a standalone HTML page: colour = action, thick red = the chosen path,
    double border = the final beam."""
    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line", layout=True)
    net.set_options('{"layout": {"hierarchical": {"direction": "UD", "sortMethod": "directed", "levelSeparation": 110}},'
                    ' "physics": {"enabled": false}, "interaction": {"hover": true}}')
    for node in trace.nodes:
        action = node.detail.get("action", "ROOT")
        value = "" if node.value is None else f"\n{node.value:.2f}"
        net.add_node(node.id, label=short(node.label, 28) + value, title=node_tooltip(node),
                     color=ACTION_COLOURS.get(action, "#bab0ac"), level=node.depth, shape="box",
                     borderWidth=4 if node.chosen else (2 if node.detail.get("in_final_beam") else 1),
                     font={"color": "#000000"})
    return with_tree_edges(net, trace)


def with_tree_edges(net: Network, trace: Trace) -> str:
    """The trace's parent -> child edges added to `net` (the chosen path thick and red), as an
    offline page: the one edge drawing of every reasoning tree (D-SMART's, MCTS's)."""
    chosen = {n.id for n in trace.nodes if n.chosen}
    for node in trace.nodes:
        if node.parent is not None:
            on_path = node.id in chosen and node.parent in chosen
            net.add_edge(node.parent, node.id, color=CHOSEN_EDGE if on_path else OTHER_EDGE, width=4 if on_path else 1)
    return offline_page(net)


def nodes_frame(trace: Trace) -> pd.DataFrame:
    rows = [{"node": n.id, "parent": n.parent or "", "depth": n.depth, "action": n.label,
             "value": None if n.value is None else round(n.value, 3), "prior": n.detail.get("prior"),
             "chosen": n.chosen, "final beam": bool(n.detail.get("in_final_beam")), "facts": len(n.detail.get("subgraph", [])),
             "text": short(n.detail.get("text", ""), 120)} for n in trace.nodes]
    return pd.DataFrame(rows)


def facts_frame(lines: list[str]) -> pd.DataFrame:
    rows = []
    for line in lines:
        parts = [p.strip() for p in line.split(" | ", 2)]
        rows.append(dict(zip(("subject", "relation", "object"), parts + [""] * (3 - len(parts)))))
    return pd.DataFrame(rows, columns=["subject", "relation", "object"])


def stages_frame(reply: Reply) -> pd.DataFrame:
    root = reply.trace.nodes[0].detail if reply.trace and reply.trace.nodes else {}
    rows = [{"stage": label, "seconds": round(reply.timings[key], 3)} for key, label in STAGES if key in reply.timings]
    if "memory_maintenance_s" in root:
        rows.append({"stage": "memory maintenance (previous round, in the background)", "seconds": root["memory_maintenance_s"]})
    return pd.DataFrame(rows, columns=["stage", "seconds"])


def render_tree(reply: Reply, key: str = "") -> None:
    trace = reply.trace
    root = trace.nodes[0].detail
    links = ", ".join(f"{l['entity']} ({l['how']}, {l['score']:.2f})" for l in root.get("links", [])) or "none"
    st.caption(f"Stopped: {root.get('stop_reason', '?')} · {root.get('expansions', 0)} expansion(s) · "
               f"{len(trace.nodes)} node(s) · {root.get('batches', 0)} batched model call(s) · "
               f"memory: {root.get('memory_facts', 0)} fact(s)")
    st.text(f"Query entities linked to the memory: {links}")
    st.iframe(tree_html(trace), height=480)
    st.dataframe(nodes_frame(trace), hide_index=True, width="stretch")
    ids = [n.id for n in trace.nodes]
    best = next((i for i, n in enumerate(trace.nodes) if n.detail.get("best")), 0)
    picked = st.selectbox("Inspect node", ids, index=best, key=f"tree-node:{key}",
                          format_func=lambda i: f"{i} · {trace.nodes[ids.index(i)].label}")
    render_node(trace.nodes[ids.index(picked)])
    st.markdown("**Stage timings**")
    st.dataframe(stages_frame(reply), hide_index=True)
    st.markdown("**Prompt of the final answer**")
    for m in trace.prompt:
        st.text(f"[{m['role']}]\n{m['content']}")


def render_node(node: TraceNode) -> None:
    d = node.detail
    value = "—" if node.value is None else f"{node.value:.3f}"
    st.text(f"{node.label}  ·  value {value} ({d.get('value_source', '')})  ·  depth {node.depth}"
            + ("  ·  on the chosen path" if node.chosen else ""))
    if d.get("text"):
        st.text(d["text"])
    st.markdown("Trajectory")
    st.text("\n".join(f"{i}. {line}" for i, line in enumerate(d.get("trajectory", []), 1)) or "(root)")
    st.markdown(f"Subgraph ({len(d.get('subgraph', []))} facts; new at this node: {len(d.get('new_facts', []))})")
    st.dataframe(facts_frame(d.get("subgraph", [])), hide_index=True, width="stretch")
