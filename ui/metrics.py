"""Helpers for the Metrics page: finding and loading mtbench run folders, the paper-style
tables, and the plotly figures (CS by turn = D-SMART Figure 4; quality vs CS with DER bubbles =
Figure 5). Tables and figures are computed from the runs' per-turn items with core.metrics.report,
so runs of different versions aggregate the same way."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from core.benchmarks.runner import read_run
from core.metrics.report import per_task, per_turn, summarise
from ui import runs

METRIC_LABELS = {"cs": "CS", "der": "DER", "f1": "Word F1", "bleu": "BLEU", "rouge_l": "ROUGE-L", "quality": "Quality (1-10)"}
# All six are "higher is better"; the page says so.
PAPER_TABLE1 = pd.DataFrame(
    [
        {"model": "GPT-4o (paper)", "quality": 8.20, "cs": 0.594, "der": 0.2094, "f1": 0.424, "bleu": 0.522},
        {"model": "D-SMART w/ GPT-4o (paper)", "quality": 8.63, "cs": 0.692, "der": 0.3851, "f1": 0.414, "bleu": 0.549},
        {"model": "Qwen3-8B (paper)", "quality": 7.79, "cs": 0.627, "der": 0.2623, "f1": 0.286, "bleu": 0.481},
        {"model": "D-SMART w/ Qwen3-8B (paper)", "quality": 8.58, "cs": 0.689, "der": 0.3873, "f1": 0.388, "bleu": 0.548},
    ]
)


def find_runs(root: Path) -> list[Path]:
    """MT-Bench-101 runs under `root`, newest first."""
    return runs.find_runs(root, ("mtbench",))


@dataclass
class LoadedRun:
    path: Path
    summary: dict
    items: list[dict]

    @property
    def name(self) -> str:
        return self.path.name


def load_runs(paths: list[Path]) -> tuple[list[LoadedRun], list[str]]:
    """The runs that load, and an error line for each that does not."""
    runs, errors = [], []
    for path in paths:
        try:
            summary, items = read_run(path)
        except (OSError, ValueError) as err:
            errors.append(f"{path}: {err}")
            continue
        if summary.get("benchmark") != "mtbench":
            errors.append(f"{path}: not an mtbench run ({summary.get('benchmark')!r})")
            continue
        runs.append(LoadedRun(Path(path), summary, items))
    return runs, errors


def combined_items(runs: list[LoadedRun]) -> list[dict]:
    """All runs' items; a method name is suffixed with its run when several runs are loaded,
    so two runs of `base` stay two rows."""
    several = len(runs) > 1
    out = []
    for run in runs:
        mode = run.summary.get("settings", {}).get("mode", "")
        for item in run.items:
            label = f"{item['method']} [{run.name}]" if several else item["method"]
            out.append({**item, "method": label, "run": run.name, "run_mode": mode})
    return out


def table1(items: list[dict]) -> pd.DataFrame:
    """Method x metric (mean over dialogues) with 95% bootstrap intervals, as in Table 1."""
    rows = []
    for method, res in summarise(items).items():
        row = {"method": method, "dialogues": res["n_dialogues"], "turns": res["n_turns"]}
        for key in METRIC_LABELS:
            if key in res:
                lo, hi = res[f"{key}_ci95"]
                row[METRIC_LABELS[key]] = _with_ci(key, res[key], lo, hi)
        rows.append(row)
    return pd.DataFrame(rows)


def _with_ci(key: str, value: float, lo: float, hi: float) -> str:
    if key == "der":
        return f"{value:.2%} [{lo:.1%}, {hi:.1%}]" if lo == lo else f"{value:.2%}"
    fmt = ".2f" if key == "quality" else ".3f"
    return f"{value:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]" if lo == lo else f"{value:{fmt}}"


def numeric_summary(items: list[dict]) -> pd.DataFrame:
    rows = [{"method": m, **{k: v for k, v in r.items() if not k.endswith("_ci95")}} for m, r in summarise(items).items()]
    return pd.DataFrame(rows)


def task_table(items: list[dict], metric: str) -> pd.DataFrame:
    """Task x method of one metric."""
    data = {method: {task: row.get(metric) for task, row in tasks.items()} for method, tasks in per_task(items).items()}
    return pd.DataFrame(data).sort_index()


def cs_by_turn_figure(items: list[dict]) -> go.Figure:
    """Mean CS per turn index with standard-error bars (D-SMART Figure 4, the bars)."""
    fig = go.Figure()
    for method, turns in per_turn(items).items():
        xs = sorted(turns)
        fig.add_bar(name=method, x=xs, y=[turns[t].get("cs") for t in xs],
                    error_y={"type": "data", "array": [turns[t].get("cs_sem", 0.0) for t in xs]},
                    customdata=[turns[t]["n"] for t in xs], hovertemplate="turn %{x}: CS %{y:.3f} (n=%{customdata})")
    fig.add_hline(y=0.5, line_dash="dot", annotation_text="0.5 = neutral")
    fig.update_layout(barmode="group", xaxis_title="dialogue turn", yaxis_title="Consistency Score (CS)",
                      yaxis_range=[0, 1], legend_title="method", margin={"t": 30})
    return fig


def quality_vs_cs_figure(items: list[dict], x_metric: str) -> go.Figure:
    """One bubble per method: x = quality (or the chosen proxy), y = CS, size = DER (Figure 5)."""
    fig = go.Figure()
    for _, row in numeric_summary(items).iterrows():
        if pd.isna(row.get(x_metric)) or pd.isna(row.get("cs")):
            continue
        der = float(row.get("der", 0.0))
        fig.add_scatter(x=[row[x_metric]], y=[row["cs"]], name=row["method"], mode="markers+text", text=[row["method"]],
                        textposition="top center", marker={"size": 12 + 80 * der, "opacity": 0.6},
                        hovertemplate=f"{METRIC_LABELS[x_metric]} %{{x:.3f}}, CS %{{y:.3f}}, DER {der:.1%}")
    fig.add_hline(y=0.5, line_dash="dot")
    fig.update_layout(xaxis_title=METRIC_LABELS[x_metric], yaxis_title="Consistency Score (CS)", yaxis_range=[0, 1],
                      showlegend=False, margin={"t": 30})
    return fig


def dialogue_frame(items: list[dict], method: str, dialogue_id: int) -> pd.DataFrame:
    rows = sorted((i for i in items if i["method"] == method and i["dialogue_id"] == dialogue_id), key=lambda i: i["turn"])
    keep = ["turn", "scored", "user", "response", "reference", "nli_label", "p_entailment", "p_neutral", "p_contradiction",
            "cs", "f1", "bleu", "rouge_l", "quality", "seconds"]
    return pd.DataFrame([{k: i.get(k) for k in keep if k in i} for i in rows])


# -- starting a run from the page ----------------------------------------------------------------
class BackgroundRun:
    """A benchmark run in a worker thread; the page polls `done_items` (lines in items.jsonl) for
    its progress bar. The worker never touches Streamlit."""

    def __init__(self, ctx, total: int) -> None:
        from ui.owner import current_owner

        self.ctx, self.total = ctx, total
        self.owner = current_owner()  # here, in the page's run: the worker has no session
        self.summary: dict | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, daemon=True)

    def _work(self) -> None:
        from core.benchmarks.runner import run_benchmark
        from core.llm.fair_queue import BACKGROUND, caller

        try:
            with caller(self.owner, BACKGROUND):  # page-started work: people's replies go first on a shared model
                self.summary = run_benchmark(self.ctx)
        except Exception as err:  # reported on the page; the run folder keeps what was written
            self.error = err

    def start(self) -> "BackgroundRun":
        self._thread.start()
        return self

    def running(self) -> bool:
        return self._thread.is_alive()

    def done_items(self) -> int:
        path = self.ctx.out / "items.jsonl"
        try:
            return sum(1 for _ in path.open(encoding="utf-8"))
        except OSError:
            return 0

    def wait(self, on_progress, poll_s: float = 0.5) -> None:
        while self.running():
            on_progress(min(1.0, self.done_items() / max(1, self.total)))
            time.sleep(poll_s)
        on_progress(1.0)
