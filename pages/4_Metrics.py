"""Metrics: MT-Bench-101 runs side by side: Table 1 (CS, DER, F1, BLEU, ROUGE-L, quality), CS by
turn (Figure 4), quality vs consistency (Figure 5), per-task breakdown, and turn-by-turn drill-down."""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from core.benchmarks.runner import BenchContext
from core.data.mtbench import load_mtbench, stratified
from core.methods import METHODS
from core.paths import SHARED_DIR
from ui import factscore as factscore_section
from ui import icons, metrics_demo, owner, resources, runs, safe, state, warmup
from ui import metrics as um

st.set_page_config(page_title="Metrics", page_icon=icons.FAVICON, layout="wide")
warmup.start()  # shared models load in the background while the page is read
owner.sidebar(owner.current_owner())  # runs are shared benchmark results, but sign-in applies here too
st.title("Consistency and factuality metrics")
tab_consistency, tab_facts = st.tabs(["Consistency (MT-Bench-101)", "Factuality (FactScore / NEIP)"])
with tab_facts:  # first in code: the consistency tab stops the script when no run is loaded
    factscore_section.section(resources.default_store(), owner.current_owner(), state.toolkit)
tab_consistency.caption(
    "D-SMART's NLI metrics: **CS** = ((P_E − P_C) + 1) / 2 of each reply against its dialogue history, **DER** = share of "
    "replies labelled ENTAILMENT; plus Word F1, BLEU and ROUGE-L against the benchmark's golden reply, and an LLM-judge "
    "quality score when a capable endpoint ran it. All are *higher is better*. Means are over dialogues; brackets are 95% "
    "bootstrap intervals. NLI model: the project's MiniLM cross-encoder trained here (the paper used DeBERTa-v3-large)."
)

RUNS_KEY = "metrics_runs"
root = runs.runs_root()
found = um.find_runs(root) if root.is_dir() else []

with st.sidebar:
    st.subheader("Runs")
    chosen = st.multiselect("Run folders", [str(p) for p in found], default=[str(p) for p in found[:1]],
                            help=f"mtbench runs found under {root}")
    extra = st.text_area("More run folders (one per line)", key="metrics_extra_paths",
                         help="Any folder written by `python -m core bench mtbench --out DIR`")

with tab_consistency:
    with st.expander("Start a small run (MT-Bench-101, golden context)"):
        with st.form("start_run"):
            data_file = st.text_input("Data file", value=str(SHARED_DIR / "data" / "mt-bench-101" / "mtbench101_dev.jsonl"))
            methods = st.multiselect("Methods", ["golden", *METHODS], default=["golden"])
            mode = st.radio("History", ["golden", "autoregressive"], horizontal=True)
            limit = st.number_input("Dialogues (spread over the 13 tasks)", min_value=1, max_value=60, value=13)
            max_tokens = st.number_input("Max tokens per reply", min_value=16, max_value=400, value=120)
            start = st.form_submit_button("Run")
        if start:
            path = Path(data_file)
            if not path.is_file():
                st.error(f"No such file: {path}")
            elif not methods:
                st.error("Pick at least one method.")
            else:
                try:
                    dialogues = stratified(load_mtbench(path), int(limit))
                except (OSError, ValueError) as err:  # the loader names the file, the line and the problem
                    st.error(safe.literal(f"Cannot use {path.name}: {err}"))
                    st.stop()
                out = root / f"mtbench-{time.strftime('%Y%m%d-%H%M%S')}"
                needs_llm = any(m != "golden" for m in methods)
                tools = state.toolkit() if needs_llm else None  # built here: the worker thread never touches Streamlit
                ctx = BenchContext(name="mtbench", data=path, out=out, methods=list(methods), limit=int(limit), seed=0,
                                   options={"mode": mode, "turns": "official", "nli_model": "", "max_tokens": int(max_tokens),
                                            "judge": False},
                                   make_tools=(lambda: tools) if needs_llm else None, progress=False)
                job = um.BackgroundRun(ctx, total=len(methods) * sum(len(d.rounds) for d in dialogues)).start()
                bar = st.progress(0.0, text="Running…")
                job.wait(lambda f: bar.progress(f, text=f"{f:.0%} of {job.total} turns"))
                if job.error is not None:
                    st.error(f"The run failed: {safe.literal(str(job.error))}")
                else:
                    st.success(f"Done: {out}")
                    st.session_state[RUNS_KEY] = [*st.session_state.get(RUNS_KEY, []), str(out)]

    paths = [*chosen, *st.session_state.get(RUNS_KEY, []), *(line.strip() for line in extra.splitlines() if line.strip())]
    runs, errors = um.load_runs([Path(p) for p in dict.fromkeys(paths)])
    for error in errors:
        st.warning(error)
    if not runs:
        demo = metrics_demo.demo_summaries()
        if demo:  # a fresh install opens on the shipped runs, marked as a demo, as Retrieval opens on LoCoMo
            st.info("**Demo**: the shipped runs of the embedded 0.5B model (not yours). Start a run above, or write one with "
                    f"`python -m core bench mtbench --data FILE --out DIR`; runs under {root} are listed in the sidebar.")
            st.caption(safe.literal(metrics_demo.describe(demo)))
            st.subheader("Overall, demo (cf. D-SMART Table 1)")
            st.dataframe(metrics_demo.demo_table(demo), hide_index=True, width="stretch")
            st.subheader("CS by dialogue turn, demo (Figure 4)")
            st.plotly_chart(metrics_demo.demo_cs_by_turn(demo), width="stretch", key="demo_cs_by_turn")
        else:
            st.info(f"No run loaded. Write one with `python -m core bench mtbench --data FILE --out DIR` (or start one above) "
                    f"and pick it in the sidebar; runs under {root} are listed automatically.")
        st.stop()

    items = um.combined_items(runs)
    for run in runs:
        s = run.summary
        st.caption(f"**{run.name}**: {s.get('data')} · mode {s.get('settings', {}).get('mode')} · "
                   f"{s.get('settings', {}).get('dialogues', '?')} dialogues · NLI {s.get('settings', {}).get('nli_model', '?')} · "
                   f"code {s.get('code_version')}")

    st.subheader("Overall (cf. D-SMART Table 1)")
    st.dataframe(um.table1(items), hide_index=True, width="stretch")
    with st.expander("The paper's Table 1 (GPT-4o and Qwen3-8B with a DeBERTa-v3-large NLI judge; not comparable in model size)"):
        st.dataframe(um.PAPER_TABLE1, hide_index=True)

    left, right = st.columns(2)
    with left:
        st.subheader("CS by dialogue turn (Figure 4)")
        st.plotly_chart(um.cs_by_turn_figure(items), width="stretch")
    with right:
        st.subheader("Quality vs consistency (Figure 5)")
        numeric = um.numeric_summary(items)
        x_options = [k for k in ("quality", "f1", "rouge_l", "bleu") if k in numeric.columns and numeric[k].notna().any()]
        if not x_options:
            st.write("Only reference rows loaded: there is no quality or lexical score to plot against CS.")
        else:
            if "quality" not in x_options:
                st.caption("No LLM-judge quality in these runs (needs a capable endpoint and `--judge`); pick a lexical proxy.")
            x_metric = st.selectbox("x axis", x_options, format_func=um.METRIC_LABELS.get)
            st.plotly_chart(um.quality_vs_cs_figure(items, x_metric), width="stretch")
            st.caption("Bubble size = DER.")

    st.subheader("Per task")
    metric = st.selectbox("Metric", [k for k in um.METRIC_LABELS if any(i.get(k) is not None for i in items)],
                          format_func=um.METRIC_LABELS.get, key="task_metric")
    st.dataframe(um.task_table(items, metric).style.format("{:.3f}", na_rep="–"), width="stretch")

    st.subheader("Dialogue drill-down")
    methods_loaded = list(dict.fromkeys(i["method"] for i in items))
    c1, c2 = st.columns(2)
    method = c1.selectbox("Method", methods_loaded, key="drill_method")
    ids = sorted({i["dialogue_id"] for i in items if i["method"] == method})
    labels = {i["dialogue_id"]: f"{i['dialogue_id']} ({i['task']})" for i in items if i["method"] == method}
    dialogue_id = c2.selectbox("Dialogue", ids, format_func=labels.get, key="drill_dialogue")
    st.dataframe(um.dialogue_frame(items, method, dialogue_id), hide_index=True, width="stretch")
    st.caption("Each reply is judged against the dialogue before it (the golden history in golden mode); `scored` is false for "
               "turns the official protocol does not score.")
