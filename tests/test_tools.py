"""`python -m core NAME` runs the package tools of core/tools/ (issue 29: scripts tests and docs need
became subcommands)."""

from __future__ import annotations

import json

from core.cli import build_parser, main
from core.tools import TOOLS


def test_every_tool_is_a_subcommand_with_a_help_line():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in TOOLS:
        assert name in sub.choices, name
        assert sub.choices[name].format_help().strip()
    assert {c.dest for c in sub._choices_actions} >= set(TOOLS)


def test_written_updates_writes_two_sessions_per_pair(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "x1", "earlier": "I have 3 cats.", "later": "I have 4 cats now.",
                                 "question": "How many cats do I have?", "answer": "4"}) + "\n")
    out = tmp_path / "out.json"
    assert main(["written-updates", str(pairs), str(out)]) == 0
    [item] = json.loads(out.read_text())
    assert item["question_id"] == "written_x1" and len(item["haystack_sessions"]) == 2
    assert [t["content"] for s in item["haystack_sessions"] for t in s if t.get("has_answer")] == \
        ["I have 3 cats.", "I have 4 cats now."]


def test_the_results_index_lists_every_results_file():
    """results/README.md's index is what `python -m core results-index` writes: a file added to
    results/ without its line fails here."""
    from core.paths import REPO_ROOT
    from core.tools.results_index import expand_braces, rows

    assert main(["results-index", "--check"]) == 0
    listed = {r["file"] for r in rows(REPO_ROOT)}
    on_disk = {p.relative_to(REPO_ROOT / "results").as_posix() for p in (REPO_ROOT / "results").rglob("*")
               if p.is_file() and p.name != "README.md"}
    assert listed == on_disk
    assert expand_braces("results/x-{a,b}.json") == "results/x-a.json results/x-b.json"


def test_written_updates_spreads_an_update_across_sessions(tmp_path):
    """`between` statements become sessions of their own between the two dated evidence sessions,
    flagged as no evidence: the stale value is still read from the first session."""
    from core.benchmarks.dsm_check import stale_number
    from core.data.longmemeval import load_longmemeval

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "x2", "earlier": "I drink 4 cups of coffee a day.", "between": ["I want to cut back."],
                                 "later": "I'm down to 2 cups a day.", "question": "How many cups of coffee do I drink a day?",
                                 "answer": "2"}) + "\n")
    out = tmp_path / "out.json"
    assert main(["written-updates", str(pairs), str(out)]) == 0
    [instance] = load_longmemeval(out)
    assert len(instance.dialogue.sessions) == 3 and len(instance.evidence_turn_ids) == 2
    assert stale_number(instance, 2.0) == 4.0
