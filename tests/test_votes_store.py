"""The vote store on SQLite and on a real PostgreSQL: one current vote per person per turn with its
history, owners apart, merges without duplicates, and durable when a writer is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import SHARED_OWNER
from core.votes.model import VoteError, make_vote, vote_from_json
from core.votes.store import VoteStore

REPO = Path(__file__).resolve().parent.parent


def test_a_new_click_replaces_the_vote_and_the_history_keeps_both(db_url):
    store = VoteStore(db_url)
    first = store.vote("c1", 0, ["rag", "base"], "rag", owner="anon:a", replies=["Lisbon.", "I don't know."],
                       measures={"rag": {"cs": 0.9, "correct": True}, "base": {"cs": 0.4, "correct": False}})
    assert first.created_at > 0 and first.methods == ("rag", "base")
    again = store.vote("c1", 0, ["rag", "base"], "rag", owner="anon:a", replies=["Lisbon.", "I don't know."],
                       measures={"rag": {"cs": 0.9, "correct": True}, "base": {"cs": 0.4, "correct": False}})
    assert again == first  # a double click changes nothing
    store.vote("c1", 0, ["rag", "base"], "tie", owner="anon:a", replies=["Lisbon.", "I don't know."])
    current = store.get("c1", 0, owner="anon:a")
    assert current.winner == "tie" and current.replies == ("Lisbon.", "I don't know.")
    assert [v.winner for v in store.history("c1", 0, owner="anon:a")] == ["rag", "tie"]
    assert len(store.votes(owner="anon:a")) == 1  # one current vote per person per turn
    store.vote("c1", 1, ["rag", "base"], "both_bad", owner="anon:a")
    assert [(v.turn, v.winner) for v in store.votes(owner="anon:a")] == [(0, "tie"), (1, "both_bad")]
    assert store.get("c1", 0, owner="anon:a").measures == {}  # the tie was given without measures


def test_owners_are_apart_and_the_shared_demo_is_read_only(db_url):
    store = VoteStore(db_url)
    store.vote("c1", 0, ["a", "b"], "a", owner="anon:alice")
    store.vote("c1", 0, ["a", "b"], "b", owner="anon:bob")  # the same turn, another person: a vote of its own
    assert [v.winner for v in store.votes(owner="anon:alice")] == ["a"]
    assert [v.winner for v in store.votes(owner="anon:bob")] == ["b"]
    assert store.get("c1", 0, owner="anon:carol") is None
    assert store.history("c1", 0, owner="anon:carol") == []
    assert store.counts(owner="anon:alice") == {"mine": 1, "everyone": 2}
    # everyone's rankings: methods and winners only
    assert sorted(store.outcomes_of_everyone()) == [(("a", "b"), "a"), (("a", "b"), "b")]
    with pytest.raises(PermissionError):
        store.vote("c1", 0, ["a", "b"], "a", owner=SHARED_OWNER)
    with pytest.raises(ValueError):
        store.votes(owner="")
    # demo votes imported under the shared owner are seen by everyone, and only with include_shared
    demo = make_vote("anon:x", "demo", 0, ["a", "b"], "a", created_at=100.0)
    store.import_votes([demo], owner=SHARED_OWNER)
    assert [v.conversation for v in store.votes(owner="anon:carol")] == ["demo"]
    assert store.votes(owner="anon:carol", include_shared=False) == []


def test_bad_votes_are_refused_with_a_clear_message(db_url):
    store = VoteStore(db_url)
    with pytest.raises(VoteError, match="none of the methods shown"):
        store.vote("c", 0, ["a", "b"], "c", owner="anon:a")
    with pytest.raises(VoteError, match="2 to 4 different methods"):
        store.vote("c", 0, ["a", "a"], "a", owner="anon:a")
    with pytest.raises(VoteError, match="one string per method"):
        store.vote("c", 0, ["a", "b"], "a", owner="anon:a", replies=["only one"])
    with pytest.raises(VoteError, match="finite number"):
        store.vote("c", 0, ["a", "b"], "a", owner="anon:a", measures={"a": {"cs": float("nan")}})
    assert store.votes(owner="anon:a") == []
    # "both_bad" of three methods is "all_bad", and the other way round
    assert store.vote("c", 0, ["a", "b", "c"], "both_bad", owner="anon:a").winner == "all_bad"
    assert store.vote("c", 1, ["a", "b"], "all_bad", owner="anon:a").winner == "both_bad"


def test_import_merges_without_duplicates_and_is_all_or_nothing(db_url):
    store = VoteStore(db_url)
    store.vote("c1", 0, ["a", "b"], "a", owner="anon:a")
    exported = [v.to_json() for v in store.votes(owner="anon:a")]
    other = VoteStore(db_url)  # the same database through another store: importing its own export adds nothing
    report = other.import_votes([vote_from_json(r) for r in exported])
    assert (report.added, report.replaced, report.unchanged, report.history_only) == (0, 0, 1, 0)
    assert len(store.history("c1", 0, owner="anon:a")) == 1
    newer = make_vote("anon:a", "c1", 0, ["a", "b"], "b", created_at=time.time() + 60)
    older = make_vote("anon:a", "c1", 1, ["a", "b"], "tie", created_at=50.0)
    report = store.import_votes([newer, older])
    assert (report.added, report.replaced, report.unchanged) == (1, 1, 0)
    assert store.get("c1", 0, owner="anon:a").winner == "b"
    report = store.import_votes([newer, older])  # twice: nothing new
    assert (report.added, report.replaced, report.unchanged) == (0, 0, 2)
    stale = make_vote("anon:a", "c1", 0, ["a", "b"], "tie", created_at=10.0)
    assert store.import_votes([stale]).history_only == 1
    assert store.get("c1", 0, owner="anon:a").winner == "b"
    assert [v.winner for v in store.history("c1", 0, owner="anon:a")] == ["a", "b", "tie"]
    before = store.all_votes()
    with pytest.raises(VoteError, match="no created_at"):
        store.import_votes([make_vote("anon:z", "c9", 0, ["a", "b"], "a", created_at=5.0),
                            make_vote("anon:z", "c9", 1, ["a", "b"], "a")])
    assert store.all_votes() == before  # nothing half-way


WRITER = r"""
import sys
from core.votes.store import VoteStore
store = VoteStore(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    store.vote("c-kill", i % 40, ["dsmart", "rag", "base"][: 2 + i % 2], ["dsmart", "tie", "both_bad"][i % 3],
               owner=f"anon:w{i % 3}", replies=["x" * 5000, "y" * 3000, "z"][: 2 + i % 2])
    i += 1
"""


def test_votes_survive_sigkill_of_the_writer(db_url):
    """On both back-ends: a voting process SIGKILLed five times leaves whole votes, one per person
    per turn, each also in the history."""
    store = VoteStore(db_url)
    for delay in (0.4, 0.7, 0.55, 0.9, 0.45):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, db_url], cwd=REPO, stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        votes = store.all_votes()
        assert len({(v.owner, v.conversation, v.turn) for v in votes}) == len(votes)
        for v in votes:  # every stored vote parses whole, with its replies
            assert len(v.replies) == len(v.methods) and v.replies[0] == "x" * 5000
            assert v in store.history(v.conversation, v.turn, owner=v.owner)
    assert len(votes) > 5


def test_the_column_order_is_drawn_per_turn_and_stable_on_reload():
    from core.votes.model import column_labels, shown_order

    orders = [tuple(shown_order(["rag", "base"], "c1", t, "anon:a")) for t in range(400)]
    assert 150 < orders.count(("rag", "base")) < 250  # both orders, about half the turns each
    assert orders == [tuple(shown_order(["rag", "base"], "c1", t, "anon:a")) for t in range(400)]  # a reload draws the same
    assert sorted(shown_order(["a", "b", "c", "d"], "c1", 3, "x")) == ["a", "b", "c", "d"]
    assert column_labels(3) == ["A", "B", "C"]
