"""Relative time expressions resolved against the day they were said.

A memory that stores "I went to the support group yesterday" loses the day once the session is
over: a reader asked "when?" weeks later sees only "yesterday" and the session's date somewhere
above it, and a small reader picks the wrong date. Memory systems resolve such expressions when
they write (TimeML-style normalisation; Zep keeps event times on its edges). `anchor_text` keeps
the words and adds the resolved time after them: "yesterday (7 May 2023)".

What is resolved, and how precisely, follows what the expression says and no more:
- a day ("today", "yesterday", "last night", "tomorrow", "three days ago") -> that date;
- a week, weekend or weekday named relative to now ("last week", "this weekend", "last Friday",
  "next Monday") -> "the week before 8 May 2023", "the Friday before 8 May 2023": which Friday
  "last Friday" means is not fixed by the words, so the anchor says it relative to the date;
- a month or year ("last month", "next year", "two years ago") -> "April 2023", "2021";
- weeks ago ("two weeks ago") -> "2 weeks before 8 May 2023";
- vague amounts ("a few days ago", "recently", "the other day") are left as they are.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from dateutil import parser as date_parser

from core.dialogue import Turn
from core.text import NUMBER_WORDS, WEEKDAYS

COUNTS = {"a": 1, "an": 1, **{w: n for w, n in NUMBER_WORDS.items() if n > 0}}  # "a week ago", "twenty years ago"
_COUNT = r"(\d{1,2}|" + "|".join(COUNTS) + r")"
_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_BEFORE = r"(?:last|this past|past)"

# Longest first: "the day before yesterday" before "yesterday", "this past weekend" before "this weekend".
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("day_before_yesterday", r"the day before yesterday"),
    ("day_after_tomorrow", r"the day after tomorrow"),
    ("days_ago", _COUNT + r" days? ago"),
    ("weeks_ago", _COUNT + r" weeks? ago"),
    ("months_ago", _COUNT + r" months? ago"),
    ("years_ago", _COUNT + r" years? ago"),
    ("weekday_before", _BEFORE + r" " + _WEEKDAY),
    ("weekday_after", r"next " + _WEEKDAY),
    ("weekend_before", _BEFORE + r" weekend"),
    ("weekend_after", r"next weekend"),
    ("weekend_of", r"this weekend"),
    ("week_before", _BEFORE + r" week"),
    ("week_after", r"next week"),
    ("week_of", r"this week"),
    ("month", r"(last|this|next) month"),
    ("year", r"(last|this|next) year"),
    ("yesterday", r"yesterday|last night"),
    ("today", r"today|tonight|this (?:morning|afternoon|evening)"),
    ("tomorrow", r"tomorrow"),
)
_RE = re.compile("|".join(f"(?P<{name}>\\b(?:{p})\\b)" for name, p in _PATTERNS), re.IGNORECASE)
_KIND = {name: re.compile(p, re.IGNORECASE) for name, p in _PATTERNS}  # each kind's own groups
_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


@dataclass(frozen=True)
class TimeRef:
    """One relative expression in a text and what it resolves to."""

    start: int
    end: int
    phrase: str
    resolved: str


def day_text(day: dt.date) -> str:
    return f"{day.day} {day:%B} {day.year}"


@lru_cache(maxsize=10_000)
def said_on(date: str) -> dt.date | None:
    """The day of a session date as the benchmarks write it ("1:56 pm on 8 May, 2023",
    "2023/05/20 (Sat) 02:21", ISO); None when it names no year or does not parse, so nothing is
    resolved against a guessed day."""
    if not date or not _YEAR.search(date):
        return None
    try:
        # dateutil fills a missing day or month from `default`: two defaults that disagree show it
        a, b = (date_parser.parse(date, fuzzy=True, default=dt.datetime(2000, m, m)).date() for m in (1, 2))
    except (ValueError, OverflowError):
        return None
    return a if a == b else None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else COUNTS[word.lower()]


def _shift_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def _resolve(kind: str, words: tuple[str, ...], day: dt.date) -> str:
    """What expression `kind` with its inner words (count, weekday, last/this/next) means on `day`."""
    when = day_text(day)
    n = next((_count(w) for w in words if w.isdigit() or w.lower() in COUNTS), 1)
    weekday = next((w.capitalize() for w in words if w.lower() in WEEKDAYS), "")
    step = next(({"last": -1, "this": 0, "next": 1}[w.lower()] for w in words if w.lower() in ("last", "this", "next")), 0)
    if kind == "day_before_yesterday":
        return day_text(day - dt.timedelta(days=2))
    if kind == "day_after_tomorrow":
        return day_text(day + dt.timedelta(days=2))
    if kind == "days_ago":
        return day_text(day - dt.timedelta(days=n))
    if kind == "weeks_ago":
        return f"{'one week' if n == 1 else f'{n} weeks'} before {when}"
    if kind == "months_ago":
        return f"{_shift_months(day, -n):%B %Y}"
    if kind == "years_ago":
        return str(day.year - n)
    if kind in ("weekday_before", "weekday_after"):
        return f"the {weekday} {'before' if kind.endswith('before') else 'after'} {when}"
    if kind.startswith(("weekend_", "week_")):
        unit, _, where = kind.partition("_")
        return f"the {unit} {where} {when}"
    if kind == "month":
        return f"{_shift_months(day, step):%B %Y}"
    if kind == "year":
        return str(day.year + step)
    offset = {"yesterday": -1, "today": 0, "tomorrow": 1}[kind]
    return day_text(day + dt.timedelta(days=offset))


def time_refs(text: str, day: dt.date) -> list[TimeRef]:
    """Every relative time expression of `text` with what it means said on `day`."""
    refs = []
    for m in _RE.finditer(text):
        kind, phrase = m.lastgroup, m.group(0)
        words = tuple(w for w in _KIND[kind].fullmatch(phrase).groups() if w)
        refs.append(TimeRef(m.start(), m.end(), phrase, _resolve(kind, words, day)))
    return refs


def anchor_text(text: str, day: dt.date | None) -> str:
    """`text` with each relative time expression followed by what it resolves to in brackets; an
    expression already followed by its resolution is left as it is (anchoring twice changes nothing)."""
    if day is None:
        return text
    out, last = [], 0
    for ref in time_refs(text, day):
        if text.startswith(f" ({ref.resolved})", ref.end):
            continue
        out.append(text[last:ref.end])
        out.append(f" ({ref.resolved})")
        last = ref.end
    out.append(text[last:])
    return "".join(out)


def anchor_dated(text: str, date: str) -> str:
    """`text` anchored against the day `date` names (a session date as the data writes it); the
    text itself when `date` names no day. What every method's memory shows a reader."""
    return anchor_text(text, said_on(date))


def anchor_turn(turn: Turn) -> Turn:
    """The turn with its relative time expressions resolved against its session's date (the turn
    itself when its date names no day)."""
    text = anchor_dated(turn.text, turn.date)
    return turn if text == turn.text else replace(turn, text=text)
