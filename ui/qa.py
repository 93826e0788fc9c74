"""QA runs (`bench locomo-qa` / `longmemeval-qa`) on the comparison page: accuracy per method and
category with intervals, paired differences, bad input, a per-question drill-down, and the
published figures of other systems kept apart (their reader and judge are not ours)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from core.benchmarks import qa_report
from core.benchmarks.runner import read_items
from ui import runs, safe

QA_BENCHMARKS = ("locomo-qa", "longmemeval-qa")

# Peers' published figures: each with its reader, judge and source, never mixed into our table.
PUBLISHED = [
    {"benchmark": "LongMemEval-S", "system": "SGMem-SMFI (top-5)", "accuracy": 0.700, "reader": "Qwen2.5-32B-Instruct",
     "judge": "Qwen2.5-32B-Instruct", "source": "SGMem paper, Table 1"},
    {"benchmark": "LongMemEval-S", "system": "Zep", "accuracy": 0.712, "reader": "gpt-4o", "judge": "gpt-4o",
     "source": "Zep paper (Rasmussen et al., 2025)"},
    {"benchmark": "LongMemEval-S", "system": "full context", "accuracy": 0.602, "reader": "gpt-4o", "judge": "gpt-4o",
     "source": "Zep paper (Rasmussen et al., 2025)"},
    {"benchmark": "LoCoMo (J)", "system": "Mem0", "accuracy": 0.669, "reader": "gpt-4o-mini", "judge": "gpt-4o-mini (J prompt)",
     "source": "Mem0 paper (Chhikara et al., 2025)"},
    {"benchmark": "LoCoMo (J)", "system": "Mem0 with graph", "accuracy": 0.684, "reader": "gpt-4o-mini",
     "judge": "gpt-4o-mini (J prompt)", "source": "Mem0 paper (Chhikara et al., 2025)"},
    {"benchmark": "LoCoMo (J)", "system": "Zep", "accuracy": 0.660, "reader": "gpt-4o-mini", "judge": "gpt-4o-mini (J prompt)",
     "source": "Mem0 paper (Chhikara et al., 2025)"},
    {"benchmark": "LoCoMo (J)", "system": "A-Mem", "accuracy": 0.484, "reader": "gpt-4o-mini", "judge": "gpt-4o-mini (J prompt)",
     "source": "Mem0 paper (Chhikara et al., 2025)"},
    {"benchmark": "LoCoMo (J)", "system": "full context", "accuracy": 0.729, "reader": "gpt-4o-mini",
     "judge": "gpt-4o-mini (J prompt)", "source": "Mem0 paper (Chhikara et al., 2025)"},
]


def read_qa_run(folder: str | Path) -> tuple[dict, list[dict]]:
    """(summary or {}, items) of a QA run folder; a run still going (or killed) has items only."""
    folder = Path(folder)
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").is_file() else {}
    items = read_items(folder / "items.jsonl") if (folder / "items.jsonl").is_file() else []
    return summary, items


def method_table(report: dict) -> pd.DataFrame:
    rows = []
    for r in qa_report.headline_table(report["results"]):
        ci = r.get("f1_ci95") or [None, None]
        rows.append({"method": r["method"], "F1": r["f1"], "F1 95% CI": _interval(ci), "EM": r["em"],
                     "judge (unvalidated)": r["judge_accuracy"], "answered": r["n"], "window too small": r["no_fit"],
                     "context tokens": r["context_tokens"], "gold turns in context": r["evidence_recall"],
                     "reader calls": r["reader_calls"], "latency p50 s": r["latency_p50_s"], "latency p95 s": r["latency_p95_s"]})
    return pd.DataFrame(rows)


def build_frame(settings: dict) -> pd.DataFrame:
    """One row per method whose source settings report a memory build (`sources.M.build`)."""
    rows = [{"method": name, **source["build"]} for name, source in (settings.get("sources") or {}).items()
            if isinstance(source, dict) and isinstance(source.get("build"), dict)]
    return pd.DataFrame(rows)


def _interval(ci) -> str:
    return "" if not ci or ci[0] is None or ci[0] != ci[0] else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def category_frame(report: dict, metric: str = "f1") -> pd.DataFrame:
    rows = []
    for method, r in report["results"].items():
        for cat, block in r.get("by_category", {}).items():
            if metric in block:
                lo, hi = block.get(f"{metric}_ci95", [None, None])
                value = block[metric]
                rows.append({"method": method, "category": cat, metric: value, "n": block.get(f"n_{metric}", 0),
                             "err_plus": (hi - value) if hi == hi and hi is not None else 0.0,
                             "err_minus": (value - lo) if lo == lo and lo is not None else 0.0})
    return pd.DataFrame(rows)


def paired_frame(report: dict, metric: str = "f1") -> pd.DataFrame:
    rows = [{"difference": k, "mean": v["diff"], "95% CI": _interval(v["ci95"]), "questions": v["n"],
             "above 0": bool(v["ci95"][0] > 0) if v["ci95"][0] == v["ci95"][0] else False}
            for k, v in report["paired"].get(metric, {}).items()]
    return pd.DataFrame(rows)


def render_published() -> None:
    with st.container(border=True):
        st.markdown("**Published figures (other systems, other readers and judges: not comparable one to one)**")
        st.caption("Accuracy judged by an LLM. Our runs use the embedded reader unless their settings say otherwise; "
                   "a 0.5B-1.5B reader caps every method far below a gpt-4o-class one.")
        st.dataframe(pd.DataFrame(PUBLISHED), hide_index=True)


def render_run(folder: str) -> None:
    summary, items = read_qa_run(folder)
    if not items:
        st.warning(f"No QA items in {safe.literal(folder)}")
        return
    settings = summary.get("settings", {})
    report = qa_report.summarise(items, boot=500, seed=0)  # from items: a run still going shows too
    st.subheader(safe.literal(f"{summary.get('benchmark', 'QA run (in progress)')} · {Path(str(summary.get('data', ''))).name}"))
    st.caption(safe.literal(f"reader {settings.get('reader', '?')} · judge {settings.get('judge', 'none')} "
                            f"({settings.get('judge_status', 'unvalidated')}) · budget {settings.get('budget', '?')} tokens · "
                            f"{len({i['question_id'] for i in items})} questions · {summary.get('code_version', '')}"))
    st.dataframe(method_table(report), hide_index=True)
    builds = build_frame(settings)
    if not builds.empty:  # what building a peer's memory cost (mem0: LLM calls per round, failures, search times)
        st.markdown("**Memory build** (per method whose memory an LLM writes)")
        st.dataframe(builds, hide_index=True)
    metric = st.radio("Score", [m for m in ("f1", "em", "judge") if any(i.get(m) is not None for i in items)],
                      horizontal=True, key=f"qa-metric:{folder}")
    frame = category_frame(report, "judge_accuracy" if metric == "judge" else metric)
    if not frame.empty:
        y = frame.columns[2]
        st.plotly_chart(px.bar(frame, x="category", y=y, color="method", barmode="group", error_y="err_plus",
                               error_y_minus="err_minus", title=f"{y} per category (95% bootstrap intervals)"),
                        key=f"qa-cat:{folder}")
    pairs = paired_frame(report, metric if metric != "em" else "f1")
    if not pairs.empty:
        st.markdown("**Paired differences** (same questions, bootstrap over questions)")
        st.dataframe(pairs, hide_index=True)
    st.caption(safe.literal(f"Bad input: {json.dumps(report['bad_input'])}"))
    render_drilldown(items, folder)


def render_drilldown(items: list[dict], folder: str) -> None:
    with st.expander("Per question"):
        questions = list(dict.fromkeys(i["question_id"] for i in items))
        qid = st.selectbox("Question", questions, key=f"qa-q:{folder}",
                           format_func=lambda q: next(f"[{i['category']}] {i['question']}" for i in items if i["question_id"] == q))
        rows = [i for i in items if i["question_id"] == qid]
        st.markdown(f"**Gold:** {safe.literal(str(rows[0].get('gold', '')))}")
        for i in rows:
            verdict = {1: "correct", 0: "wrong", None: "no verdict"}.get(i.get("judge"), "not judged") if "judge" in i else "not judged"
            st.markdown(safe.literal(f"{i['method']} · {i.get('status')} · answer: {i.get('answer', '')} · F1 {i.get('f1')} · "
                                     f"judge: {verdict} · {i.get('context_tokens', 0)} context tokens"))
            if i.get("context"):
                st.text(i["context"])


def render_qa_runs(root: Path) -> None:
    found = runs.find_runs(root, QA_BENCHMARKS) if root.is_dir() else []
    chosen = st.multiselect("QA run folders", [str(p) for p in found], default=[str(p) for p in found[:1]],
                            help=f"locomo-qa / longmemeval-qa runs under {root}")
    extra = st.text_input("Another QA run folder", key="qa-extra", help="any folder written by `python -m core bench locomo-qa --out DIR`")
    folders = chosen + ([extra] if extra.strip() else [])
    for folder in folders:
        try:
            render_run(folder)
        except (OSError, ValueError, KeyError, TypeError) as err:  # a hand-edited or foreign run folder
            st.error(safe.literal(f"Cannot read the QA run in {folder}: {type(err).__name__}: {err}"))
    if not folders:
        st.info(f"No QA runs under {root} yet. Run e.g. `python -m core bench locomo-qa --data "
                f"../shared/data/locomo/locomo_dev.json --limit 150 --out {root}/locomo-qa`.")
    render_published()
