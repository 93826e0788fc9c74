"""Which language a text is in, for the reply check's rule that a reply is written in the user's
language (issue 52: the 1.5B model answered a dialogue that opened "Hola! I'm Rosa ..." in Spanish,
though every message after the greeting was English; docs/replies.md).

py3langid (a naive-Bayes identifier over byte n-grams, its model in the wheel) is asked only among
`LANGUAGES`, only about a text's words other than names, and only when there are `MIN_WORDS` of
them or more: over the 7,603 recorded reply sentences of English dialogues that leaves, that calls
exactly run 6's 19 Spanish ones other than English. With all 97 of its languages or shorter texts
it also called English sentences full of names Italian, Dutch or Nigerian Pidgin
(scripts/lab/reply_language_probe.py, results/replies/language-probe/, docs/replies.md).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Sequence

# the languages a text is called among (15 widely used ones), each with its name for the note that
# has a reply written again
LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German", "it": "Italian",
             "pt": "Portuguese", "nl": "Dutch", "pl": "Polish", "ru": "Russian", "zh": "Chinese",
             "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "hi": "Hindi", "tr": "Turkish"}
MIN_WORDS = 6
# a Chinese, Japanese or Korean character counts as a word: those scripts put no spaces between words
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


_LOADING = threading.Lock()


def _identifier():
    """The identifier, restricted to LANGUAGES: loaded once, read only after. Its model is
    xz-compressed (0.7 s to load on 2 cores), so the first replies of a process arriving together
    wait for one load instead of each running its own (core.warmup loads it at the app's start)."""
    with _LOADING:
        return _load_identifier()


@lru_cache(maxsize=1)
def _load_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def without_names(text: str) -> str:
    """`text` without its capitalised words after the first (names, mostly) nor words with digits:
    names belong to no language, and a sentence of them misleads the identifier ("Paris, Lyon,
    Marseille, Toulouse, Nice, Nantes, Strasbourg are big French cities." is French whole, and
    "are big cities." is too short to tell)."""
    found = _WORD.findall(text)
    return " ".join(w for i, w in enumerate(found)
                    if (i == 0 or not w[:1].isupper()) and not any(c.isdigit() for c in w))


def language_of(text: str, min_words: int = MIN_WORDS) -> str | None:
    """The ISO 639-1 code of `text`'s language, or None when its words other than names are too
    few to tell."""
    plain = without_names(text)
    if word_count(plain) < min_words:
        return None
    return _identifier().classify(plain)[0]


def users_language(messages: Sequence[str], min_words: int = MIN_WORDS) -> str | None:
    """The language the user writes in: that of the latest message when it is long enough to tell
    (a user may change language), else that of all their messages together; None when even those
    are too short."""
    if not messages:
        return None
    return language_of(messages[-1], min_words) or language_of(" ".join(messages), min_words)


def language_name(code: str) -> str:
    return LANGUAGES.get(code, code)


class SentenceLanguages:
    """A reply's sentences taken in order, as a stream sees them: `other(sentence)` says whether
    each is not in `language` (the user's). A sentence of `min_words`+ words is not when the
    identifier calls it another language; a shorter one follows the last that was told apart
    ("Tardó dos meses." after a Spanish sentence), and before any is kept (too short to tell).
    `told_apart` counts the sentences told to be in another language. No `language`: all are kept."""

    def __init__(self, language: str | None, min_words: int = MIN_WORDS) -> None:
        self.language = language
        self.min_words = min_words
        self.switched = False  # the last sentence long enough to tell was in another language
        self.told_apart = 0

    def other(self, sentence: str) -> bool:
        if self.language is None:
            return False
        found = language_of(sentence, self.min_words)
        if found is not None:
            self.switched = found != self.language
            self.told_apart += self.switched
        return self.switched


def other_language(sentences: Sequence[str], language: str | None, min_words: int = MIN_WORDS) -> set[int]:
    """The indices of the sentences not in `language` (`SentenceLanguages`), of a whole reply."""
    follower = SentenceLanguages(language, min_words)
    return {i for i, sentence in enumerate(sentences) if follower.other(sentence)}
