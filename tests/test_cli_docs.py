"""docs/cli.md names every subcommand and benchmark the code registers; README.md stays under
6 KB and points there (the lists moved out of it)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from core.benchmarks.runner import BENCHMARKS
from core.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
CLI_DOC = (REPO / "docs/cli.md").read_text()


def _subcommands() -> set[str]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_every_subcommand_is_described():
    named = set(re.findall(r"`([a-z][a-z0-9-]*)`", CLI_DOC))
    missing = _subcommands() - named
    assert not missing, f"docs/cli.md does not name {sorted(missing)}"


def test_every_benchmark_has_a_row():
    rows = [line for line in CLI_DOC.splitlines() if line.startswith("| `")]
    in_rows = {name for line in rows for name in re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])}
    assert set(BENCHMARKS) <= in_rows, sorted(set(BENCHMARKS) - in_rows)


def test_readme_is_short_and_links_the_lists():
    readme = (REPO / "README.md").read_bytes()
    assert len(readme) <= 6000, f"README.md is {len(readme):,} bytes"
    text = readme.decode()
    assert "docs/cli.md" in text and "## Pages" in text and "make run" in text and "make test" in text
    assert "written-updates" not in text  # the subcommand list lives in docs/cli.md


def test_the_lab_readme_describes_every_lab_script():
    readme = (REPO / "scripts/lab/README.md").read_text()
    described = set(re.findall(r"^- `([a-z0-9_]+\.py)`: \S", readme, flags=re.M))
    scripts = {p.name for p in (REPO / "scripts/lab").glob("*.py")}
    assert scripts - described == set(), "scripts/lab/README.md does not describe these"
