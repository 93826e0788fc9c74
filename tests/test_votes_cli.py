"""`python -m core votes report|export|import` and `python -m core compare` with a scripted LLM."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.chat import ChatSession, read_script
from core.cli import main
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit
from core.resources import HashingEmbedder
from core.votes.compare import read_items, run_compare, vote_fields
from core.votes.store import VoteStore
from tests.llm_stub import LLMStub

REPO = Path(__file__).resolve().parent.parent


def _seed(db: Path) -> VoteStore:
    store = VoteStore(db)
    for turn, winner in enumerate(["rag", "rag", "base", "tie", "rag", "both_bad"]):
        store.vote("c1", turn, ["rag", "base"] if turn % 2 else ["base", "rag"], winner, owner="anon:alice",
                   replies=["r1", "r2"], measures={"rag": {"cs": 0.8, "correct": True}, "base": {"cs": 0.3, "correct": False}})
    store.vote("c2", 0, ["dsmart", "rag", "base"], "dsmart", owner="anon:bob", replies=["a", "b", "c"])
    return store


def test_report_prints_a_strength_for_each_voted_method(tmp_path, capsys):
    db = tmp_path / "votes.sqlite3"
    _seed(db)
    assert main(["votes", "report", "--db", str(db), "--bootstrap", "200"]) == 0
    out = capsys.readouterr().out
    assert "Votes: 7 (1 of them both/all bad), every owner" in out
    table = out.split("Win rate")[0]
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.startswith("  ") and "[" in line}
    assert set(rows) == {"rag", "base", "dsmart"}
    assert float(rows["rag"][1]) > float(rows["base"][1])
    # 4 decisive rag-vs-base pairs, rag always the higher CS and the correct one, chosen 3 times; bob's vote has no measures
    assert "cs         75% [" in out and "correct    75% [" in out and "of 4 pairs (2 undecided)" in out
    assert "factscore  no pairs (6 undecided)" in out
    assert main(["votes", "report", "--db", str(db), "--owner", "anon:bob", "--json", "--bootstrap", "50"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranking"]["votes"] == 1 and {s["method"] for s in data["ranking"]["standings"]} == {"dsmart", "rag", "base"}
    assert main(["votes", "report", "--db", str(tmp_path / "missing.sqlite3")]) == 2
    assert "no database at" in capsys.readouterr().err
    assert not (tmp_path / "missing.sqlite3").exists()


def test_export_jsonl_and_csv_and_import_merges_without_duplicates(tmp_path, capsys):
    db = tmp_path / "votes.sqlite3"
    store = _seed(db)
    out = tmp_path / "votes.jsonl"
    assert main(["votes", "export", "--db", str(db), "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 7
    assert {"conversation", "turn", "methods", "winner", "owner", "created_at"} <= set(lines[0])
    assert lines[-1]["methods"] == ["dsmart", "rag", "base"] and lines[-1]["winner"] == "dsmart"
    assert main(["votes", "export", "--db", str(db), "--out", str(tmp_path / "v.csv"), "--owner", "anon:bob"]) == 0
    rows = list(csv.DictReader((tmp_path / "v.csv").open()))
    assert len(rows) == 1 and json.loads(rows[0]["methods"]) == ["dsmart", "rag", "base"]
    capsys.readouterr()

    other = tmp_path / "other.sqlite3"
    assert main(["votes", "import", "--db", str(other), str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 7
    assert main(["votes", "import", "--db", str(other), str(out)]) == 0  # again: nothing new
    assert json.loads(capsys.readouterr().out)["unchanged"] == 7
    assert main(["votes", "import", "--db", str(other), str(tmp_path / "v.csv")]) == 0  # the CSV of a vote it holds
    assert json.loads(capsys.readouterr().out)["unchanged"] == 1
    assert VoteStore(other).all_votes() == store.all_votes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().replace('"winner": "dsmart"', '"winner": "nobody"').replace('"c1"', '"c9"'))
    assert main(["votes", "import", "--db", str(other), str(bad)]) == 2
    assert "import refused, nothing stored" in capsys.readouterr().err
    assert len(VoteStore(other).all_votes()) == 7


SCRIPT = [{"user": "I live in Lisbon."}, {"user": "Where do I live?", "expect": ["Lisbon"]},
          {"new_dialogue": True}, {"user": "Where do I live?", "expect": "Lisbon"}]


def _script(tmp_path) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in SCRIPT))
    return path


def test_compare_writes_side_by_side_items_that_votes_land_on(tmp_path):
    def reply(messages):  # answers from what the prompt holds: the second dialogue starts with an empty memory
        prompt = " ".join(m["content"] if isinstance(m, dict) else m.content for m in messages)
        return "You live in Lisbon." if prompt.count("Lisbon") >= 1 and "Where" in prompt else "Noted."

    def session(method):
        return ChatSession(method, Toolkit(llm=ScriptedLLM(reply), embedder=HashingEmbedder(256)))

    summary = run_compare(["base", "rag"], read_script(_script(tmp_path)), session, tmp_path / "out")
    assert summary["items"] == 3 and set(summary["per_method"]) == {"base", "rag"}
    items = read_items(tmp_path / "out" / "compare.jsonl")
    assert [(i["dialogue"], i["turn"], i["user"]) for i in items] == [
        (0, 0, "I live in Lisbon."), (0, 1, "Where do I live?"), (1, 0, "Where do I live?")]
    assert items[1]["expected"] == ["Lisbon"] and items[1]["replies"]["base"]["correct"] is True
    assert items[2]["replies"]["rag"]["correct"] is False  # a new dialogue: its memory is empty
    assert items[0]["replies"]["rag"]["correct"] is None and len({i["compare"] for i in items}) == 1
    assert len((tmp_path / "out" / "rag.jsonl").read_text().splitlines()) == 3
    store = VoteStore(tmp_path / "db.sqlite3")
    fields = vote_fields(items[1], ["rag", "base"])
    vote = store.vote(fields.pop("conversation"), fields.pop("turn"), fields.pop("methods"), "rag", owner="anon:a", **fields)
    assert vote.conversation == items[1]["compare"] and vote.turn == 1 and vote.replies == ("You live in Lisbon.",) * 2
    assert vote.measures == {"rag": {"correct": True}, "base": {"correct": True}}


def test_compare_command_against_an_openai_compatible_stub(tmp_path):
    with LLMStub(reply=lambda body: "You live in Lisbon.") as stub:
        proc = subprocess.run([sys.executable, "-m", "core", "compare", "--methods", "base,rag", "--script",
                               str(_script(tmp_path)), "--out", str(tmp_path / "out"), "--base-url", stub.url, "--model", "stub"],
                              cwd=REPO, capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "HF_HUB_OFFLINE": "1",
                                   "TRANSFORMERS_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.splitlines()[-1])
    # the stub says Lisbon to everything: right in the first dialogue; in the second nobody said it, and
    # the reply check's never-told test (core/told_answers.py) makes it "You haven't told me that."
    assert summary["items"] == 3 and summary["per_method"]["rag"]["accuracy"] == 0.5
    items = read_items(tmp_path / "out" / "compare.jsonl")
    assert all(set(i["replies"]) == {"base", "rag"} for i in items)
    assert items[1]["replies"]["rag"]["correct"] is True and items[2]["replies"]["rag"]["reply"] == "You haven't told me that."


@pytest.mark.parametrize("methods, message", [("base", "2 to 4 different"), ("base,nope", "unknown method"),
                                              ("base,base", "2 to 4 different")])
def test_compare_refuses_bad_methods_before_loading_anything(tmp_path, capsys, methods, message):
    assert main(["compare", "--methods", methods, "--script", str(_script(tmp_path)), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "o").exists()
