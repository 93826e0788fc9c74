"""The Retrieval comparison page's commonsense-knowledge tab: RAG (dense), BM25, SGMem-style and
MCTS (with its ablations) over the same knowledge base for one dialogue context, side by side with
the MCTS search trees; and charts of `knowledge-retrieval` benchmark runs."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from core.benchmarks.runner import read_run
from core.data.chitchat import DialogueFormatError, load_chitchat
from core.llm import LLMError
from core.methods.mcts.config import ABLATIONS, DEFAULT_KB
from core.methods.mcts.kb import KBFormatError
from core.paths import SHARED_DIR
from ui import mcts as mcts_ui
from ui import resources, runs, state

DD_DEFAULT = SHARED_DIR / "data" / "dailydialog" / "dialogues_test.txt"
ED_DEFAULT = SHARED_DIR / "data" / "empatheticdialogues" / "ed_test.jsonl"
KB_METHODS = ["mcts", "mcts-no-reasoner", "mcts-no-bridging", "dense", "bm25", "sgmem"]
LAST = "knowledge_last"  # st.session_state: the last comparison shown


@st.cache_data(show_spinner="Reading the dialogues…", max_entries=4)
def chitchat(path: str):
    return load_chitchat(path)


@st.cache_resource(show_spinner="Loading the knowledge base (the first time builds and caches it: minutes for 50k sentences)…")
def knowledge_base(path: str):
    """The KB of a file: shared and read-only once built, like a model."""
    from core.methods.mcts.kb import load_or_build

    return load_or_build(path, resources.embedder())


def _context_picker() -> tuple[list[str], str, str]:
    """(context turns, the next human turn if known, a key naming the context)."""
    source = st.radio("Context from", ["DailyDialog file", "EmpatheticDialogues file", "Type a context"], horizontal=True)
    if source == "Type a context":
        text = st.text_area("Context, one turn per line", "A: The taxi drivers are on strike again.\nB: What for?\n"
                            "A: They want the government to reduce the price of the gasoline.")
        lines = [line for line in text.splitlines() if line.strip()]
        return lines, "", f"typed:{text}"
    default = DD_DEFAULT if source.startswith("Daily") else ED_DEFAULT
    path = st.text_input(f"{source}", value=str(default))
    if not Path(path).is_file():
        st.warning(f"No file at {path}")
        return [], "", ""
    try:
        dialogues = chitchat(path)
    except DialogueFormatError as err:
        st.error(str(err))
        return [], "", ""
    usable = [d for d in dialogues if len(d.utterances) >= 2]
    i = st.selectbox("Dialogue", range(len(usable)),
                     format_func=lambda i: f"{usable[i].id}: {usable[i].utterances[0][:70]}")
    d = usable[i]
    n = len(d.utterances) - 1
    turns = st.slider("Context turns", 1, min(8, n), min(4, n))
    return d.lines(n)[-turns:], d.utterances[n], f"{path}:{d.id}:{turns}"


def render_compare() -> None:
    st.caption("Knowledge sentences from a commonsense KB (GenericsKB sample, 50k sentences) for a dialogue context: "
               "**dense** = RAG with all-MiniLM-L6-v2 (SBERT), **bm25**, **sgmem** = SGMem-style KNN sentence graph, "
               "and **mcts** = the paper's reasoning-aware retriever (concept bridging, then one MCTS tree per reasoning "
               "outcome) with its two ablations. As in the paper, the baselines search with the context plus the "
               "reasoner's inferences. " + mcts_ui.COMET_CAPTION)
    left, right = st.columns([1, 2])
    with left:
        context, transition, key = _context_picker()
        kb_path = st.text_input("Knowledge base (GenericsKB format)", value=str(DEFAULT_KB), key="knowledge_kb")
        methods = st.multiselect("Methods", KB_METHODS, default=["dense", "sgmem", "mcts"])
        k = st.slider("Sentences per method", 1, 10, 5)
        use_llm = st.checkbox("Run the reasoner (the configured LLM)", value=True,
                              help="Off: mcts and mcts-no-bridging search for the context alone, like mcts-no-reasoner.")
        simulations = st.slider("MCTS simulations per tree", 4, 64, ABLATIONS["mcts"].search.simulations)
        run = st.button("Retrieve knowledge", type="primary", disabled=not context or not methods)
    with right:
        if context:
            st.text("Context:\n" + "\n".join(context) + (f"\n\nNext human turn: {transition}" if transition else ""))
        if run:
            shown = _run(context, kb_path, methods, k, use_llm, simulations)
            if shown is not None:
                st.session_state[LAST] = (key, transition, *shown)
        last = st.session_state.get(LAST)
        if last and last[0] == key:
            _show(*last[1:])


def _run(context, kb_path, methods, k, use_llm, simulations):
    from core.methods.mcts.baselines import BASELINES
    from core.methods.mcts.reasoner import Reasoner
    from core.methods.mcts.retriever import KnowledgeSearch, result_trace

    try:
        kb = knowledge_base(kb_path)
    except (KBFormatError, OSError) as err:
        st.error(f"Cannot load the knowledge base: {err}")
        return None
    embedder = resources.embedder()
    reasoning, reason_s = None, 0.0
    if use_llm and any(m not in ("mcts-no-reasoner",) for m in methods):
        try:
            with st.spinner("The reasoner (LLM) infers from the context…"):
                t0 = time.perf_counter()
                reasoning = Reasoner(state.toolkit().llm, embedder).infer(context)
                reason_s = time.perf_counter() - t0
        except LLMError as err:
            st.error(f"The LLM backend failed, so no reasoner: {err}")
    results = {}
    for name in methods:
        t0 = time.perf_counter()
        if name in ABLATIONS:
            config = ABLATIONS[name]
            config = replace(config, search=replace(config.search, simulations=simulations))
            result = KnowledgeSearch(kb, embedder, config).run(context, reasoning, k)
            found, trace, notes = list(result.knowledge), result_trace(result, kb), list(result.notes)
        else:
            query = " ".join(context) + ("" if reasoning is None else " " + " ".join(r.sentence for r in reasoning.selected))
            found, trace, notes = BASELINES[name](kb, embedder).retrieve(query, k), None, []
        results[name] = (found, time.perf_counter() - t0, trace, notes)
    return results, reasoning, reason_s


def _show(transition, results, reasoning, reason_s) -> None:
    if reasoning is not None:
        st.caption(f"Reasoner: {len(reasoning.candidates)} inference(s), {len(reasoning.selected)} selected by the DPP, "
                   f"{reason_s:.2f} s (shared by the methods that use it)")
    for col, (name, (found, seconds, _, notes)) in zip(st.columns(len(results)), results.items()):
        with col:
            st.subheader(name)
            st.caption(f"{1000 * seconds:.0f} ms" + (" + reasoner" if reasoning is not None and name != "mcts-no-reasoner" else ""))
            for note in notes:
                if "COMET" not in note:
                    st.info(note)
            for rank, e in enumerate(found, 1):
                with st.container(border=True):
                    st.markdown(f"**{rank}.** score {e.score:.3f}")
                    st.text(e.text)  # no markdown, no HTML
    traced = [(name, trace) for name, (_, _, trace, _) in results.items() if trace is not None]
    for position, (name, trace) in enumerate(traced):
        with st.expander(f"{name}: search trees", expanded=position == 0):  # the first search's trees open
            mcts_ui.render_trace(trace, key=f"knowledge:{name}", show_prompt=False)


# -- benchmark runs ----------------------------------------------------------------------------------
DIVERSITY = ["semantic_overlap_f1", "rouge1_overlap", "rouge2_overlap", "rougel_overlap"]


def results_frame(summary: dict) -> pd.DataFrame:
    rows = []
    for method, res in summary["results"].items():
        t = summary.get("timings", {}).get(method, {}).get("query", {})
        row = {"method": method, **{k: v for k, v in res.items() if not isinstance(v, dict)}}
        if t:
            row["query median s"], row["query p95 s"] = round(t["median_s"], 3), round(t["p95_s"], 3)
        rows.append(row)
    return pd.DataFrame(rows)


def curve_frame(summary: dict) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, "threshold": float(t), "alignment": v}
                         for m, res in summary["results"].items() for t, v in res.get("alignment_curve", {}).items()])


def paired_frame(summary: dict) -> pd.DataFrame:
    """One row per (MCTS row - baseline, metric): the mean paired difference and its 95% interval."""
    return pd.DataFrame([{"pair": pair, "metric": metric, "difference": v["diff"], "95% low": v["low"],
                          "95% high": v["high"], "contexts": v["n"]}
                         for pair, cells in summary.get("paired", {}).items() for metric, v in cells.items()])


def render_runs(root: Path) -> None:
    found = runs.find_runs(root, ("knowledge-retrieval",)) if root.is_dir() else []
    st.subheader("Knowledge retrieval runs")
    chosen = st.multiselect("knowledge-retrieval run folders", [str(p) for p in found], default=[str(p) for p in found[:1]])
    if not found:
        st.info(f"No knowledge-retrieval runs under {root} yet. Run e.g. `python -m core bench knowledge-retrieval "
                f"--data ../shared/data/dailydialog/dialogues_test.txt --kb ../shared/data/genericskb/GenericsKB.txt "
                f"--limit 50 --out {root}/knowledge-dd`.")
    for folder in chosen:
        summary, _ = read_run(folder)
        st.markdown(f"**{Path(summary['data']).name}** · {summary.get('contexts', '?')} contexts · {summary.get('code_version', '')}")
        frame = results_frame(summary)
        st.dataframe(frame, hide_index=True)
        long = frame.melt(id_vars="method", value_vars=[c for c in DIVERSITY + ["alignment@0.5"] if c in frame])
        st.plotly_chart(px.bar(long, x="variable", y="value", color="method", barmode="group",
                               title="pairwise overlap (lower = more diverse) and alignment@0.5 (higher = better), 0-100"),
                        key=f"kbar:{folder}")
        paired = paired_frame(summary)
        if not paired.empty:
            st.caption("Paired on the same contexts, x100: an overlap below 0 = the MCTS row is more diverse; "
                       "alignment above 0 = better aligned. An interval that holds 0 is no clear difference.")
            st.dataframe(paired, hide_index=True)
        curve = curve_frame(summary)
        if not curve.empty:
            st.plotly_chart(px.line(curve, x="threshold", y="alignment", color="method", markers=True,
                                    title="human-logic alignment over entailment thresholds"), key=f"kcurve:{folder}")
