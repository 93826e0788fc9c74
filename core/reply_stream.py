"""The reply check applied while a reply streams (issue 57): what reaches the screen is already
checked, so the text a person reads is never replaced when the reply is stored.

    stream = CheckedStream(message, earlier_user, ReplyCheckSettings())
    for piece in llm_pieces:
        shown = stream.feed(piece)  # "" until a sentence is complete (and decided)
    shown = stream.finish()  # the rest, once the reply is done

The streamed pieces are buffered to sentence ends (core.text.split_sentences: a sentence is
complete once the next one has begun); each complete sentence goes through the same repairs as
`core.reply_check.check_reply`, by its sentence-level helpers (`in_second_person`,
`echo_sentences`), and only then is handed on. The echo rule looks across sentences (a stretch of
80+ characters of the user's message, repeated), so a sentence that could be part of an echo
(half of it or more is a stretch of the message) is held back until a sentence that cannot be
one follows it or the reply ends; so is a sentence that says the message back (`told_part`,
`restates`: dropped once something else is said, unless it asks or advises), one said in an earlier
reply (to a message that asks nothing), a bare greeting (to a message that told something) and one
with no word (it says nothing else), and one not in the user's language (core.language.SentenceLanguages,
decided sentence by sentence, in order); other sentences go out at once. Asked for a fact of the
user's world (core.told_answers), the reply is held until a sentence answers from what was told
(then the held sentences that answer with what was never told are dropped, the rest go on) or its
first `answer_window` sentences are in (or it ends): then, if one answered with what was never
told, the reply is the decline and the rest of what the model writes is not shown; else they go
on, and a later sentence that answers with what was never told is dropped. For a finished reply the
joined pieces are what `check_reply` makes of the whole text (tests/test_reply_stream.py checks
this on the check's own cases).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from core.language import SentenceLanguages, users_language
from core.metrics.reply_defects import normal_text
from core.metrics.saying_back import restates
from core.reply_check import (ReplyCheckSettings, asks_nothing, asks_or_advises, earlier_sentences, echo_sentences,
                               greets_only, in_second_person, is_greeting, says_nothing_else, sentence_key,
                               told_part)
from core.told_answers import (DECLINE, TOLD, UNTOLD, answer_kind, asks_for_name, fact_question, gives_no_name,
                                gives_told_name, said_words)
from core.text import split_sentences, words

# a reply whose first this many sentences long enough to tell are in another language, with nothing
# shown, is written again without waiting for its end: a small model's ramble in another language
# ran 200 tokens before its second try (docs/operations.md, "With the language check")
FOREIGN_STOP = 2
_ENDS_SENTENCE = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]*_]*$")  # a full stop, perhaps inside quotes or emphasis
_LINE_BREAK = re.compile(r"[ \t]*\n")


@dataclass(frozen=True)
class _Sentence:
    gap: str  # the text between the sentence before and this one
    text: str


def could_echo(sentence: str, message: str, settings: ReplyCheckSettings) -> bool:
    """Whether `sentence` may be found part of an echo of `message` once more of the reply is known:
    `echo_sentences` drops a sentence only when `echo_share` of it lies in a stretch of the message
    of `echo_chars`+ characters, so a sentence with no such share in common with the message never is."""
    norm_s, norm_m = normal_text(sentence), normal_text(message)
    if not norm_s or len(norm_m) < settings.echo_chars:
        return False
    common = SequenceMatcher(None, norm_s, norm_m, autojunk=False).find_longest_match(0, len(norm_s), 0, len(norm_m))
    return common.size >= settings.echo_share * len(norm_s)


class CheckedStream:
    """A reply's streamed pieces in, checked text out (`feed`, then `finish`). `shown` is all the
    text handed on so far; after `finish` it is the checked reply."""

    def __init__(self, message: str, earlier_user: Sequence[str] = (),
                 settings: ReplyCheckSettings = ReplyCheckSettings(), earlier_replies: Sequence[str] = ()) -> None:
        self.message = message
        self.told = told_part(message)  # what the message tells: a sentence saying it back is dropped
        # to a message that asks nothing, a sentence of an earlier reply said again is dropped too
        said_before = settings.drop_said_before and asks_nothing(message)
        self._before = earlier_sentences(earlier_replies) if said_before else frozenset()
        self.users = (*earlier_user, message)
        self.settings = settings
        # a bare greeting is held like a sentence said back: alone, the reply is written again
        self._greets = settings.second_try and not greets_only(message)
        self.raw = ""  # every piece fed
        self.shown = ""
        self.dropped: list[str] = []  # sentences taken out as echoes
        self.untold: list[str] = []  # sentences that answered with what the user never told
        self.question = fact_question(message, earlier_user) if settings.decline_untold else ""
        self._said = said_words(earlier_user) if self.question else None  # looked up per sentence, made once
        self._name_asked = bool(self.question) and asks_for_name(self.question)
        self._answer: list[tuple[int, _Sentence, str]] = []  # a fact question's sentences, held until one is told
        self._answered = False  # a sentence answered from what was told
        self._untold_at: set[int] = set()  # indices of the untold sentences
        self._told_at: set[int] = set()  # indices of the answers from what was told: said as "you"
        self._at = 0  # raw[:_at] is split into sentences already
        self._sentences: list[str] = []  # every complete sentence so far, as written
        self._held: list[tuple[int, _Sentence]] = []  # sentences that may be part of an echo, undecided
        self._gap: str | None = None  # the space before a run of dropped sentences
        self._closed = False  # the reply is the decline: what the model writes after it is not shown
        # the user's language: a sentence in another is held, and dropped once something else is said
        language = users_language(self.users, settings.language_words) if settings.same_language else None
        self._languages = SentenceLanguages(language, settings.language_words)
        self.foreign: list[str] = []  # sentences taken out as not in the user's language
        self._foreign_at: set[int] = set()

    @property
    def closed(self) -> bool:
        """Whether the reply is decided whole (the decline): nothing fed from now on is shown."""
        return self._closed

    @property
    def written_in_vain(self) -> bool:
        """Whether nothing has been shown and `FOREIGN_STOP` sentences long enough to tell are in
        another language than the user's: the reply will be written again (`core.reply_check.
        second_try_note` on the text so far), so the rest of this text need not be written."""
        return not self.shown and not self._closed and self._languages.told_apart >= FOREIGN_STOP

    @property
    def changed(self) -> bool:
        """Whether the shown text differs from what was fed (after `finish`)."""
        return self.shown != self.raw.strip()

    def feed(self, piece: str) -> str:
        """Take a piece of the reply; return the checked text that can be shown now."""
        self.raw += piece
        before = len(self.shown)
        self._take(final=False)
        return self.shown[before:]

    def finish(self) -> str:
        """The reply is complete: return the rest of its checked text."""
        before = len(self.shown)
        self._take(final=True)
        self._settle_answer()
        self._resolve(final=True)
        return self.shown[before:]

    def _take(self, final: bool) -> None:
        """Check the sentences completed since the last call (all of them when `final`). A sentence
        is complete when another has begun after it and it ends in a full stop or a line break
        (without one, the splitter may join it to the words that come next)."""
        if self._closed:
            return
        tail = self.raw[self._at:]
        found = split_sentences(tail)
        at = 0
        for sentence in found if final else found[:-1]:
            start = tail.find(sentence, at)
            if start < 0:  # the splitter changed the sentence's characters: the rest is shown as written (below)
                break
            end = start + len(sentence)
            if not final and not _ENDS_SENTENCE.search(sentence) and not _LINE_BREAK.match(tail, end):
                break
            self._add(_Sentence(tail[at:start], sentence))
            at = end
            if self._closed:  # the decline: nothing after it is shown
                return
        if final and tail[at:].strip():  # text the splitter made no sentence of ("?!"): kept, as check_reply keeps it
            self._show_rest(tail[at:])
            at = len(tail)
        self._at += at

    def _add(self, sentence: _Sentence) -> None:
        index = len(self._sentences)
        self._sentences.append(sentence.text)
        if self._languages.other(sentence.text):  # answers nothing; held, like an echo
            self._foreign_at.add(index)
            self._held.append((index, sentence))
            return
        if self.question:
            kind = answer_kind(sentence.text, self.question, self._said)
            if kind == TOLD:
                self._told_at.add(index)
            if kind == UNTOLD:
                self.untold.append(sentence.text)
                self._untold_at.add(index)
                if self._answered:
                    self._gap = sentence.gap if self._gap is None else self._gap
                    return
            if not self._answered:
                self._answer.append((index, sentence, kind))
                # to a name question only a told name answers ("It's a drone start-up." is told, no name)
                if kind == TOLD and (not self._name_asked or gives_told_name(sentence.text, self.question, self._said)):
                    self._answered = True
                    self._release_answer()
                elif len(self._answer) == self.settings.answer_window:  # no answer in the first sentences:
                    self._settle_answer()  # decided now (core.reply_check.answer_window), not at the reply's end
                    self._answered = True  # the rest is the reply's, with what was never told taken out
                    self._closed = self.shown == DECLINE
                return
        self._check(index, sentence)

    def _settle_answer(self) -> None:
        """The reply has ended with a fact question's sentences held: the decline if one answered
        with what was never told (and none from what was), else they go on."""
        if not self._answer:
            return
        held = [sentence.text for _, sentence, _ in self._answer]
        no_name = self._name_asked and gives_no_name(held, self.question, self._said)
        if self.untold or no_name:
            if not self.untold:  # no sentence named someone else: every held one talked around the name
                self.untold = held
            self.shown = DECLINE
            self._answer = []
            return
        self._release_answer()

    def _release_answer(self) -> None:
        held, self._answer = self._answer, []
        for index, sentence, kind in held:
            if kind == UNTOLD:
                self._gap = sentence.gap if self._gap is None else self._gap
            else:
                self._check(index, sentence)

    def _check(self, index: int, sentence: _Sentence) -> None:
        s = self.settings
        if ((s.drop_echoes and could_echo(sentence.text, self.message, s)) or self._said_before(sentence.text)
                or self._restates(sentence.text) or self._greeting(sentence.text) or not words(sentence.text)):
            self._held.append((index, sentence))
            return
        self._resolve(final=False)
        self._show(index, sentence)

    def _resolve(self, final: bool) -> None:
        """Decide the held sentences: those in an echo of the message (or not in the user's
        language) are dropped, unless the reply says nothing else (then it stays whole, as
        `check_reply` keeps it)."""
        if not self._held:
            return
        if self.shown == DECLINE and self.untold:  # the decline is the whole reply, as check_reply has it
            self._held = []
            return
        s = self.settings
        echo = echo_sentences(self._sentences, self.message, s.echo_chars, s.echo_share) if s.drop_echoes else set()
        echo |= {index for index, sentence in self._held if self._said_before(sentence.text)}
        back = {index for index, sentence in self._held if self._restates(sentence.text)}
        greeted = {index for index, sentence in self._held if self._greeting(sentence.text)}
        foreign = self._foreign_at
        if final and says_nothing_else(self._sentences, echo | back | greeted | self._untold_at | foreign):
            echo, back, foreign = set(), set(), set()  # nothing else said: the reply stays whole, as check_reply keeps it
        for index, sentence in self._held:
            if index in foreign:
                self.foreign.append(sentence.text)
                self._gap = sentence.gap if self._gap is None else self._gap
            elif index in echo or (index in back and not asks_or_advises(sentence.text)):
                self.dropped.append(sentence.text)
                self._gap = sentence.gap if self._gap is None else self._gap
            else:
                self._show(index, sentence)
        self._held = []

    def _said_before(self, sentence: str) -> bool:
        return bool(self._before) and sentence_key(sentence) in self._before

    def _restates(self, sentence: str) -> bool:
        return self.settings.drop_said_back and bool(self.told) and restates(sentence, self.told)

    def _greeting(self, sentence: str) -> bool:
        return self._greets and is_greeting(sentence)

    def _show(self, index: int, sentence: _Sentence) -> None:
        plain = sentence.text.replace("\u2019", "'")
        new = (in_second_person(sentence.text, self.users, told_answer=index in self._told_at)
               if self.settings.second_person else plain)
        text = new if new != plain else sentence.text
        gap = sentence.gap if self._gap is None else max(self._gap, sentence.gap, key=lambda g: g.count("\n"))
        self._gap = None
        self.shown += text if not self.shown else gap + text

    def _show_rest(self, rest: str) -> None:
        """Text the splitter gives no sentences of, after the held ones are decided."""
        self._settle_answer()
        if self.shown == DECLINE and self.untold:
            return
        self._resolve(final=True)
        rest = rest.rstrip()
        self.shown += rest.lstrip() if not self.shown else rest
