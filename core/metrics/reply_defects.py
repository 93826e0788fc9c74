"""What a chat reply gets wrong besides the fact: the checks of `bench replies` (issue 39).

Pure functions over text. A reply is scored with the message it answers and the user's earlier
messages of the same dialogue (`ReplyCase`):

- correct: one of the expected answers appears in the reply (case-insensitive), as `chat --script`;
- voice: the reply states one of the user's own first-person facts in the first person ("I live in
  Porto" after the user's "I live in Porto"; "my sister Ana" after "my sister Ana ..."). Found by
  comparing the content words of the reply's first-person clauses with those of the user's, not
  by a list of phrases: two shared content words, or one shared name or number;
- attribution: a fact the user gave about another person ("my sister Ana is a nurse") said of
  "you" ("You are Ana, a nurse."): a second-person clause that shares a content word with the
  user's clause about that person, does not name the person's relation ("your sister"), and the
  word is not one of the user's own first-person facts;
- leak: memory or prompt internals in the reply: camelCase or snake_case relation names
  (`livesIn`) the user never wrote, URIs and prefixed names (`ex:livesIn`), `a | b | c` triple
  lines, `---Role---` headings, or six words in a row from a prompt template;
- meta: talk about the reply or the model instead of to the user ("This response ...", "as an AI",
  "markdown", "the user");
- refusal: an apology or "I don't know" in answer to a message that asks nothing (no "?");
- echo: the longest stretch of the user's message repeated verbatim (case and spacing ignored);
  80 characters or more is an echo;
- repeat: the reply says again what the assistant's previous reply said (the same text, or 80+
  characters of it in a row): a small model stuck on one answer ("You're Tomás." to every turn);
- length: sentences and word tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from statistics import median
from typing import Iterable, Sequence

from core.text import singular, split_sentences, words

ECHO_CHARS = 80  # the bar: 80+ characters of the user's message repeated
TEMPLATE_SHINGLE = 6  # words in a row shared with a prompt template that count as a leak

STOPWORDS = frozenset("""
a an the and or but if then so than that this these those there here what which who whom whose when where why how
is am are was were be been being do does did done have has had having will would shall should can could may might
must to of in on at by for with from about as into onto over under up down out off again very just also too not no
nor only own same such both each few more most other some any all i me my mine myself we us our ours you your yours
he him his she her hers they them their it its i'm i've i'd i'll you're you've you'd you'll we're we've he's she's
it's they're don't doesn't didn't isn't aren't wasn't weren't can't cannot won't wouldn't really now still well
yes oh ok okay sure like get got go going let let's one
""".split())

FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "mine", "myself", "we", "we're", "we've", "we'll",
                          "our", "ours"})
SECOND_PERSON = frozenset({"you", "you're", "you've", "you'd", "you'll", "your", "yours", "yourself"})
PRONOUNS = FIRST_PERSON | SECOND_PERSON | frozenset({"he", "she", "they", "it", "me", "us", "him", "her", "them",
                                                     "he's", "she's", "they're", "his", "their", "it's"})
# Nouns for people a user speaks of with "my": the fact in "my sister Ana works as a nurse" is Ana's.
PERSON_NOUNS = frozenset("""
mother father mum mom dad parent brother sister sibling son daughter child kid baby wife husband partner spouse
boyfriend girlfriend fiance fiancee friend neighbour neighbor colleague coworker boss manager grandmother
grandfather grandma grandpa granny grandson granddaughter aunt uncle cousin niece nephew roommate flatmate
housemate teacher doctor student classmate twin stepmother stepfather stepson stepdaughter
""".split())
SPEECH_VERBS = frozenset({"said", "say", "says", "told", "tell", "mentioned", "mention", "asked", "ask", "talked",
                          "wrote", "shared", "noted"})
_CLAUSE_END = re.compile(r"[.!?;:\n]")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

META_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\bth(?:is|e above|e following) (?:response|answer|reply)\b",
    r"\bas an ai\b",
    r"\bas an? (?:large )?language model\b",
    r"\bI(?:'m| am) (?:just )?(?:an? )?(?:ai|artificial intelligence|language model|chatbot|virtual assistant)\b",
    r"\bmarkdown\b",
    r"\bthe (?:input|provided|given) (?:data|context|information|text|knowledge)\b",
    r"\bthe user(?:'s)?\b",
))
REFUSAL_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\bI(?:'m| am) sorry\b",
    r"\bI (?:don't|do not) (?:know|have (?:any|enough) information)\b",
    r"\bI (?:can't|cannot|can not|am unable to|'m unable to|am not able to)\b",
    r"\bno information (?:about|on)\b",
))
_CAMEL = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b")
_SNAKE = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
_URI = re.compile(r"(?:\b(?:https?|urn|file)://\S+|<[a-z]+:[^>\s]+>|\b[a-z]{2,8}:[A-Za-z_][A-Za-z0-9_]*\b)")
_TRIPLE = re.compile(r"[^|\n]+\|[^|\n]+\|[^|\n]+")
_HEADING = re.compile(r"-{3,}\s*[A-Za-z][\w ]*\s*-{3,}")


@dataclass(frozen=True)
class ReplyCase:
    """One reply with what it is judged against."""

    reply: str
    user: str  # the message it answers
    earlier_user: tuple[str, ...] = ()  # the user's earlier messages of the same dialogue
    expect: tuple[str, ...] = ()  # any of these in the reply makes it correct; () = not a question
    previous_reply: str = ""  # the assistant's reply before this one in the dialogue ("" for the first)


@dataclass(frozen=True)
class ReplyScore:
    correct: bool | None  # None: no expected answer
    voice: tuple[str, ...] = ()  # the reply's clauses that take the user's voice
    attribution: tuple[str, ...] = ()  # second-person clauses carrying a third person's fact
    leak: tuple[str, ...] = ()  # what leaked
    meta: tuple[str, ...] = ()  # the meta-commentary matched
    refusal: bool = False  # a refusal to a message that asks nothing
    echo_chars: int = 0  # longest stretch of the user's message repeated verbatim
    repeat: bool = False  # the previous reply said again
    sentences: int = 0
    tokens: int = 0

    @property
    def echo(self) -> bool:
        return self.echo_chars >= ECHO_CHARS

    @property
    def defective(self) -> bool:
        """A defect of the issue's bar: a leak, meta-commentary, the user's voice, or an echo."""
        return bool(self.voice or self.leak or self.meta or self.echo)


@dataclass(frozen=True)
class Clause:
    text: str  # the clause as written, from its pronoun
    lead: str  # the pronoun it starts with, lower case
    keys: frozenset[str]  # content-word stems
    head: str = ""  # the stem of its first content word
    names: frozenset[str] = field(default_factory=frozenset)  # stems of capitalised words and numbers in it


def stem(word: str) -> str:
    """A crude key that makes 'lives', 'lived', 'living' and 'live' alike."""
    w = singular(word.lower())
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def clauses(text: str, leads: frozenset[str], max_words: int = 12) -> list[Clause]:
    """Clauses of `text` that start with one of `leads`: the lead and the words after it up to the
    end of the sentence, the next pronoun, or `max_words` words."""
    out = []
    for segment in _CLAUSE_END.split(text.replace("\u2019", "'")):
        tokens = list(_TOKEN.finditer(segment))
        for i, tok in enumerate(tokens):
            lead = tok.group(0).lower()
            if lead not in leads:
                continue
            body = []
            for nxt in tokens[i + 1: i + 1 + max_words]:
                if nxt.group(0).lower() in PRONOUNS:
                    break
                body.append(nxt)
            content = [t.group(0) for t in body if t.group(0).lower() not in STOPWORDS]
            names = frozenset(stem(w) for w in content if w[0].isupper() or w.isdigit())
            end = body[-1].end() if body else tok.end()
            keys = frozenset(stem(w) for w in content)
            out.append(Clause(segment[tok.start(): end], lead, keys, stem(content[0]) if content else "", names))
    return out


def _user_names(messages: Iterable[str]) -> frozenset[str]:
    """Stems of words the user capitalises inside a sentence (names) and of numbers."""
    found = set()
    for message in messages:
        for sentence in _CLAUSE_END.split(message):
            for k, tok in enumerate(_TOKEN.findall(sentence)):
                if tok.isdigit() or (k > 0 and tok[0].isupper() and tok.lower() not in STOPWORDS and tok != "I"):
                    found.add(stem(tok))
    return frozenset(found)


def voice_clauses(reply: str, user_messages: Sequence[str]) -> tuple[str, ...]:
    """The reply's first-person clauses that restate one of the user's first-person clauses: the
    reply's clause starts (its first content word) with a word of the user's clause and shares two
    content words with it, or one name or number ("I'm Marta")."""
    theirs = [c for m in user_messages for c in clauses(m, FIRST_PERSON)]
    names = _user_names(user_messages)
    hits = []
    for mine in clauses(reply, FIRST_PERSON):
        for user in theirs:
            shared = mine.keys & user.keys
            if mine.head in shared and (len(shared) >= 2 or shared & names):
                hits.append(mine.text)
                break
    return tuple(hits)


def person_clauses(user_messages: Sequence[str]) -> list[tuple[str, Clause]]:
    """(relation noun, clause) for each of the user's clauses about another person: 'my sister
    Ana ...' (up to two words between 'my' and the noun: 'my best friend', 'my older brother')."""
    out = []
    for message in user_messages:
        for c in clauses(message, frozenset({"my", "our"}), max_words=20):
            first = [w.lower() for w in _TOKEN.findall(c.text)[1:4]]
            noun = next((singular(w) for w in first if singular(w) in PERSON_NOUNS), "")
            if noun:
                out.append((noun, c))
    return out


def attribution_clauses(reply: str, user_messages: Sequence[str]) -> tuple[str, ...]:
    """Second-person clauses of the reply that give the user a fact of a person the user spoke of."""
    people = person_clauses(user_messages)
    if not people:
        return ()
    own = frozenset(k for m in user_messages for c in clauses(m, frozenset({"i", "i'm", "i've", "i'd", "i'll"}))
                    for k in c.keys)
    hits = []
    for yours in clauses(reply, SECOND_PERSON):
        tokens = [w.lower() for w in _TOKEN.findall(yours.text)[1:]]
        content = [w for w in tokens if w not in STOPWORDS]
        if content and content[0] in SPEECH_VERBS:
            continue  # "you mentioned Ana" reports what the user said
        stems = {singular(w) for w in tokens}
        for noun, theirs in people:
            if noun in stems:
                continue  # "your sister Ana is a nurse": about the person, rightly
            if (yours.keys & theirs.keys) - own - {stem(noun)}:
                hits.append(yours.text)
                break
    return tuple(hits)


def template_shingles(templates: Iterable[str], n: int = TEMPLATE_SHINGLE) -> frozenset[tuple[str, ...]]:
    """Every run of `n` words of the prompt templates (placeholders dropped)."""
    out = set()
    for template in templates:
        w = words(re.sub(r"\{[a-z_]+\}", " ", template))
        out.update(tuple(w[i: i + n]) for i in range(len(w) - n + 1))
    return frozenset(out)


def leaks(reply: str, user_messages: Sequence[str], shingles: frozenset[tuple[str, ...]] = frozenset(),
          n: int = TEMPLATE_SHINGLE) -> tuple[str, ...]:
    """Relation names, URIs, triple lines, template headings and template text in the reply."""
    said = " ".join(user_messages)
    found = [m for m in _CAMEL.findall(reply) + _SNAKE.findall(reply) if m not in said]
    found += [m for m in _URI.findall(reply) if m not in said]
    found += [m.strip() for m in _TRIPLE.findall(reply)]
    found += _HEADING.findall(reply)
    if shingles:
        w = words(reply)
        found += [" ".join(w[i: i + n]) for i in range(len(w) - n + 1) if tuple(w[i: i + n]) in shingles][:1]
    return tuple(found)


def meta_phrases(reply: str) -> tuple[str, ...]:
    return tuple(m.group(0) for p in META_PATTERNS for m in p.finditer(reply))


def is_statement(message: str) -> bool:
    """A message that asks nothing: no question mark."""
    return "?" not in message


def refuses(reply: str) -> bool:
    return any(p.search(reply) for p in REFUSAL_PATTERNS)


def normal_text(text: str) -> str:
    """Lower case, runs of spaces as one: how echoes and repeats are compared."""
    return " ".join(text.lower().split())


def echo_chars(reply: str, message: str) -> int:
    """Characters in the longest stretch of `message` that `reply` repeats verbatim (case and
    runs of spaces ignored)."""
    a, b = normal_text(message), normal_text(reply)
    if not a or not b:
        return 0
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size


def repeats(reply: str, previous: str) -> bool:
    """The reply is the previous reply again: the same text (case and spacing ignored), or 80+
    characters of it in a row."""
    if not previous.strip() or not reply.strip():
        return False
    return normal_text(reply) == normal_text(previous) or echo_chars(reply, previous) >= ECHO_CHARS


def score_reply(case: ReplyCase, shingles: frozenset[tuple[str, ...]] = frozenset()) -> ReplyScore:
    users = (*case.earlier_user, case.user)
    reply = case.reply
    return ReplyScore(
        correct=any(e.lower() in reply.lower() for e in case.expect) if case.expect else None,
        voice=voice_clauses(reply, users),
        attribution=attribution_clauses(reply, users),
        leak=leaks(reply, users, shingles),
        meta=meta_phrases(reply),
        refusal=is_statement(case.user) and refuses(reply),
        echo_chars=echo_chars(reply, case.user),
        repeat=repeats(reply, case.previous_reply),
        sentences=len(split_sentences(reply)),
        tokens=len(words(reply)),
    )


DEFECTS = ("voice", "attribution", "leak", "meta", "refusal", "echo", "repeat")


def flagged(score: ReplyScore, defect: str) -> bool:
    value = getattr(score, defect)
    return bool(value)


def summarise_scores(scores: Sequence[ReplyScore]) -> dict:
    """Counts and rates over one method's replies: accuracy over the questions, each defect's
    count, the bar's `defective` count and rate, and the reply length."""
    n = len(scores)
    judged = [s.correct for s in scores if s.correct is not None]
    out: dict = {"replies": n, "questions": len(judged), "correct": sum(judged),
                 "accuracy": round(sum(judged) / len(judged), 3) if judged else None}
    for defect in DEFECTS:
        out[defect] = sum(flagged(s, defect) for s in scores)
    out["defective"] = sum(s.defective for s in scores)
    out["defective_rate"] = round(out["defective"] / n, 3) if n else None
    out["median_sentences"] = median(s.sentences for s in scores) if n else None
    out["median_tokens"] = median(s.tokens for s in scores) if n else None
    out["over_3_sentences"] = sum(s.sentences > 3 for s in scores)
    return out
