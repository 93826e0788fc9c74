"""Relative time expressions resolved against the session date (core.timeref), and SGMem showing
its memory time anchored without changing what it retrieves."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from hypothesis import given, strategies as st

from core.dialogue import Dialogue, Turn
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.retriever import SGMemRetriever
from core.resources import HashingEmbedder
from core.timeref import anchor_text, anchor_turn, said_on, time_refs

MONDAY = dt.date(2023, 5, 8)  # 8 May 2023 was a Monday


@pytest.mark.parametrize("date, day", [
    ("1:56 pm on 8 May, 2023", dt.date(2023, 5, 8)),  # LoCoMo
    ("2023/05/20 (Sat) 02:21", dt.date(2023, 5, 20)),  # LongMemEval
    ("2024-01-31", dt.date(2024, 1, 31)),
    ("", None),
    ("Tuesday", None),  # no year: nothing is resolved against a guessed day
    ("sometime in spring 2023", None),  # a year but no day that parses
])
def test_session_dates(date, day):
    assert said_on(date) == day


@pytest.mark.parametrize("phrase, resolved", [
    ("yesterday", "7 May 2023"),
    ("Last night", "7 May 2023"),
    ("the day before yesterday", "6 May 2023"),
    ("today", "8 May 2023"),
    ("tonight", "8 May 2023"),
    ("tomorrow", "9 May 2023"),
    ("three days ago", "5 May 2023"),
    ("10 days ago", "28 April 2023"),  # across a month
    ("a week ago", "one week before 8 May 2023"),
    ("two weeks ago", "2 weeks before 8 May 2023"),
    ("last week", "the week before 8 May 2023"),
    ("this week", "the week of 8 May 2023"),
    ("next week", "the week after 8 May 2023"),
    ("this past weekend", "the weekend before 8 May 2023"),
    ("next weekend", "the weekend after 8 May 2023"),
    ("last Friday", "the Friday before 8 May 2023"),
    ("next Sunday", "the Sunday after 8 May 2023"),
    ("last month", "April 2023"),
    ("next month", "June 2023"),
    ("five months ago", "December 2022"),  # across a year
    ("last year", "2022"),
    ("next year", "2024"),
    ("3 years ago", "2020"),
    ("twenty years ago", "2003"),  # count words are core.text's one table
])
def test_each_expression_by_hand(phrase, resolved):
    [ref] = time_refs(f"I did it {phrase}.", MONDAY)
    assert ref.phrase == phrase and ref.resolved == resolved


@pytest.mark.parametrize("text", ["a few days ago", "recently", "the other day", "last time we met",
                                  "the week went by", "yesterdays", "in a year"])
def test_vague_or_not_relative_is_left_alone(text):
    assert anchor_text(text, MONDAY) == text


def test_anchor_keeps_the_words_and_adds_the_date_after_each():
    text = "I went to a support group yesterday and next month we move."
    assert anchor_text(text, MONDAY) == "I went to a support group yesterday (7 May 2023) and next month (June 2023) we move."
    assert anchor_text(text, None) == text


@given(st.text(max_size=80))
def test_anchoring_only_inserts(text):
    """Whatever the text, anchoring removes nothing: deleting the inserted brackets gives it back."""
    out = anchor_text(text, MONDAY)
    for ref in reversed(time_refs(text, MONDAY)):
        out = out.replace(f"{ref.phrase} ({ref.resolved})", ref.phrase, 1)
    assert out == text


def test_anchor_turn_uses_the_turns_date_and_returns_it_unchanged_without_one():
    said = Turn("user", "I adopted a dog yesterday.", "D1:1", 1, "Ann", "1:56 pm on 8 May, 2023")
    assert anchor_turn(said).text == "I adopted a dog yesterday (7 May 2023)."
    undated = replace(said, date="")
    assert anchor_turn(undated) is undated


def dialogue() -> Dialogue:
    date1, date2 = "10:00 am on 8 May, 2023", "9:00 am on 20 June, 2023"
    return Dialogue.from_turns([
        Turn("user", "I went to a support group yesterday.", "D1:1", 1, "Ann", date1),
        Turn("assistant", "That sounds powerful.", "D1:2", 1, "Bo", date1),
        Turn("user", "Next month I start painting classes.", "D2:1", 2, "Ann", date2),
        Turn("assistant", "Painting is relaxing.", "D2:2", 2, "Bo", date2),
    ])


def test_sgmem_shows_anchored_turns_and_ranks_as_without():
    """The anchors change what the reader sees, never the ranking: same chunks, same scores."""
    on = SGMemRetriever(HashingEmbedder(256), SGMemConfig(chunk_level="turn", knn_k=1, gamma=0.0))
    off = SGMemRetriever(HashingEmbedder(256), SGMemConfig(chunk_level="turn", knn_k=1, gamma=0.0, anchor_time=False))
    for r in (on, off):
        r.index(dialogue())
    query = "When did Ann go to the support group?"
    got, plain = on.retrieve(query, 4), off.retrieve(query, 4)
    assert [(e.source, e.score) for e in got] == [(e.source, e.score) for e in plain]
    texts = {e.source: e.text for e in got}
    assert texts["D1:1"] == "Ann: I went to a support group yesterday (7 May 2023)."
    assert "yesterday (" not in {e.source: e.text for e in plain}["D1:1"]
    assert on.stored_turn(dialogue().turns()[2]).text == "Next month (July 2023) I start painting classes."
    assert off.stored_turn(dialogue().turns()[2]).text == "Next month I start painting classes."
    assert on.settings()["anchor_time"] is True
