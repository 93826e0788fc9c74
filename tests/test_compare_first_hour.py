"""Compare as a newcomer walks it (issue 57): a new visit opens the person's latest comparison and
lists the earlier ones to reopen; the vote's wording fits the number of methods; a ranking from
too few votes shows counts, not intervals whose low equals their high, and no "None" cells."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.compare_group import comparisons, remember
from core.store import Store
from core.votes.model import make_vote
from core.votes.ranking import MIN_METHOD_VOTES, rank, short_of_votes
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)
from ui import compare

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "6_Compare.py")
ME = "anon:cmp-first-hour"


@pytest.fixture()
def hashing(monkeypatch):
    monkeypatch.setenv("WORKBENCH_EMBEDDER", "hashing")  # rag's embedder: hashed n-grams, no model to load


def visit(query: dict | None = None) -> AppTest:
    """A new session of the page (the sidebar's entry, a new tab), as ME."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["owner_id"] = ME
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def address(at: AppTest) -> str:
    value = at.query_params["compare"]
    return value[0] if isinstance(value, list) else value


def users(at: AppTest) -> list[str]:
    return [m.markdown[0].value.replace("\\", "") for m in at.chat_message if m.name == "user"]  # as literal() escaped it


def test_a_new_visit_opens_the_latest_comparison_and_lists_the_earlier_ones(stub, hashing):
    at = visit()
    at.chat_input[0].set_value("Hi, I live in Lisbon.").run()
    assert not at.exception
    first = address(at)
    next(b for b in at.sidebar.button if b.label == "New comparison").click().run()
    at.chat_input[0].set_value("My dog is called Rex.").run()
    assert not at.exception
    second = address(at)
    assert second != first and len(second.split(",")) == 2

    again = visit()  # no address: the latest comparison, not an empty page
    assert not again.exception
    assert users(again) == ["My dog is called Rex."] and address(again) == second
    picker = again.sidebar.selectbox(key="cmp_pick")
    assert len(picker.options) == 2 and picker.options[0].startswith("Compare: My dog is called Rex. · base vs rag · ")
    assert picker.options[1].startswith("Compare: Hi, I live in Lisbon. · base vs rag · ")
    picker.select_index(1).run()  # the earlier one, reopened
    assert not again.exception
    assert users(again) == ["Hi, I live in Lisbon."] and address(again) == first


def test_the_comparisons_list_is_the_owners_latest_first_and_skips_deleted_ones(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    groups = [{m: store.create_conversation(f"c{k} {m}", method=m, owner=ME) for m in ("base", "rag")} for k in range(3)]
    for k, g in enumerate(groups):
        remember(store, ME, g, f"Compare: c{k}", now=lambda k=k: 100.0 + k)
    remember(store, ME, groups[0], "Compare: c0 again", now=lambda: 200.0)  # a message sent in it again
    assert [c.title for c in comparisons(store, ME)] == ["Compare: c0", "Compare: c2", "Compare: c1"]
    assert comparisons(store, ME)[0].group == groups[0]
    store.delete_conversation(groups[2]["rag"], owner=ME)
    assert [c.title for c in comparisons(store, ME)] == ["Compare: c0", "Compare: c1"]
    assert comparisons(store, "anon:someone-else") == []


def _vote(methods, winner):
    return make_vote(ME, "g", 0, methods, winner)


def test_the_vote_says_better_for_two_methods_and_best_for_more():
    assert [t for t, _ in compare.choices(["A", "B"])][:2] == ["A is better", "B is better"]
    assert [t for t, _ in compare.choices(["A", "B", "C"])][:3] == ["A is best", "B is best", "C is best"]
    assert compare.describe_vote(_vote(("dsmart", "rag"), "dsmart"), ["dsmart", "rag"]) == "A (dsmart) is better"
    assert compare.describe_vote(_vote(("dsmart", "rag", "base"), "dsmart"), ["dsmart", "rag", "base"]) == "A (dsmart) is best"
    assert compare.describe_vote(_vote(("rag", "base", "dsm", "dsmart"), "dsm"), ["rag", "base", "dsm", "dsmart"]) == "C (dsm) is best"


def _cells(frame: pd.DataFrame) -> list:
    return [v for row in frame.itertuples(index=False) for v in row]


def test_a_ranking_from_two_votes_shows_counts_not_intervals():
    ranking = rank([(("base", "rag"), "rag"), (("base", "rag"), "rag")], bootstrap=50)
    assert ranking.standings[0].low == ranking.standings[0].high  # the symptom: every resample alike
    assert short_of_votes(ranking) == [("rag", 2), ("base", 2)]
    table, matrix = compare.ranking_tables(ranking)
    assert "strength" not in table.columns and "95% interval" not in table.columns
    assert table.to_dict("records") == [{"method": "rag", "decisive votes": 2, "wins": 2, "losses": 0, "ties": 0, "bad": 0},
                                        {"method": "base", "decisive votes": 2, "wins": 0, "losses": 2, "ties": 0, "bad": 0}]
    assert matrix.to_dict() == {"base": {"base": 0, "rag": 2}, "rag": {"base": 2, "rag": 0}}
    assert not any(v is None for v in _cells(table) + _cells(matrix))


def test_a_ranking_with_enough_votes_shows_strengths_with_intervals_and_no_none_cells():
    outcomes = [(("base", "rag", "dsm"), w) for w in ["rag"] * 4 + ["base"] * 2 + ["dsm", "tie", "dsm", "all_bad"]]
    ranking = rank(outcomes, bootstrap=200)
    assert short_of_votes(ranking) == [] and all(s.wins + s.losses + s.ties >= MIN_METHOD_VOTES for s in ranking.standings)
    table, matrix = compare.ranking_tables(ranking)
    assert table["method"][0] == "rag"
    assert all(" to " in i for i in table["95% interval"])  # a spread, low below high
    # rag over base: 4 rag wins, 2 base wins, 1 tie as half a win each: (4 + 0.5) / 7
    assert matrix.loc["rag", "rag"] == "—" and matrix.loc["rag", "base"] == "0.64" and matrix.loc["base", "rag"] == "0.36"
    assert not any(v is None for v in _cells(table) + _cells(matrix))
    assert compare.interval(0.5, 0.5) == "none: every resample alike"


def test_a_ranking_needs_two_methods_compared():
    assert short_of_votes(rank([(("base", "rag"), "both_bad")] * 6, bootstrap=20)) == [("base", 0), ("rag", 0)]
