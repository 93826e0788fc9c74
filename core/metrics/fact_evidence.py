"""Evidence for one atomic fact: passage windows ranked against the fact, and lexical checks of the
fact's entities, numbers and dates against them.

Why lexical checks: annotated refutations are mostly a changed number, year or name ("built in
1963" against "built in 1916"), which a small NLI model reads as neutral; and a fact whose names
appear nowhere in the evidence can hardly be supported by it.

Selection: each passage is cut into windows of up to two consecutive sentences, each prefixed
with the passage title when the window does not name it (later sentences say "He" or "It"); the
windows are ranked by BM25 over content words plus, when an embedder is given, cosine similarity.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.metrics.fact_types import Passage
from core.text import NUMBER_WORDS, ORDINAL_WORDS, words

MAX_WINDOW_CHARS = 500  # a window longer than this is cut (the NLI model reads 128-256 tokens)
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:st|nd|rd|th|s)?(?![\w])")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS  # a word list only; does not load a model

    return frozenset(STOP_WORDS) | {"s", "also", "known", "including", "include", "includes"}


@lru_cache(maxsize=50000)
def fold(text: str) -> str:
    """Lower case without accents, so "Kovář" matches "Kovar" (other non-ASCII letters are dropped)."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode("ascii")


def content_words(text: str) -> list[str]:
    return [w for w in words(fold(text)) if w not in stop_words() and not w.isdigit()]


@dataclass(frozen=True)
class Quantity:
    value: float
    is_year: bool
    text: str


def quantities(text: str) -> list[Quantity]:
    """Numbers in `text`: digits (with thousands commas, ordinal suffixes) and number words (core.text.NUMBER_WORDS: up to
    twenty, and the tens to ninety); four-digit values between 1000 and 2100 count as years."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group(1)
        value = float(raw.replace(",", ""))
        out.append(Quantity(value, "," not in raw and "." not in raw and len(raw) == 4 and 1000 <= value <= 2100, m.group(0)))
    for w in words(text):
        if w in NUMBER_WORDS:
            out.append(Quantity(float(NUMBER_WORDS[w]), False, w))
        elif w in ORDINAL_WORDS:
            out.append(Quantity(float(ORDINAL_WORDS[w]), False, w))
    return out


def months(text: str) -> set[str]:
    return {w for w in words(text) if w in MONTHS}


def _same_number(a: Quantity, b: Quantity) -> bool:
    """Equal, or (for counts of 10,000 and more, never years) equal after the rounding a response
    makes ("40,000" for 40,123)."""
    if a.value == b.value:
        return True
    return not (a.is_year or b.is_year) and a.value >= 10_000 and abs(a.value - b.value) / a.value < 0.005


@dataclass(frozen=True)
class Window:
    text: str  # what the NLI model reads (title-prefixed)
    passage: int  # index of the passage in the item's evidence
    title: str
    source: str


_BOUNDARY = re.compile(r"(?<=[.!?])([\"')\]]?)\s+(?=[\"'(\[]?[A-Z0-9])")
_NO_BREAK = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "no", "vs", "co", "inc", "ltd", "mt", "ft", "gen", "col", "lt",
             "sgt", "rev", "prof", "u.s", "u.k", "e.g", "i.e", "etc", "approx", "jan", "feb", "aug", "sept", "oct", "nov", "dec"}


@lru_cache(maxsize=20000)
def passage_sentences(text: str) -> tuple[str, ...]:
    """Sentences of an evidence passage by a regular expression: full stop, then a capital. Not
    pysbd: it takes ~40 ms a passage here (its patterns overflow Python's regex cache), and a fact
    has ten passages. Abbreviations and initials ("Dr.", "J. R.") do not end a sentence."""
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        end = m.start() + len(m.group(1))
        before = text[start:end].rstrip(".!?\"')]").split()
        last = before[-1].lower() if before else ""
        if last in _NO_BREAK or (len(last) == 1 and last.isalpha()):
            continue
        out.append(text[start:end].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return tuple(s for s in out if s)


def windows_of(passages: Sequence[Passage], size: int = 2) -> list[Window]:
    """Every run of up to `size` consecutive sentences of each passage (title-prefixed)."""
    out = []
    for i, p in enumerate(passages):
        sentences = passage_sentences(p.text) or ((p.text,) if p.text.strip() else ())
        for start in range(len(sentences)):
            for width in range(1, size + 1):
                if start + width > len(sentences) or (width > 1 and len(sentences) < 2):
                    continue
                body = " ".join(sentences[start : start + width])[:MAX_WINDOW_CHARS]
                named = not p.title or fold(p.title.split("(")[0].strip()) in fold(body)
                out.append(Window(body if named else f"{p.title}: {body}", i, p.title, p.source))
    return out


def index_words(text: str) -> list[str]:
    """Words that rank passages: content words and numbers (a year or a count is the most specific
    thing a fact says)."""
    return [w for w in words(fold(text)) if w not in stop_words()]


def bm25_scores(query: str, texts: Sequence[str]) -> np.ndarray:
    from rank_bm25 import BM25Okapi

    terms = index_words(query)
    if not texts or not terms:
        return np.zeros(len(texts))
    return np.asarray(BM25Okapi([index_words(t) or ["_"] for t in texts]).get_scores(terms), dtype=float)


def rank_windows(fact: str, windows: Sequence[Window], embedder=None, passages: Sequence[Passage] = (),
                 passage_weight: float = 0.5) -> np.ndarray:
    """A score per window, higher = closer to the fact: BM25 of the window (scaled to [0, 1] by the
    best window), plus `passage_weight` x the scaled BM25 of its whole passage (title included) when
    `passages` are given, so a sentence of the passage about the fact's subject beats a look-alike
    sentence elsewhere ("The 1965 draft took place on November 28" against the 1963 draft), plus
    cosine similarity when an embedder is given."""
    if not windows:
        return np.zeros(0)
    bm25 = bm25_scores(fact, [w.text for w in windows])
    scores = bm25 / bm25.max() if bm25.max() > 0 else bm25
    if passages:
        prior = passage_scores(fact, passages)
        scores = scores + passage_weight * prior[[w.passage for w in windows]]
    if embedder is not None:
        vectors = embedder.encode([fact] + [w.text for w in windows])
        scores = scores + vectors[1:] @ vectors[0]
    return scores


def passage_scores(fact: str, passages: Sequence[Passage]) -> np.ndarray:
    """BM25 of the fact over each passage with its title (counted twice: a title names the subject),
    scaled to [0, 1] by the best passage."""
    scores = bm25_scores(fact, [f"{p.title} {p.title} {p.text}" for p in passages])
    return scores / scores.max() if scores.size and scores.max() > 0 else scores


def anchor_passage(fact: str, passages: Sequence[Passage]) -> int:
    """The passage most about the fact: BM25 of the fact over title + text; -1 when none."""
    if not passages:
        return -1
    return int(np.argmax(passage_scores(fact, passages)))


@dataclass(frozen=True)
class LexicalChecks:
    """What of the fact the evidence (or the history) mentions. Shares are in [0, 1]; 1.0 where
    the fact has nothing of that kind (no names, no numbers). "Anchor" = the passage most about the
    fact (`anchor_passage`): a changed number or name shows there."""

    n_content: int
    coverage_anchor: float  # share of the fact's content words in the anchor passage
    coverage_all: float  # ... in all the evidence together
    n_names: int
    names_found: float  # share of the fact's names (proper nouns) found anywhere in the evidence
    names_anchor: float  # ... in the anchor passage
    n_numbers: int
    numbers_found: float  # anywhere
    numbers_anchor: float  # in the anchor passage
    number_conflict: float  # 1 if a count of the fact is absent from the anchor, which has counts of its own
    year_conflict: float  # the same for years
    month_conflict: float  # the same for month names
    title_match: float  # how much of the anchor's title the fact names, 0-1

    def as_dict(self, prefix: str = "") -> dict[str, float]:
        return {f"{prefix}{k}": float(v) for k, v in self.__dict__.items()}


def names_in(fact_doc) -> list[str]:
    """Name words of a spaCy-parsed fact: the words of its named entities (not numbers or dates)
    and its proper nouns, folded, each once. Words, not whole names, so "CMLL CMML" still finds
    "CMLL" and a changed first name shows as one missing word."""
    skip = {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"}
    tokens = [t for e in fact_doc.ents if e.label_ not in skip for t in e] + [t for t in fact_doc if t.pos_ == "PROPN"]
    out = []
    for token in tokens:
        key = fold(token.text).strip(" .,'\"")
        if key and key not in out and not key.isdigit() and key not in stop_words() and any(c.isalpha() for c in key):
            out.append(key)
    return out


def _name_found(name: str, haystack_words: set[str], haystack: str) -> bool:
    """Exactly, or (for words of 5+ letters) nearly, to forgive transliteration ("Ková" / "Kovář")."""
    from rapidfuzz import fuzz

    if name in haystack_words:
        return True
    return len(name) >= 5 and fuzz.partial_ratio(name, haystack) >= 90


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 1.0


def _conflict(fact_q: Sequence[Quantity], anchor_q: Sequence[Quantity], years: bool) -> float:
    mine = [q for q in fact_q if q.is_year == years]
    theirs = [q for q in anchor_q if q.is_year == years]
    return float(bool(theirs) and any(not any(_same_number(q, e) for e in theirs) for q in mine))


def check_lexical(fact: str, fact_doc, passages: Sequence[Passage]) -> LexicalChecks:
    """Lexical checks of `fact` (and its spaCy parse) against evidence passages."""
    fact_words = set(content_words(fact))
    n = len(fact_words)
    anchor = anchor_passage(fact, passages)
    anchor_text = passages[anchor].text if anchor >= 0 else ""
    anchor_title = passages[anchor].title if anchor >= 0 else ""
    all_text = " ".join(p.text for p in passages)
    coverage_anchor = len(fact_words & set(content_words(f"{anchor_title} {anchor_text}"))) / n if n else 1.0
    coverage_all = len(fact_words & set(content_words(" ".join(f"{p.title} {p.text}" for p in passages)))) / n if n else 1.0

    names = names_in(fact_doc)
    folded_all, folded_anchor = fold(all_text + " " + " ".join(p.title for p in passages)), fold(f"{anchor_title} {anchor_text}")
    words_all, words_anchor = set(words(folded_all)), set(words(folded_anchor))
    fact_q, anchor_q = quantities(fact), quantities(anchor_text)
    all_q = [q for p in passages for q in quantities(p.text)]
    fact_months, anchor_months = months(fact), months(anchor_text)
    title_words = set(content_words(anchor_title.split("(")[0])) | {w for w in words(anchor_title) if w.isdigit()}
    return LexicalChecks(
        n_content=n,
        coverage_anchor=coverage_anchor,
        coverage_all=coverage_all,
        n_names=len(names),
        names_found=_share([_name_found(x, words_all, folded_all) for x in names]),
        names_anchor=_share([_name_found(x, words_anchor, folded_anchor) for x in names]),
        n_numbers=len(fact_q),
        numbers_found=_share([any(_same_number(q, e) for e in all_q) for q in fact_q]),
        numbers_anchor=_share([any(_same_number(q, e) for e in anchor_q) for q in fact_q]),
        number_conflict=_conflict(fact_q, anchor_q, years=False),
        year_conflict=_conflict(fact_q, anchor_q, years=True),
        month_conflict=float(bool(fact_months and anchor_months and not fact_months & anchor_months)),
        title_match=len(title_words & set(index_words(fact))) / len(title_words) if title_words else 0.0,
    )
