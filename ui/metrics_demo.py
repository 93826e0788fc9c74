"""The Metrics page's demo: the shipped l13 MT-Bench-101 runs (results/mtbench-l13-qwen05-*.json, one
summary per method, the same 13 dialogues with the embedded 0.5B model; docs/benchmarks.md gives
the commands) shown when no run of the user's own is loaded, so a fresh install opens on a chart.

The shipped files are summaries (no per-turn items), so the demo shows what summaries hold: Table 1
with intervals, CS by turn (Figure 4) and the per-task means; the drill-down needs a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from core.paths import REPO_ROOT

DEMO_GLOB = "mtbench-l13-qwen05-*.json"
DEMO_DIR = REPO_ROOT / "results"


def demo_summaries(folder: Path = DEMO_DIR) -> list[dict]:
    """The shipped mtbench summaries, in file-name order; unreadable ones are skipped (a demo never fails the page)."""
    out = []
    for path in sorted(folder.glob(DEMO_GLOB)):
        try:
            summary = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if summary.get("benchmark") == "mtbench" and isinstance(summary.get("results"), dict):
            out.append({**summary, "_file": path.name})
    return out


def _methods(summaries: list[dict]) -> dict[str, tuple[dict, dict]]:
    """method -> (its results, its per-turn means); `golden` once (every file repeats it)."""
    rows: dict[str, tuple[dict, dict]] = {}
    for s in summaries:
        for method, res in s["results"].items():
            rows.setdefault(method, (res, s.get("per_turn", {}).get(method, {})))
    return rows


def demo_table(summaries: list[dict]) -> pd.DataFrame:
    labels = {"cs": "CS", "der": "DER", "f1": "Word F1", "bleu": "BLEU", "rouge_l": "ROUGE-L"}
    rows = []
    for method, (res, _) in _methods(summaries).items():
        row = {"method": method, "dialogues": res.get("n_dialogues"), "turns": res.get("n_turns")}
        for key, label in labels.items():
            if key in res:
                lo, hi = res.get(f"{key}_ci95", [float("nan")] * 2)
                row[label] = (f"{res[key]:.2%} [{lo:.1%}, {hi:.1%}]" if key == "der" else f"{res[key]:.3f} [{lo:.3f}, {hi:.3f}]")
        rows.append(row)
    return pd.DataFrame(rows)


def demo_cs_by_turn(summaries: list[dict]) -> go.Figure:
    """Mean CS per dialogue turn and method, with standard errors (D-SMART Figure 4, the bars)."""
    fig = go.Figure()
    for method, (_, turns) in _methods(summaries).items():
        xs = sorted(turns, key=int)
        fig.add_bar(name=method, x=[int(x) for x in xs], y=[turns[x].get("cs") for x in xs],
                    error_y={"type": "data", "array": [turns[x].get("cs_sem", 0.0) for x in xs]})
    fig.add_hline(y=0.5, line_dash="dot", annotation_text="0.5 = neutral")
    fig.update_layout(barmode="group", xaxis_title="dialogue turn", yaxis_title="Consistency Score (CS)",
                      yaxis_range=[0, 1], legend_title="method", margin={"t": 30})
    return fig


def describe(summaries: list[dict]) -> str:
    first = summaries[0]
    settings = first.get("settings", {})
    return (f"{settings.get('dialogues', '?')} MT-Bench-101 dialogues ({first.get('data')}), mode {settings.get('mode')}, "
            f"{settings.get('max_tokens')} tokens per reply, NLI {settings.get('nli_model')}, run {str(first.get('date', ''))[:10]}; "
            f"files: results/{DEMO_GLOB}")
