"""The Compare page (AppTest, an OpenAI-compatible stub endpoint): two methods answer one message in
blind columns; a vote stores the methods in the order shown and reveals the names; the ranking,
`votes export` and a reload follow; another owner sees none of it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.votes.store import VoteStore
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "6_Compare.py")
ALICE, BOB = "anon:alice-cmp", "anon:bob-cmp"


@pytest.fixture()
def hashing(monkeypatch):
    monkeypatch.setenv("WORKBENCH_EMBEDDER", "hashing")  # rag's embedder: hashed n-grams, no model to load


def page(owner: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["owner_id"] = owner
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def headers(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if re.match(r"\*\*[A-D]\*\*", m.value)]


def test_two_methods_one_message_blind_vote_reveal_rank_export_reload(stub, hashing, tmp_path, capsys):
    at = page(ALICE)
    assert not at.exception
    assert at.sidebar.multiselect[0].value == ["base", "rag"]  # opens with two methods: type at once
    at.chat_input[0].set_value("Hi, I live in Lisbon.").run()
    assert not at.exception, at.exception
    assert headers(at) == ["**A**", "**B**"]  # no method name before the vote
    assert [b.label for b in at.button if "better" in b.label or b.label in ("Tie", "Both bad")] == \
        ["A is better", "B is better", "Tie", "Both bad"]
    assert sum("You said: Hi, I live in Lisbon." in m.value.replace("\\", "") for m in at.markdown) == 2
    # each reply says which of bench replies' checks it trips (issue 52): the stub says the message back
    tripped = [c.value for c in at.caption if c.value.startswith("Reply checks tripped: ")]
    assert len(tripped) == 2 and all("restatement" in t for t in tripped), tripped

    next(b for b in at.button if b.label == "A is better").click().run()
    assert not at.exception
    shown = headers(at)
    assert len(shown) == 2 and {re.search(r"`(\w+)`", h).group(1) for h in shown} == {"base", "rag"}  # names revealed
    first = re.search(r"`(\w+)`", shown[0]).group(1)
    store = VoteStore(os.environ["WORKBENCH_DB"])
    [vote] = store.votes(owner=ALICE)
    assert vote.winner == first and vote.methods[0] == first and len(vote.methods) == 2
    assert vote.replies == ("You said: Hi, I live in Lisbon.",) * 2
    assert "cs" in vote.measures[first]  # the consistency badge's CS (tiny NLI model) kept with the vote
    [counts] = [d.value for d in at.dataframe if "decisive votes" in d.value.columns][:1]
    assert set(counts["method"]) == {"base", "rag"}  # one vote: the counts, both methods (too few to rank, issue 57)
    assert any("Too few votes to rank yet" in i.value for i in at.info)

    # a new click replaces the vote, the history keeps both
    next(b for b in at.button if b.label == "Tie").click().run()
    assert [v.winner for v in store.votes(owner=ALICE)] == ["tie"]
    assert len(store.history(vote.conversation, 0, owner=ALICE)) == 2

    out = tmp_path / "votes.jsonl"
    assert main(["votes", "export", "--db", os.environ["WORKBENCH_DB"], "--out", str(out)]) == 0
    [line] = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["winner"] == "tie" and len(line["methods"]) == 2
    assert main(["votes", "report", "--db", os.environ["WORKBENCH_DB"], "--bootstrap", "50"]) == 0
    report = capsys.readouterr().out
    assert re.search(r"^  base\s+[+-]\d", report, re.M) and re.search(r"^  rag\s+[+-]\d", report, re.M)

    # a reload (a new session with the address) reopens the comparison with its vote
    again = page(ALICE, {"compare": vote.conversation})
    assert not again.exception and len(headers(again)) == 2 and "`" in headers(again)[0]
    # another owner with the same address sees nothing of it
    bob = page(BOB, {"compare": vote.conversation})
    assert not bob.exception and headers(bob) == []
    assert "Lisbon" not in " ".join(m.value for m in bob.markdown)
    assert store.votes(owner=BOB) == []


def test_fewer_than_two_methods_sends_nothing(stub, hashing):
    at = page(ALICE)
    at.sidebar.multiselect[0].set_value(["base"]).run()
    assert not at.exception
    assert any("at least two methods" in i.value for i in at.info)


def test_votes_on_the_items_of_a_scripted_comparison(app_env, hashing):
    items = [{"compare": "cmp-abc", "item": k, "dialogue": 0, "turn": k, "user": f"Question {k}?", "expected": ["Lisbon"],
              "methods": ["base", "rag"], "replies": {"base": {"reply": f"base says {k}", "correct": False},
                                                    "rag": {"reply": f"rag says Lisbon {k}", "correct": True}}}
             for k in range(2)]
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["owner_id"] = ALICE
    at.session_state["cmp_items"] = items
    at.run()
    assert not at.exception
    assert headers(at) == ["**A**", "**B**"]  # the item's replies, blind
    next(b for b in at.button if b.label == "Both bad").click().run()
    assert not at.exception and len(headers(at)) == 2 and all("`" in h for h in headers(at))
    [vote] = VoteStore(os.environ["WORKBENCH_DB"]).votes(owner=ALICE)
    assert (vote.conversation, vote.turn, vote.winner) == ("cmp-abc", 0, "both_bad")
    assert vote.measures == {"base": {"correct": False}, "rag": {"correct": True}}
    assert set(vote.replies) == {"base says 0", "rag says Lisbon 0"}
