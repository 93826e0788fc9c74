"""Unsupported attribution (issue 52): a sentence about the user ("you / your ...") that nothing
the user said supports ("You are trying to make ..." to a paragraph about something else; "You
are Rosa." to the grandson of Rosa).

Cheap and lexical, on the sentences of the reply that make a claim about the user: a
second-person subject ("you", "you're", "you've", "your") opening its clause (nothing or a
conjunction before it: not "help you", "the noise you hear", "regulate your clock"), in a sentence
that is not a question or a condition (an "if", "when" or "unless" in it), not followed by a modal or a hedge
("you can", "you might", "you should", "you seem": advice and impressions). Such a claim is
unsupported when

- identity: it makes the user someone else: "you are Rosa" / "you, Kofi, ..." where the name is
  one the user wrote and not the user's own ("I'm Lena", "my name is Hana"), or "you are my /
  your X" ("You are your dentist."); or
- a name or number in it that the user never wrote ("Your daughter's name is Emma." after "What's
  my daughter's name?"); or
- words: at least `MIN_NEW` of its content words (stems, reporting verbs left out) and at least
  `NEW_SHARE` of them are in none of the user's messages so far ("You run a boutique." after "I
  run a small second-hand bookshop": 'boutique' is new, 1 of 2).

What it cannot see: a claim built from the user's own words put together wrongly ("You and your
son Kofi are both seven years old") and a claim in a modal ("You might be allergic to pollen").
Precision and recall on 180 hand-labelled replies (benchmarks/attribution_labels.jsonl) are in
docs/replies.md.
"""

from __future__ import annotations

import re
from typing import Sequence

from core.metrics.reply_defects import PRONOUNS, SPEECH_VERBS, STOPWORDS, stem
from core.text import split_sentences

MIN_NEW = 1  # content words of the claim in none of the user's messages ...
NEW_SHARE = 0.5  # ... and at least this share of the claim's content words
CLAIM_WORDS = 12  # a claim is read up to the next pronoun, the sentence's end, or this many words

SUBJECTS = frozenset({"you", "you're", "you've", "your"})
# after the subject: advice, the future, a condition or an impression, not a fact about the user
HEDGES = frozenset("""
can could should might may must will would shall need needs ought seem seems sound sounds probably likely
""".split())
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_OWN_NAME = re.compile(r"\b(?i:I'm|I am|my name is|my name's|call me|this is)\s+([A-Z][\w\-]+)")
_SEGMENT = re.compile(r"[,;()\u2014]|\s-\s")  # a claim ends at a comma: what follows is another clause
# what may stand before a subject "you"/"your" in its clause: nothing ("Tomás, you ..." is split at the comma) or a conjunction
CLAUSE_OPENERS = frozenset({"", "and", "but", "so", "also", "now", "because", "since", "then", "yes", "oh", "well"})
CONDITIONS = frozenset({"if", "when", "whenever", "unless", "once", "while", "until", "before", "after"})
# said of an age: "you are 42 years old" after "I'm 42"
AGE_WORDS = frozenset({"year", "old", "age", "aged"})
NEGATIONS = frozenset({"haven't", "hasn't", "hadn't", "never", "not", "have"})  # "you haven't told me": a report
# words that make a "you're ..." a formula or a verdict on what the user said, not a fact about them
FORMULAE = frozenset({"welcome", "right", "correct", "absolutely", "lucky", "sure"})
_REPORTING = frozenset(stem(w) for w in SPEECH_VERBS | {"talking", "asking", "telling", "saying", "sharing"})


def _key(token: str) -> str:
    """The stem of a token, the possessive dropped ("daughter's" ~ "daughters" ~ "daughter")."""
    low = token.lower()
    return stem(low[:-2] if low.endswith("'s") else low)


def _stems(tokens: Sequence[str]) -> set[str]:
    return {_key(t) for t in tokens if t.lower() not in STOPWORDS} - _REPORTING - AGE_WORDS


def user_stems(user_messages: Sequence[str]) -> frozenset[str]:
    return frozenset(_key(t) for m in user_messages for t in _TOKEN.findall(m.replace("\u2019", "'"))
                     if t.lower() not in STOPWORDS)


def own_names(user_messages: Sequence[str]) -> frozenset[str]:
    """The names the user gave as their own ("I'm Lena", "my name is Hana"), lower case."""
    return frozenset(m.group(1).lower() for text in user_messages for m in _OWN_NAME.finditer(text.replace("\u2019", "'")))


def other_names(user_messages: Sequence[str]) -> frozenset[str]:
    """Capitalised words the user wrote inside a sentence (names of people, places), lower case."""
    found = set()
    for text in user_messages:
        for sentence in split_sentences(text):
            for k, tok in enumerate(_TOKEN.findall(sentence)):
                if k and tok[0].isupper() and tok != "I" and tok.lower() not in STOPWORDS:
                    found.add(tok.lower())
    return frozenset(found)


def claims(reply: str) -> list[list[str]]:
    """The reply's claims about the user: for each, its tokens from the subject to the end of its
    clause (a comma ends it, except after a bare "You," that a name follows: "You, Kofi, are ...")."""
    out = []
    for sentence in split_sentences(reply.replace("\u2019", "'")):
        if sentence.rstrip().endswith("?"):
            continue
        segments = [_TOKEN.findall(part) for part in _SEGMENT.split(sentence)]
        segments = [seg for seg in segments if seg]
        if any(seg[0].lower() in CONDITIONS for seg in segments) or any(
                t.lower() in ("if", "when", "whenever", "unless") for seg in segments for t in seg):
            continue  # "When you fly east, ...", "You use lists when ...": the sentence is about anyone
        for n, tokens in enumerate(segments):
            for i, tok in enumerate(tokens):
                low = tok.lower()
                if low not in SUBJECTS:
                    continue
                before = tokens[i - 1].lower() if i else ""
                if before not in CLAUSE_OPENERS or (low == "your" and before == "and"):  # "your budget and your goals"
                    continue  # an object or a relative clause: "regulate your body's clock", "the noise you hear"
                rest = tokens[i + 1:] or [t for seg in segments[n + 1: n + 3] for t in seg]  # "You, Kofi, are"
                body = []
                for nxt in rest[:CLAIM_WORDS]:
                    if nxt.lower() in PRONOUNS and nxt.lower() not in ("my", "your"):
                        break
                    body.append(nxt)
                if body and body[0].lower() in HEDGES:
                    continue
                content = [w.lower() for w in body if w.lower() not in STOPWORDS | NEGATIONS]
                if content and (stem(content[0]) in _REPORTING or set(content) <= FORMULAE):
                    continue  # "you're asking about ...", "you mentioned ...": the message reported
                out.append([tok, *body])
    return out


def is_identity_slip(claim: Sequence[str], own: frozenset[str], others: frozenset[str]) -> bool:
    """'you are Rosa' / 'you, Kofi, are' with a name the user gave someone else; 'you are my/your X'."""
    lead = claim[0].lower()
    rest = list(claim[1:])
    if lead == "you" and rest and rest[0].lower() == "are":
        rest = rest[1:]
    elif lead not in ("you", "you're"):
        return False
    if not rest:
        return False
    head = rest[0]
    if head.lower() in ("my", "your"):
        return True
    return head[0].isupper() and head.lower() in others and head.lower() not in own


def unsupported_claims(reply: str, user_messages: Sequence[str]) -> tuple[str, ...]:
    """The reply's claims about the user that nothing in `user_messages` (this message and the
    user's earlier ones) supports, each as its words from the subject on."""
    said = user_stems(user_messages)
    own, others = own_names(user_messages), other_names(user_messages)
    hits = []
    for claim in claims(reply):
        content = _stems(claim[1:])
        new = content - said
        new_names = {_key(t) for t in claim[1:] if t[0].isupper() or t.isdigit()} & new
        if (is_identity_slip(claim, own, others) or new_names
                or (len(new) >= MIN_NEW and len(new) >= NEW_SHARE * len(content))):
            hits.append(" ".join(claim))
    return tuple(hits)
