"""The MCTS retriever's search in the UI: the trees (pyvis, offline), a node table, the reasoner's
inferences, and the notes of a search. The trace is data (`Trace(kind=TRACE_MCTS)`, built in core);
this module only draws it. Text that reaches HTML (labels, tooltips) goes through html.escape;
everything else goes through st.dataframe / st.text, which never interpret HTML."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st
from pyvis.network import Network

from core.dialogue import Trace, TraceNode
from ui import warmup
from ui.trees import short, with_tree_edges

TREE_COLOURS = {"bridge": "#4c78a8", "r1": "#f58518", "r2": "#54a24b", "r3": "#b279a2", "r4": "#e45756", "r5": "#72b7b2"}
ROOT_COLOUR = "#9d9d9d"
COMET_CAPTION = ("Reasoner: COMET is not available offline, so the configured LLM stands in for it: it completes each "
                 "Table I relation statement for the latest turn, each completion is scored by its mean token "
                 "log-probability, and a DPP keeps a confident, diverse subset.")


def node_tooltip(node: TraceNode) -> str:
    d = node.detail
    lines = [node.label if node.parent != "context" else f"tree {d.get('tree')}: {node.label}"]
    if "visits" in d:
        q = "" if node.value is None else f"Q {node.value:.3f} · "
        lines.append(f"{q}visits {d['visits']}" + (f" · prior {d['prior']:.3f}" if "prior" in d else ""))
    if d.get("critic") is not None:
        lines.append(f"critic {d['critic']:.3f}")
    if "rate" in d:
        lines.append(f"bridging rate {d['rate']:.3f} · WD {d['wd']:.5f}")
    if "sim_r" in d:
        lines.append(f"sim(r,k) {d['sim_r']:.3f} · sim(C,k) {d['sim_c']:.3f} · |k| {d['length']:.2f} · sim(k,k̂) {d['sim_prev']:.3f}")
    if d.get("concept"):
        lines.append(f"marked concept: {d['concept']}")
    return html.escape("\n".join(lines))


def tree_html(trace: Trace, height: str = "520px") -> str:
    """All trees under the context root, top-down: colour = tree (bridging or one reasoning
    outcome), size = visits, thick red = chosen path."""
    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line", layout=True)
    net.set_options('{"layout": {"hierarchical": {"direction": "UD", "sortMethod": "directed", "levelSeparation": 100}},'
                    ' "physics": {"enabled": false}, "interaction": {"hover": true}}')
    for node in trace.nodes:
        tree = node.detail.get("tree")
        colour = TREE_COLOURS.get(tree, "#bab0ac") if tree else ROOT_COLOUR
        value = "" if node.value is None else f"\n{node.value:.2f}"
        visits = node.detail.get("visits", 1) or 1
        net.add_node(node.id, label=html.escape(short(node.label, 26)) + value, title=node_tooltip(node), color=colour,
                     level=node.depth, shape="box", borderWidth=4 if node.chosen else 1, font={"color": "#000000"},
                     mass=1 + visits / 10)
    return with_tree_edges(net, trace)


def nodes_frame(trace: Trace) -> pd.DataFrame:
    rows = [{"tree": n.detail.get("tree", ""), "node": n.id, "depth": n.depth, "visits": n.detail.get("visits"),
             "Q": n.value, "critic": n.detail.get("critic"), "prior": n.detail.get("prior"), "chosen": n.chosen,
             "concept": n.detail.get("concept", ""), "sentence": n.label}
            for n in trace.nodes[1:] if not n.detail.get("root")]
    return pd.DataFrame(rows)


def reasoning_frame(reasoning: dict | None) -> pd.DataFrame:
    if not reasoning:
        return pd.DataFrame()
    rows = [{"relation": c["relation"], "inference": f"{c['statement']} {c['text']}",
             "tau (mean token log-prob)": None if c["tau"] is None else round(c["tau"], 3),
             "selected": c["selected"], "DPP order": c["rank"]} for c in reasoning["candidates"]]
    return pd.DataFrame(rows)


def trees_frame(root: dict) -> pd.DataFrame:
    return pd.DataFrame(root.get("trees", []))


def render_trace(trace: Trace, key: str = "", show_prompt: bool = True) -> None:
    root = trace.nodes[0].detail if trace.nodes else {}
    st.caption(COMET_CAPTION)
    concepts = ", ".join(root.get("context_concepts", [])) or "none"
    connectors = ", ".join(root.get("connectors", [])) or "none"
    size = root.get("subregion", 0)
    st.text(f"Context concepts N_C: {concepts}\nBridging connectors: {connectors}\n"
            f"Context sub-region K_c: {size if size else 'the whole KB (no bridging)'} sentence(s)")
    for note in root.get("notes", []):
        if "COMET" not in note:
            st.info(note)
    if root.get("reasoning"):
        st.markdown("**Reasoner: inference candidates**")
        st.dataframe(reasoning_frame(root["reasoning"]), hide_index=True, width="stretch")
    st.markdown("**Search trees** (blue: concept bridging; other colours: one tree per selected inference; "
                "thick border and red edges: chosen path; hover a node for its critic's parts)")
    st.iframe(tree_html(trace), height=540)
    st.dataframe(trees_frame(root), hide_index=True)
    st.dataframe(nodes_frame(trace), hide_index=True, width="stretch")
    if show_prompt and trace.prompt:
        st.markdown("**Prompt of the final answer**")
        for m in trace.prompt:
            st.text(f"[{m['role']}]\n{m['content']}")


def render_partial(trace: Trace) -> None:
    """The reply box while the answer is not written yet: the reasoner's selected inferences, then
    the knowledge the search chose (the trees come with the finished reply's details)."""
    root = trace.nodes[0].detail if trace.nodes else {}
    reasoning = root.get("reasoning") or {}
    chosen = sorted((c for c in reasoning.get("candidates", []) if c.get("selected")), key=lambda c: c.get("rank") or 0)
    if chosen:
        st.markdown("**Reasoner** (the LLM standing in for COMET), selected inferences:")
        st.text("\n".join(f"{c['relation']}: {c['statement']} {c['text']}" for c in chosen))
    if root.get("phase") == "reasoned":
        st.caption(f"Reasoner: {reasoning.get('seconds', 0):.1f} s. Searching the knowledge base…")
        return
    knowledge = root.get("knowledge", [])
    if root.get("phase") == "context":
        st.markdown(f"**Knowledge for the context alone** (MCTS without the reasoner, {len(knowledge)} sentence(s)); "
                    "the reasoner is inferring…")
    else:
        st.markdown(f"**Knowledge retrieved** (MCTS, {len(knowledge)} sentence(s)); writing the answer…")
    st.text("\n".join(f"{i}. {k['text']}  ({k['score']:.2f})" for i, k in enumerate(knowledge, 1)) or "(none found)")


# -- the Chat page's KB choice ---------------------------------------------------------------------
KB_PATH = "mcts_kb_path"  # st.session_state: this user's KB file for the `mcts` chat method


def _forget_instances() -> None:
    """A new KB file: drop this user's mcts method instances so the next reply loads it."""
    from core.methods.mcts.method import MCTSMethod

    for key in [k for k, v in st.session_state.items() if isinstance(v, MCTSMethod)]:
        del st.session_state[key]


def kb_picker() -> None:
    """The KB file box; picking `mcts` starts preparing that file's index in the background, and
    its progress shows here until it is ready."""
    from core.methods.mcts.config import DEFAULT_KB

    st.session_state.setdefault(KB_PATH, str(DEFAULT_KB))
    path = st.text_input("Knowledge base (GenericsKB format)", key=KB_PATH, on_change=_forget_instances,
                         help="term<TAB>sentence<TAB>score per line. Its index is built once in the background (minutes "
                              "for 50k sentences on 2 cores; `python -m core models --prepare mcts-kb` builds the default "
                              "one ahead) and cached; later starts load it in about a second.")
    from pathlib import Path

    if not Path(path).is_file():
        st.warning(f"No file at {path}")
    elif warmup.enabled() and warmup.kb_enabled():  # off (tests): the first reply prepares it, progress in the reply box
        prep = kb_preparation()
        if not prep.state().done:
            st.fragment(run_every=1.0)(_kb_status)(prep)
        else:
            _kb_status(prep)
    st.caption(COMET_CAPTION)


def kb_preparation():
    """The process-wide preparation of this user's KB index (started on the first ask)."""
    from core.methods.mcts.prepare import prepare_kb
    from ui import resources, state

    config = chat_config()
    return prepare_kb(config.kb.path, resources.embedder(state.embedder_choice()), config.kb)  # the method's embedder


def _kb_status(prep) -> None:
    now = prep.state()
    if now.stage == "failed":
        st.error(now.describe())
    elif now.done:
        st.caption(now.describe())
    else:
        st.progress(now.fraction, text=now.describe())


def wait_for_kb(poll_s: float = 0.5) -> None:
    """In the reply box: the index's progress until it is ready (a reply needs it). The Stop
    button still works: it reruns the page, which ends this loop; the build goes on."""
    prep = kb_preparation()
    if prep.state().done:
        return
    bar = st.empty()
    while not prep.wait(poll_s):
        now = prep.state()
        bar.progress(now.fraction, text=now.describe())
    bar.empty()


def chat_config():
    """The `mcts` method's settings with this user's KB file."""
    from dataclasses import replace

    from core.methods.mcts.config import DEFAULT_KB, MCTSConfig

    config = MCTSConfig()
    return replace(config, kb=replace(config.kb, path=st.session_state.get(KB_PATH, str(DEFAULT_KB))))
