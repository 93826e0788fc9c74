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
