"""Benchmark run folders for the pages that chart them (Metrics, Retrieval comparison)."""

from __future__ import annotations

import os
from pathlib import Path

from core.paths import REPO_ROOT


def runs_root() -> Path:
    """WORKBENCH_RUNS, else .workbench/runs in the repository (where the README's commands write)."""
    return Path(os.environ.get("WORKBENCH_RUNS") or REPO_ROOT / ".workbench" / "runs")


def find_runs(root: Path, benchmarks: tuple[str, ...]) -> list[Path]:
    """Folders under `root` (depth 1 or 2) whose summary.json is a run of one of `benchmarks`, newest first."""
    markers = [f'"benchmark": "{name}"' for name in benchmarks]
    found = []
    for summary in list(root.glob("*/summary.json")) + list(root.glob("*/*/summary.json")):
        try:
            head = summary.read_text()[:200]
        except OSError:
            continue
        if any(m in head for m in markers):
            found.append(summary.parent)
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)
