"""Literal values in text: numbers, dates, times of day, frequencies, as typed RDF literals.

Numbers are xsd:integer / xsd:decimal (words and ordinals included: 'five', '5th'), calendar dates
xsd:date, times of day xsd:time ('6:00 pm' -> 18:00:00); a frequency is a normalised phrase
('every week', 'three times a week'), which keeps the surface number word as said.
"""

from __future__ import annotations

import datetime as dt
import re

from rdflib import XSD, Literal

from core.methods.dsmart.word_lists import FREQUENCY_ADVERBS, NUMBER_WORDS, ORDINAL_WORDS, TIME_UNITS
from core.text import singular

_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)$")
_CLOCK = re.compile(r"^\s*(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\.?\s*$", re.I)
_CLOCK24 = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


def parse_number(token) -> int | float | None:
    """'25' -> 25, 'twenty' -> 20, '5th'/'fifth' -> 5, '1,300' -> 1300, '2.5' -> 2.5 (a spaCy token)."""
    return number_of(token.text)


def number_of(text: str) -> int | float | None:
    text = text.lower().replace(",", "").lstrip("$")
    if m := _ORDINAL.match(text):
        return int(m.group(1))
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    if text in ORDINAL_WORDS:
        return ORDINAL_WORDS[text]
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else value


def date_literal(text: str) -> Literal:
    """xsd:date when the text is a full calendar date, xsd:time when it is a clock time, else the
    text itself (e.g. 'last week')."""
    for fmt in ("%d %B %Y", "%B %d %Y", "%B %d, %Y", "%Y-%m-%d", "%Y/%m/%d", "%d %b %Y", "%b %d, %Y"):
        try:
            return Literal(dt.datetime.strptime(text.strip(), fmt).date(), datatype=XSD.date)
        except ValueError:
            continue
    clock = time_literal(text)
    return clock if clock is not None else Literal(text)


def time_literal(text: str) -> Literal | None:
    """'6:00 pm' / '7 am' / '18:30' -> xsd:time; None when the text is not a clock time."""
    text = re.sub(r"^(at|around|about|by)\s+", "", text.strip().lower())
    if m := _CLOCK.match(text):
        hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
        hour += 12 if m.group(3).lower() == "p" else 0
    elif m := _CLOCK24.match(text):
        hour, minute = int(m.group(1)), int(m.group(2))
    else:
        return None
    if hour > 23 or minute > 59:
        return None
    return Literal(dt.time(hour, minute), datatype=XSD.time)


_MMSS = re.compile(r"^\s*(\d{1,3}):([0-5]\d)\s*$")
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(hours?|hrs?|minutes?|mins?|seconds?|secs?)\b")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def duration_literal(text: str) -> Literal | None:
    """A time taken, as xsd:dayTimeDuration: '25:50' (minutes:seconds, when no clock time reads it),
    '27 minutes and 45 seconds', '1 hour 5 minutes'. A single unit ('3 months') is no such literal:
    it is a Quantity's amount with its unit. None otherwise."""
    text = text.strip().lower()
    if m := _MMSS.match(text):
        seconds = int(m.group(1)) * 60 + int(m.group(2))
    else:
        parts = _PART.findall(text)
        if len(parts) < 2:
            return None
        seconds = sum(float(n) * _SECONDS[unit[0]] for n, unit in parts)
    return Literal(dt.timedelta(seconds=seconds))


def frequency_phrase(tokens) -> str | None:
    """A frequency in a window of spaCy tokens: 'every (other) week', 'three times a week', 'twice a
    month', 'every two weeks', 'weekly'. The phrase as a normalised string, or None."""
    words = [t.lower_ for t in tokens]
    for i, w in enumerate(words):
        if w in FREQUENCY_ADVERBS:
            return FREQUENCY_ADVERBS[w]
        if w == "every":
            rest = words[i + 1 : i + 4]
            if rest and rest[0] == "other" and len(rest) > 1 and _unit(rest[1]):
                return f"every other {_unit(rest[1])}"
            if rest and _unit(rest[0]):
                return f"every {_unit(rest[0])}"
            if len(rest) > 1 and number_of(rest[0]) is not None and _unit(rest[1]):
                return f"every {rest[0]} {_unit(rest[1])}s"
        if w in ("once", "twice", "thrice") or (w == "times" and i > 0 and number_of(words[i - 1]) is not None):
            count = w if w in ("once", "twice", "thrice") else f"{words[i - 1]} times"
            rest = words[i + 1 : i + 3]
            if len(rest) == 2 and rest[0] in ("a", "an", "per", "each", "every") and _unit(rest[1]):
                return f"{count} a {_unit(rest[1])}"
    return None


def _unit(word: str) -> str | None:
    return TIME_UNITS.get(singular(word))


def is_amount(term) -> bool:
    """A number literal (not a boolean): a count, an amount of money, a measure."""
    return isinstance(term, Literal) and isinstance(term.toPython(), (int, float)) and not isinstance(term.toPython(), bool)
