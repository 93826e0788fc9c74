"""Streamlit helpers for the Retrieval Comparison page: benchmark sources, per-user retriever
indexes, the sentence-graph network around SGMem's hits, and charts of benchmark runs.

Dialogue text in the pyvis network is shown as text (see ui/graphs.py: pyvis's `tojson` and
vis-network's canvas and innerText); scripts are inlined (`cdn_resources="in_line"`) so it works offline.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.locomo import load_locomo
from core.data.longmemeval import load_longmemeval
from core.dialogue import Dialogue, Evidence
from core.methods.retrievers import make_retriever, uses_llm
from core.paths import REPO_ROOT, SHARED_DIR
from core.retrieval import RetrieverContext
from core.retrieval.base import Retriever
from core.retrieval.cache import shared_cached_embedder
from core.retrieval.report import LEVEL_METRICS  # noqa: F401 (the Retrieval page's metric choices)
from ui import icons, runs, safe, state, warmup

LOCOMO_DEFAULT = SHARED_DIR / "data" / "locomo" / "locomo_dev.json"
RESULTS_DIR = REPO_ROOT / "results"  # levels x methods summaries kept with the repository
LONGMEMEVAL_DEFAULT = SHARED_DIR / "data" / "longmemeval" / "longmemeval_oracle_dev.json"
RETRIEVER_NAMES = ["rag-t", "rag-r", "rag-s", "bm25-t", "bm25-r", "bm25-s", "sgmem-t", "sgmem-r", "sgmem-s",
                   "hybrid-t", "hybrid-r", "hybrid-s", "sgmem-t+h", "sgmem-r+h", "sgmem-s+h",
                   "rag-tf", "rag-sf", "rag-smfi", "sgmem-tf", "sgmem-sf", "sgmem-smfi", "mcts-t", "mcts-r", "mcts-s"]
KG_RETRIEVERS = ["kg-bm25", "kg-kaping", "kg-triton", "kg-tritonc"]  # knowledge-graph triples (OpenDialKG)
RETRIEVER_NAMES += KG_RETRIEVERS
# The paper's SGMem beside our hybrid one (sgmem-t+h: recall@5 .532 against .389 on held-out LoCoMo, docs/retrieval.md)
DEFAULT_RETRIEVERS = ["rag-t", "bm25-t", "sgmem-t", "sgmem-t+h"]
NOT_IN_PAPER = "not in the paper"


def retriever_label(name: str) -> str:
    """The picker's text: our own variants say they are not the paper's."""
    return f"{name} ({NOT_IN_PAPER})" if name.endswith("+h") or name.startswith("hybrid-") else name
INDEXES = "retrieval_indexes"  # st.session_state: (dialogue key, retriever name, settings) -> Retriever
PENDING = "retrieval_pending"  # st.session_state: the same keys -> Future of a Retriever built in the background
# One background index build at a time for the whole process: the machine's cores are shared.
_BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-prefetch")


@dataclass(frozen=True)
class Query:
    text: str
    gold: tuple[str, ...] = ()  # gold evidence turn ids, when a benchmark question
    answer: str = ""
    label: str = ""


@st.cache_data(show_spinner="Reading the LoCoMo file…", max_entries=4)
def locomo(path: str):
    return load_locomo(path)


@st.cache_data(show_spinner="Reading the LongMemEval file…", max_entries=2)
def longmemeval(path: str):
    return load_longmemeval(path)


def read_data_file(loader, path: str) -> list:
    """What `loader` reads from `path`, or [] with a message in the page when the file is missing,
    unreadable or malformed (the loaders raise ValueError naming the file and the problem)."""
    if not Path(path).is_file():
        st.warning(f"No file at {safe.literal(path)}")
        return []
    try:
        items = loader(path)
    except (OSError, ValueError) as err:
        st.error(safe.literal(f"Cannot use {Path(path).name}: {err}"))
        return []
    if not items:
        st.warning(safe.literal(f"{Path(path).name} holds no conversations"))
    return items


def _slot(key: str, dialogue: Dialogue, name: str, sgmem_config, choice: str) -> tuple:
    """An index is reused only for the same dialogue, retriever, SGMem settings and embedder."""
    return (key, len(dialogue), name, sgmem_config if name.startswith("sgmem") else None, choice)


def _build(name: str, dialogue: Dialogue, sgmem_config, choice: str, provider=None, report=None) -> Retriever:
    """One index of `dialogue` with the embedder `choice` (no Streamlit calls: this also runs in the
    background builder); `report(done, total)` hears how many new texts are embedded."""
    from core.embedders import display_name
    from core.methods.sgmem.calibration import retrieval_options

    embedder = None if name.startswith("bm25") else shared_cached_embedder(choice)  # BM25 needs no model
    options = retrieval_options("locomo", display_name(choice), sgmem=sgmem_config)  # +h and hybrid: per embedder
    retriever = make_retriever(name, RetrieverContext(embedder, provider, options))
    if embedder is None or report is None:
        retriever.index(dialogue)
    else:
        with embedder.reporting(report):
            retriever.index(dialogue)
    return retriever


def prefetch(key: str, dialogue: Dialogue, names: list[str], sgmem_config) -> None:
    """Start building this user's indexes for the chosen conversation and retrievers in the
    background while the query is typed; forget builds for an earlier choice. Retrievers with
    generated memory (they call the LLM) wait for the click. Off with the warm start
    (`WORKBENCH_WARMUP=0`)."""
    if not warmup.enabled():
        return
    choice = state.embedder_choice()
    indexes = st.session_state.setdefault(INDEXES, {})
    pending: dict = st.session_state.setdefault(PENDING, {})
    wanted = {_slot(key, dialogue, n, sgmem_config, choice): n for n in names if not uses_llm(n)}
    for slot in [s for s in pending if s not in wanted]:
        pending.pop(slot).cancel()  # a build already running finishes and is dropped
    for slot, name in wanted.items():
        if slot not in indexes and slot not in pending:
            pending[slot] = _BUILDER.submit(_build, name, dialogue, sgmem_config, choice)


def retriever_for(key: str, dialogue: Dialogue, name: str, sgmem_config) -> tuple[Retriever, float]:
    """This user's index of `dialogue` for `name`, built once per (dialogue, settings, embedder);
    returns it with the seconds this call waited for it (0 when it was ready). A build in this call
    shows how many texts are left to embed (later builds read the on-disk cache)."""
    choice = state.embedder_choice()
    indexes = st.session_state.setdefault(INDEXES, {})
    slot = _slot(key, dialogue, name, sgmem_config, choice)
    if slot in indexes:
        return indexes[slot], 0.0
    t0 = time.perf_counter()
    future = st.session_state.setdefault(PENDING, {}).pop(slot, None)
    if future is not None and not future.cancelled():
        with st.spinner(f"Finishing the {name} index built in the background…"):
            retriever = future.result()  # a background build's error is raised here, as a direct build's would be
    else:
        provider = None
        if uses_llm(name):
            from core.methods.sgmem.memory import MemoryGenerator

            provider = MemoryGenerator(state.toolkit().llm)
        bar = st.progress(0.0, text=f"Indexing with {name}…")

        def report(done: int, total: int) -> None:
            bar.progress(done / total, text=f"{name}: embedded {done:,} of {total:,} new texts with {choice}")

        retriever = _build(name, dialogue, sgmem_config, choice, provider, report)
        bar.empty()
    indexes[slot] = retriever
    return retriever, time.perf_counter() - t0


def is_gold(evidence: Evidence, gold: tuple[str, ...]) -> bool:
    return bool(gold) and (any(t in gold for t in evidence.meta.get("turn_ids", ())) or evidence.meta.get("triple_key") in gold)


def render_results(evidence: list[Evidence], gold: tuple[str, ...], latency: float, build: float) -> None:
    st.caption(f"query {latency * 1000:.1f} ms" + (f" · index ready after {build:.1f} s" if build >= 0.05 else ""))
    for rank, e in enumerate(evidence, 1):
        mark = f" · {icons.GOLD} **gold evidence**" if is_gold(e, gold) else ""
        with st.container(border=True):
            st.markdown(f"**{rank}.** {safe.literal(e.source)} · {safe.literal(e.kind)} · score {e.score:.3f}{mark}")
            st.text(e.text if len(e.text) < 700 else e.text[:700] + " …")  # st.text: no markdown, no HTML


def mcts_trace(retriever):
    """The search tree of an mcts-* retriever's last query, as trace data."""
    from core.methods.mcts.retriever import result_trace

    return result_trace(retriever.last, retriever.kb)


# -- the sentence graph around the hits ------------------------------------------------------------
def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def sentence_graph_html(retriever, hits, gold: tuple[str, ...], height: str = "560px") -> str:
    """Seeds (orange), hop neighbours (blue), their other KNN neighbours (grey) and the chunks
    they belong to (green if kept, white if not; gold chunks bordered red), as inline HTML."""
    from pyvis.network import Network

    graph, level = retriever.graph, retriever.config.chunk_level
    seeds, hops = set(hits.seeds), set(hits.expanded)
    shown = seeds | hops
    context = {n for i in shown for n in graph.neighbours(i)} - shown
    kept = {e.source for e in hits.chunks}
    net = Network(height=height, width="100%", cdn_resources="in_line")
    net.barnes_hut(gravity=-3000, spring_length=110)
    for i in sorted(shown | context):
        node = graph.nodes[i]
        colour = "#f58518" if i in seeds else "#4c78a8" if i in hops else "#c7c7c7"
        score = hits.sentence_scores.get(i)
        title = f"{node.turn_id}: {node.text}" + (f"\nsim = {score:.3f}" if score is not None else "")
        net.add_node(f"s{i}", label=_short(node.text), title=title, color=colour, shape="dot", size=12)
    chunk_ids = {graph.nodes[i].chunks[level] for i in shown}
    for cid in chunk_ids:
        turn_ids = retriever.tracker.members[cid]
        golden = any(t.turn_id in gold for t in turn_ids)
        net.add_node(f"c:{cid}", label=_short(cid, 28), title=f"{level} {cid}",
                     color={"background": "#54a24b" if cid in kept else "#ffffff", "border": "#e45756" if golden else "#333333"},
                     borderWidth=4 if golden else 1, shape="box")
    for i in shown:
        net.add_edge(f"c:{graph.nodes[i].chunks[level]}", f"s{i}", color="#9ecf8f", dashes=True)
    for a, b in graph.knn_edges():
        if a in shown | context and b in shown | context and (a in shown or b in shown):
            net.add_edge(f"s{a}", f"s{b}", color="#888888")
    return net.generate_html(notebook=False)


# -- benchmark runs --------------------------------------------------------------------------------
def find_runs(root: Path) -> list[Path]:
    """LoCoMo, LongMemEval and OpenDialKG-triple retrieval runs under `root`, newest first."""
    return runs.find_runs(root, ("locomo-retrieval", "longmemeval-retrieval", "opendialkg-triples"))


# A run small enough to wait for on the page: three retriever families at turn level, one conversation.
SMALL_RUN_METHODS = ("bm25-t", "rag-t", "sgmem-t")
SMALL_RUN_QUESTIONS = 20


def small_run_argv(data: Path, out: Path, conversation: str, questions: int, embedder: str) -> list[str]:
    """The `python -m core` command line of the page's small run (recorded in its summary)."""
    return ["bench", "locomo-retrieval", "--data", str(data), "--out", str(out), "--methods", ",".join(SMALL_RUN_METHODS),
            "--limit", str(int(questions)), "--conversations", conversation, "--embedder", embedder, "--quiet"]


def small_run_request(data: Path, out: Path, conversation: str, questions: int, embedder: str):
    """The page's small run as a BenchRequest: the same run, settings and recorded command as
    `python -m core` with small_run_argv (the LLM from the WORKBENCH_LLM_* variables, as the command
    line reads them; these retrievers never call it)."""
    from core.benchmarks.request import BenchRequest, benchmark_options
    from core.config import llm_settings_from

    return BenchRequest(benchmark="locomo-retrieval", data=data, out=out, methods=SMALL_RUN_METHODS,
                        llm=llm_settings_from(os.environ),
                        options=benchmark_options("locomo-retrieval", conversations=conversation),
                        limit=int(questions), progress=False, embedder=embedder,
                        argv=tuple(small_run_argv(data, out, conversation, questions, embedder)))


def start_small_run(data: Path, conversation: str, questions: int, embedder: str, root: Path):
    """`bench locomo-retrieval` on one conversation of a LoCoMo file, in a worker thread, from the
    request small_run_request makes (the same run `python -m core bench ...` makes); the page polls
    the returned BackgroundRun for its progress bar."""
    from core.benchmarks.request import bench_context
    from ui.metrics import BackgroundRun

    out = root / f"locomo-retrieval-{conversation}-{time.strftime('%Y%m%d-%H%M%S')}"
    ctx = bench_context(small_run_request(data, out, conversation, questions, embedder))
    job = BackgroundRun(ctx, total=int(questions))
    ctx.on_plan = lambda n: setattr(job, "total", n)  # fewer when the conversation has fewer questions
    return job.start()


SMALL_RUNS = "retrieval_small_runs"  # session state: the folders of the runs started on this page


def small_run_panel(root: Path) -> None:
    """Pick a LoCoMo conversation and run the small benchmark with a progress bar; a finished run
    joins the charts below (its folder is kept under SMALL_RUNS)."""
    st.caption(safe.literal(f"`bench locomo-retrieval` with {', '.join(SMALL_RUN_METHODS)} on one conversation: its "
                            f"sessions are indexed, then each question is asked (gold evidence marks the hits). The run is "
                            f"written under {root}, as the command line writes it."))
    path = st.text_input("LoCoMo file", value=str(LOCOMO_DEFAULT), key="small_run_data")
    convs = read_data_file(locomo, path)
    if not convs:
        return
    conversation = st.selectbox("LoCoMo conversation to run on", [c.sample_id for c in convs], key="small_run_conversation")
    questions = st.slider("Questions", 5, 100, SMALL_RUN_QUESTIONS, step=5, key="small_run_questions")
    if not st.button("Run a small benchmark here", type="primary", key="small_run_start"):
        return
    job = start_small_run(Path(path), conversation, questions, state.embedder_choice(), root)
    bar = st.progress(0.0, text="Indexing the conversation…")
    job.wait(lambda f: bar.progress(f, text=f"{job.done_items()} of {job.total} questions"))
    if job.error is not None:
        st.error(safe.literal(f"The run failed: {type(job.error).__name__}: {job.error}"))
        return
    st.success(safe.literal(f"Done in {job.summary['wall_s']:.0f} s: {job.ctx.out.name}, charted below."))
    st.session_state[SMALL_RUNS] = [*st.session_state.get(SMALL_RUNS, []), str(job.ctx.out)]


def recall_frame(summary: dict) -> pd.DataFrame:
    """One row per (method, group, metric@k): headline plus every category / question type."""
    rows = []
    for method, res in summary["results"].items():
        groups = {"headline": res, **res.get("by_category", {}), **res.get("by_type", {})}
        for group, metrics in groups.items():
            for name, value in metrics.items():
                if "@" in str(name) and isinstance(value, (int, float)):
                    metric, k = name.rsplit("@", 1)
                    rows.append({"method": method, "group": group, "metric": metric, "k": int(k), "value": value})
    return pd.DataFrame(rows)


def latency_frame(items: list[dict]) -> pd.DataFrame:
    rows = [{"method": m, "latency_ms": 1000 * v["latency_s"]}
            for item in items for m, v in item.get("methods", {}).items() if "latency_s" in v]
    return pd.DataFrame(rows)


def summary_table(summary: dict) -> pd.DataFrame:
    rows = []
    for method, res in summary["results"].items():
        t = summary.get("timings", {}).get(method, {})
        row = {"method": method, **{k: v for k, v in res.items() if not isinstance(v, dict)}}
        for stage in ("index", "query"):
            if stage in t:
                row[f"{stage} median ms"] = round(1000 * t[stage]["median_s"], 2)
                row[f"{stage} p95 ms"] = round(1000 * t[stage]["p95_s"], 2)
        rows.append(row)
    return pd.DataFrame(rows)


def read_summary_settings(summary: dict) -> str:
    return json.dumps(summary.get("settings", {}), indent=1, default=str)


# -- levels x methods with intervals (issue 18) ------------------------------------------------------
def level_frame(items: list[dict], metric: str) -> pd.DataFrame:
    """One row per method: family, level, mean, 95% bootstrap interval and mean context tokens."""
    from dataclasses import asdict

    from core.retrieval.report import level_rows

    return pd.DataFrame([asdict(r) for r in level_rows(items, metric)])


def saved_levels(folder: Path) -> list[Path]:
    """Levels x methods summaries kept in `folder` (results/retrieval-levels-*.json, written by
    `python -m core retrieval-levels` from a benchmark run)."""
    return sorted(folder.glob("retrieval-levels-*.json")) if folder.is_dir() else []


def saved_level_frame(path: Path, metric: str) -> tuple[pd.DataFrame, dict]:
    """(rows of `metric`, the file's header) of one saved summary; raises ValueError when malformed."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("rows"), dict):
        raise ValueError(f"{path.name} is not a levels x methods summary")
    return pd.DataFrame(data["rows"].get(metric, [])), {k: v for k, v in data.items() if k != "rows"}


def level_chart(frame: pd.DataFrame):
    import plotly.express as px

    frame = frame.assign(err_plus=frame["high"] - frame["mean"], err_minus=frame["mean"] - frame["low"])
    fig = px.bar(frame, x="level", y="mean", color="family", barmode="group", error_y="err_plus", error_y_minus="err_minus",
                 category_orders={"level": ["turn", "round", "session"]}, hover_data=["method", "tokens", "n"],
                 title=f"{frame['metric'].iloc[0].split('@')[0]} per chunk level and method (95% bootstrap intervals; "
                       "hover for mean context tokens)")
    fig.update_yaxes(range=[0, 1], title=frame["metric"].iloc[0] if frame["metric"].nunique() == 1 else "at each level's token budget")
    return fig
