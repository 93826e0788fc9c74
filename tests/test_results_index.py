"""results/README.md gives every kept file its command and says truly where the docs quote it
(core/tools/results_index.py)."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

from core.tools.results_index import NO_COMMAND, expand_braces, listed_commands, quotes, rows

REPO = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def _tracked_rows() -> list[dict]:
    """Rows of the files committed under results/ (another session's file not yet committed is its own)."""
    tracked = set(subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True,
                                 check=True).stdout.split())
    return [r for r in rows(REPO) if f"results/{r['file']}" in tracked]


def test_every_file_has_its_command():
    missing = [r["file"] for r in _tracked_rows() if r["command"] == NO_COMMAND or "see the doc" in r["command"]]
    assert missing == []


def test_only_archived_files_are_quoted_nowhere():
    unquoted = [r["file"] for r in _tracked_rows() if not r["quoted_in"] and not r["file"].startswith("archive/")]
    assert unquoted == [], "quote these in a doc or move them to results/archive/"


def test_the_listed_commands_name_files_that_exist():
    listed = listed_commands((REPO / "results" / "README.md").read_text(encoding="utf-8"))
    assert len(listed) > 80
    assert [f for f in listed if not (REPO / "results" / f).is_file()] == []


def test_the_ways_a_doc_quotes_a_file():
    assert quotes("see `results/x-a.json`", "x-a.json")
    assert not quotes("see `results/x-ab.json`", "x-a.json")
    assert quotes("run with `--out .workbench/runs/x-a`", "x-a.json")
    assert quotes(expand_braces("`results/chat/m-{a,b}-fast.*`"), "chat/m-a-fast.summary.json")
    assert not quotes("the knowledge base.** rows", "compare/c/base.jsonl")  # a generic stem is not a wildcard quote
    assert quotes("the runs in `results/kr-l15/`", "kr-l15/after.json", ("kr-l15/after.json", "kr-l15/before.json"))
    assert not quotes("transcripts in `results/chat/` (`a.jsonl`)", "chat/b.jsonl", ("chat/a.jsonl", "chat/b.jsonl"))
    table = "| faults (`load-s4a.json`) |\n| faults (`-s4d`) |"
    assert quotes(table, "loadtest/load-s4d.json") and not quotes(table, "loadtest/load-s4e.json")
