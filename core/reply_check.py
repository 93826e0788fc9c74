"""The reply check: what every chat method's reply goes through before it is shown and stored
(issue 39). Two repairs, each of a defect the reply benchmark measures, none of a method's own:

- **echoes out**: a sentence that repeats the user's message (part of a stretch of 80+ characters
  copied from it, as `core.metrics.reply_defects.echo_chars` counts) is dropped when the reply
  says something else too. A reply that is nothing but the echo stays as it is: an empty reply
  would say less, and the echo stays visible to the measures.
- **nothing said back**: a sentence that only says the user's message back, in either person
  ("You're Nadia and you work as a nurse." to "I'm Nadia, I work as a nurse."), as `bench replies`
  finds a restatement (core.metrics.saying_back.restates) but sentence by sentence, is dropped the
  same way (issue 52): turned into the second person it would still be said back.
- **nothing said again** (issue 52): to a message that asks nothing, a sentence the assistant
  already said in an earlier reply of the dialogue ("That's great to hear!" a third time) is
  dropped the same way.
- **nothing told, nothing answered** (issue 52): asked for a fact of the user's world
  (core.told_answers: "What's my wife's name?"), a sentence that answers with what the user never
  told ("Your wife's name is Efua." when Efua is a granddaughter) is dropped when another sentence
  answers from what was told; when none does, the reply is "You haven't told me that." The
  answer is judged on the reply's first `answer_window` sentences (two): a stream need not hold
  the reply to its end, and an untold value after them is dropped.
- **the user's language** (issue 52): a sentence of `language_words`+ words in another language
  than the user's messages (core.language), and every sentence after it until one of that many
  words is in the user's language again, is dropped the same way; a reply with nothing else is
  written once more, with a note naming the user's language (`second_try_note`).
- **the user's facts said to the user**: a sentence that restates one of the user's own
  first-person facts in the first person ("What is my job?" -> "I work as a pharmacist in
  Coimbra.") is said in the second person ("You work as a pharmacist in Coimbra."). The restated
  clauses are found as the benchmark finds them (`voice_clauses`: content words shared with a
  first-person clause of the user's); a sentence that already says "you" is changed only in
  those clauses, since its "you" is the user already; quoted words ('You said: "I live in
  Porto."') are the user's own and stay. An answer to a fact question that the never-told test
  finds told and that opens in the first person ("Which city do I live in?" -> "I live in Lyon.",
  after "I moved from Paris to Lyon") is said in the second person whole, however it words the fact,
  unless it gives the assistant's own view ("I think ...") or offer ("I can ...").

A question back or a piece of advice that borrows the message's words ("How do you plan to study
grey seals?", "Try the methods section first.") asks or offers something: it is no saying back and
stays (`asks_or_advises`). A reply that is nothing but sentences said back, echoed or said again,
or a bare greeting to a message that told something ("Hi!" to "Hi, I'm Hana and I teach
chemistry."), stays whole here (`CheckedReply.nothing_new`); the chat round then has the model write it once more
(core.conversation, with `needs_second_try`). Small models write these defects whatever their
prompt says (docs/replies.md); a repaired reply is what the user reads and what the method's
memory takes in, so a first-person restatement is not copied again from memory. The method's own text stays on the reply (`Reply.draft`), and the
benchmark scores both. Pure functions over text; no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from core.language import MIN_WORDS, language_name, other_language, users_language
from core.llm.prompts import render_prompt
from core.metrics.reply_defects import ECHO_CHARS, FIRST_PERSON, SECOND_PERSON, normal_text, voice_clauses
from core.metrics.saying_back import restates
from core.person import second_person
from core.told_answers import (DECLINE, TOLD, UNTOLD, answer_kind, asks_for_name, fact_question, gives_no_name,
                                said_words)
from core.text import split_sentences, words

_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s*$")
_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')
# "I think ...", "I guess ...": the assistant's own view, not the user's fact in the first person
_VIEWS = frozenset({"think", "believe", "guess", "suppose", "assume", "reckon", "hope", "feel", "remember", "recall",
                    "know", "understand", "preference", "prefer", "opinion", "sorry", "afraid", "sure"})
_MODALS = frozenset({"would", "could", "can", "will", "must", "might", "should", "may", "shall"})
_SPEECH_COLON = re.compile(r"\b(?:said|say|says|told me|tell me|asked|wrote|mentioned)\b[^:.!?]{0,30}:", re.IGNORECASE)
# a greeting and nothing else ("Hi!", "Hello there.", "Good morning!"): no name, nothing said
_GREETING = re.compile(r"^(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|day)|welcome(?: back)?)"
                       r"(?:,? (?:there|again|everyone|all))?$")
# advice opens with a verb of doing or a softener ("Try ...", "Maybe ...", "You could ..."): it says what
# to do next, not what was said, however many of the message's words it takes up
_ADVICE_OPENERS = frozenset({"try", "consider", "maybe", "perhaps", "remember", "start", "avoid", "don't", "let's",
                             "keep", "take", "give", "make", "ask", "think", "check", "use", "set"})
_ADVICE_MODALS = frozenset({"could", "might", "should"})  # not "can": "You can swim." says back "I can swim."


@dataclass(frozen=True)
class ReplyCheckSettings:
    drop_echoes: bool = True
    echo_chars: int = ECHO_CHARS  # a stretch of the user's message this long, repeated, is an echo
    echo_share: float = 0.5  # a sentence is part of the echo when this share of it lies in the stretch
    second_person: bool = True
    drop_said_back: bool = True  # a sentence that restates the message (core.metrics.saying_back.restates)
    decline_untold: bool = True  # an answer about the user that the user never told (core.told_answers)
    drop_said_before: bool = True  # to a message that asks nothing, a sentence of an earlier reply said again
    second_try: bool = True  # a reply that only says back is written once more (core.conversation)
    # a fact question is answered in the reply's first sentences or not at all: the decline is decided
    # on these many (0 = the whole reply), so a stream shows it without waiting for the reply's end
    answer_window: int = 2
    same_language: bool = True  # a sentence not in the user's language is dropped (core.language)
    language_words: int = MIN_WORDS  # a sentence this long or longer is told apart; a shorter one follows the last


@dataclass(frozen=True)
class CheckedReply:
    text: str
    dropped: tuple[str, ...] = ()  # sentences taken out as echoes of the user's message or said back
    rewritten: tuple[tuple[str, str], ...] = ()  # (sentence as written, as said to the user)
    untold: tuple[str, ...] = ()  # sentences that answered with what the user never told (out, or the reply declines)
    # every sentence echoed, said back, said again or a bare greeting (to a message that told something):
    # kept whole, and the chat round has it written once more
    nothing_new: bool = False
    foreign: tuple[str, ...] = ()  # sentences taken out as not in the user's language
    # the user's language (a code of core.language.LANGUAGES) when the reply had sentences in
    # another: taken out, or the reply's all (then nothing_new, and the note names it)
    language: str = ""

    @property
    def declined(self) -> bool:
        """Whether the reply became the decline (nothing it answered was told)."""
        return bool(self.untold) and self.text == DECLINE

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.rewritten or self.untold or self.foreign)

    def summary(self) -> str:
        """One line for a trace or a page: what the check changed."""
        parts = []
        if self.dropped:
            parts.append(f"dropped {len(self.dropped)} sentence(s) repeating or saying back the user's message")
        if self.foreign:
            parts.append(f"dropped {len(self.foreign)} sentence(s) not in {language_name(self.language)}, the user's language")
        elif self.language:
            parts.append(f"not in {language_name(self.language)}, the user's language")
        if self.untold:
            parts.append(f"took out {len(self.untold)} sentence(s) answering with what the user never told"
                         + ("; said so instead" if self.declined else ""))
        if self.rewritten:
            parts.append(f"said {len(self.rewritten)} sentence(s) of the user's facts in the second person")
        return "; ".join(parts) or "no change"


def _sentence_spans(text: str) -> list[tuple[int, int]] | None:
    """(start, end) of each sentence in `text`; None when the splitter's sentences cannot be found
    in it again (it changed their characters)."""
    spans, at = [], 0
    for sentence in split_sentences(text):
        start = text.find(sentence, at)
        if start < 0:
            return None
        spans.append((start, start + len(sentence)))
        at = start + len(sentence)
    return spans


def echo_sentences(sentences: Sequence[str], message: str, min_chars: int = ECHO_CHARS,
                   share: float = 0.5) -> set[int]:
    """Indices of the sentences that lie (at least `share` of each) inside a stretch of `message` of
    `min_chars`+ characters that the reply repeats verbatim (case and spacing ignored)."""
    norms = [normal_text(s) for s in sentences]
    joined, bounds, at = " ".join(norms), [], 0
    for n in norms:
        bounds.append((at, at + len(n)))
        at += len(n) + 1
    message = normal_text(message)
    if not message or not joined:
        return set()
    found = set()
    for block in SequenceMatcher(None, message, joined, autojunk=False).get_matching_blocks():
        if block.size < min_chars:
            continue
        for i, (a, b) in enumerate(bounds):
            overlap = min(b, block.b + block.size) - max(a, block.b)
            if b > a and overlap >= share * (b - a):
                found.add(i)
    return found


def told_part(message: str) -> str:
    """What a message tells: its sentences that ask nothing. An answer borrows a question's words
    ("Is it cruel to crate a puppy?" -> "It is not cruel to crate a puppy."); that is no saying back."""
    return " ".join(s for s in split_sentences(message) if not s.rstrip().endswith("?"))


def asks_nothing(message: str) -> bool:
    """Whether the message is a statement, a story or an opinion: no question mark in it."""
    return "?" not in message


def sentence_key(sentence: str) -> tuple[str, ...]:
    """A sentence's words, how a sentence said again is recognised (case and punctuation ignored)."""
    return tuple(words(sentence.replace("\u2019", "'").lower()))


def earlier_sentences(earlier_replies: Sequence[str]) -> frozenset[tuple[str, ...]]:
    """The sentences of the assistant's earlier replies (of two words or more: "Yes." is no recital)."""
    keys = (sentence_key(s) for reply in earlier_replies for s in split_sentences(reply))
    return frozenset(k for k in keys if len(k) >= 2)


def is_greeting(text: str) -> bool:
    """Whether `text` is a greeting and nothing else ("Hi!", "Hello there.", not "Hi Marta!")."""
    return bool(_GREETING.match(" ".join(words(text.replace("\u2019", "'").lower()))))


def asks_or_advises(sentence: str) -> bool:
    """Whether `sentence` asks the user something (a question back) or says what to do (advice):
    it may take up the message's words without saying it back."""
    if sentence.rstrip().rstrip("\"')\u201d").endswith("?"):
        return True
    tokens = words(sentence.replace("\u2019", "'").lower())
    return bool(tokens) and (tokens[0] in _ADVICE_OPENERS
                             or (len(tokens) > 1 and tokens[0] == "you" and tokens[1] in _ADVICE_MODALS))


def greets_only(message: str) -> bool:
    """Whether `message` is nothing but a greeting: then a greeting answers it."""
    return all(is_greeting(s) for s in split_sentences(message))


def greetings(sentences: Sequence[str], message: str) -> set[int]:
    """Indices of the bare greetings among `sentences`, when `message` told something: a greeting
    answers a greeting, and to anything else it says nothing."""
    if greets_only(message):
        return set()
    return {i for i, s in enumerate(sentences) if is_greeting(s)}


def says_nothing_else(sentences: Sequence[str], drop: set[int]) -> bool:
    """Whether the sentences outside `drop` hold no word (a lone "." is nothing): then nothing is
    dropped, and the reply stays whole."""
    return not any(words(s) for i, s in enumerate(sentences) if i not in drop)


def _says_you(text: str) -> bool:
    return any(w in SECOND_PERSON for w in words(text))


def quoted_spans(sentence: str) -> list[tuple[int, int]]:
    """Where `sentence` gives someone's own words: inside quotation marks, or after a speech verb and
    a colon ('You said: I live in Porto.'). Those words are rightly in their speaker's first person."""
    spans = [m.span() for m in _QUOTED.finditer(sentence)]
    m = _SPEECH_COLON.search(sentence)
    if m:
        spans.append((m.end(), len(sentence)))
    return spans


def answers_as_user(sentence: str) -> bool:
    """Whether `sentence`, an answer from what the user told to a question about the user ("What
    city do I live in?" -> "I live in Lyon."), speaks as the user: it opens with a first-person
    word, says no "you", quotes nobody, and gives no view or offer of the assistant's own ("I think
    ...", "I'd say ...", "I can ...")."""
    tokens = words(sentence.replace("\u2019", "'"))
    return (bool(tokens) and tokens[0] in FIRST_PERSON and tokens[0] != "i'd" and not _says_you(sentence)
            and not quoted_spans(sentence) and not any(t in _VIEWS for t in tokens)
            and not (len(tokens) > 1 and tokens[1] in _MODALS))


def gives_view(clause: str) -> bool:
    """Whether a first-person clause opens with the assistant's own view ("I'm sure Tomek is a great
    role model", "I really think ..."): its subject is the assistant, not the user said back."""
    tokens = words(clause.replace("\u2019", "'").lower())
    return (len(tokens) > 1 and tokens[0] in FIRST_PERSON
            and (tokens[1] in _VIEWS or (len(tokens) > 2 and tokens[1] in {"really", "do", "am", "'m"} and tokens[2] in _VIEWS)))


def in_second_person(sentence: str, user_messages: Sequence[str], told_answer: bool = False) -> str:
    """`sentence` with its restatements of the user's first-person facts in the second person;
    unchanged when it restates none. Quoted words stay as they were said. A `told_answer` (a fact
    question's answer from what the user told, core.told_answers) that speaks as the user is said
    in the second person whole, however it words the fact ("I live in Lyon." after "I moved from
    Paris to Lyon")."""
    sentence = sentence.replace("\u2019", "'")
    if told_answer and answers_as_user(sentence):
        return second_person(sentence)
    restated = [c for c in voice_clauses(sentence, user_messages) if not gives_view(c)]
    if not restated:
        return sentence
    quoted = quoted_spans(sentence)
    if not _says_you(sentence) and not quoted:
        return second_person(sentence)
    out = sentence
    for clause in restated:  # the sentence's "you" is the user already: change only the restated clauses
        at = out.find(clause)
        if at < 0 or any(a <= at < b for a, b in quoted_spans(out)):
            continue
        swapped = second_person(clause)
        if at > 0 and not _SENTENCE_END.search(out[:at]):
            swapped = swapped[:1].lower() + swapped[1:]
        out = out[:at] + swapped + out[at + len(clause):]
    return out


def answer_window(count: int, settings: ReplyCheckSettings) -> set[int]:
    """The indices of the first of `count` sentences that a fact question's answer is judged on: an
    answer comes first. A small model that does not have the fact may write on for 200 tokens before
    a sentence gives a value; judged on the whole reply, a stream had to hold all of it, and the
    person read nothing until the reply's end (docs/replies.md)."""
    return set(range(min(count, settings.answer_window) if settings.answer_window > 0 else count))


def check_reply(text: str, message: str, earlier_user: Sequence[str] = (),
                settings: ReplyCheckSettings = ReplyCheckSettings(), earlier_replies: Sequence[str] = ()) -> CheckedReply:
    """The reply to `message` (after the user's `earlier_user` messages and the assistant's
    `earlier_replies`), repaired."""
    spans = _sentence_spans(text)
    if not spans:
        return CheckedReply(text)
    sentences = [text[a:b] for a, b in spans]
    drop: set[int] = set()
    if settings.drop_echoes:
        drop = echo_sentences(sentences, message, settings.echo_chars, settings.echo_share)
    told = told_part(message)
    said_back: set[int] = set()  # questions and advice among them are kept unless nothing else is said
    if settings.drop_said_back and told:
        said_back = {i for i, s in enumerate(sentences) if restates(s, told)}
        drop |= {i for i in said_back if not asks_or_advises(sentences[i])}
    if settings.drop_said_before and earlier_replies and asks_nothing(message):
        before = earlier_sentences(earlier_replies)
        drop |= {i for i, s in enumerate(sentences) if sentence_key(s) in before}
    language = users_language((*earlier_user, message), settings.language_words) if settings.same_language else None
    foreign = other_language(sentences, language, settings.language_words)
    drop |= foreign
    untold: set[int] = set()
    told_at: set[int] = set()  # answers from what the user told: said to the user as "you"
    question = fact_question(message, earlier_user) if settings.decline_untold else ""
    if question:
        said = said_words(earlier_user)
        # a sentence in another language answers nothing: the answer is judged on the others
        kinds = [None if i in foreign else answer_kind(s, question, said) for i, s in enumerate(sentences)]
        untold = {i for i, kind in enumerate(kinds) if kind == UNTOLD}
        told_at = {i for i, kind in enumerate(kinds) if kind == TOLD}
        rest = [i for i in range(len(sentences)) if i not in foreign]
        first = {rest[j] for j in answer_window(len(rest), settings)}  # the sentences the answer is judged on
        if untold & first and TOLD not in (kinds[i] for i in first):  # nothing it answers was told: it says so
            return CheckedReply(DECLINE, untold=tuple(sentences[i] for i in sorted(untold & first)))
        if first and asks_for_name(question) and gives_no_name([sentences[i] for i in sorted(first)], question, said):
            return CheckedReply(DECLINE, untold=tuple(sentences[i] for i in sorted(first)))  # a name asked, none given
    drop -= untold
    nothing_new = False
    greeted = greetings(sentences, message) if settings.second_try else set()
    if says_nothing_else(sentences, drop | said_back | greeted | untold):
        nothing_new = bool(drop | said_back | greeted) and not untold
        drop = set()  # nothing else said (a lone "." is nothing): keep the reply whole
    drop_all = drop | untold
    users = (*earlier_user, message)
    pieces: list[str] = []
    rewritten: list[tuple[str, str]] = []
    kept_end, gap = 0, None  # end of the last kept sentence; the space before a dropped run
    for i, (a, b) in enumerate(spans):
        if i in drop_all:
            gap = text[kept_end:a] if gap is None else gap
            continue
        sentence, plain = sentences[i], sentences[i].replace("\u2019", "'")
        new = in_second_person(sentence, users, told_answer=i in told_at) if settings.second_person else plain
        if new != plain:
            rewritten.append((sentence, new))
        if gap is not None:  # after a dropped run: the wider of the spaces around it (a paragraph break stays)
            gap = max(gap, text[spans[i - 1][1]:a], key=lambda g: g.count("\n"))
        pieces += [text[kept_end:a] if gap is None else gap, new if new != plain else sentence]
        kept_end, gap = b, None
    pieces.append(text[spans[-1][1]:])  # what follows the last sentence, kept or not
    return CheckedReply("".join(pieces).strip(), tuple(sentences[i] for i in sorted(drop - foreign)), tuple(rewritten),
                        tuple(sentences[i] for i in sorted(untold)), nothing_new,
                        tuple(sentences[i] for i in sorted(drop & foreign)), language if foreign else "")


def needs_second_try(text: str, message: str, earlier_user: Sequence[str] = (),
                     settings: ReplyCheckSettings = ReplyCheckSettings(), earlier_replies: Sequence[str] = ()) -> bool:
    """Whether the reply says nothing but `message` back (echoed or restated), what the assistant
    said before, a bare greeting to a message that told something, or only sentences not in the
    user's language: the check keeps such a reply whole (dropping it would leave nothing), so it is
    written once more instead."""
    return second_try_note(text, message, earlier_user, settings, earlier_replies) is not None


def second_try_note(text: str, message: str, earlier_user: Sequence[str] = (),
                    settings: ReplyCheckSettings = ReplyCheckSettings(), earlier_replies: Sequence[str] = ()) -> str | None:
    """The system note after which the reply is written once more (`needs_second_try`), or None
    when it stands. A reply in another language is asked for in the user's (prompts/reply_language.txt),
    since the note against saying back says nothing of language: replayed on run 6's Spanish
    dialogue, the default model wrote Spanish in 32 of 36 first tries and in none of 36 second tries
    with this note (docs/replies.md)."""
    if not settings.second_try:
        return None
    checked = check_reply(text, message, earlier_user, settings, earlier_replies)
    if not checked.nothing_new:
        return None
    if checked.language:
        return render_prompt("reply_language", language=language_name(checked.language)).strip()
    return render_prompt("reply_again").strip()
