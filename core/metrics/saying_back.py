"""Replies that say back instead of conversing (issue 52): restatement and recital.

- restatement: a reply to a statement (a message that asks nothing) that mostly re-says it. The
  issue's definition, on content words (core.metrics.reply_defects' stop words out, crude stems
  so that 'works' ~ 'work'): at least 70% of the reply's distinct content words come from the
  user's message and at most 3 are its own. Pronouns are function words on both sides, so "You
  said your name is Ingrid" after "I'm Ingrid" matches as "I" -> "you", "my" -> "your" would;
  verbs of reporting ("said", "told", "mentioned") are framing, not content, and are left out of
  the reply's words. A reply that shares fewer than 2 content words with the message ("Bergen!")
  says too little to say it back.
- bare: a reply to a statement that asks nothing and has at most two content words ("That's
  great!"): an acknowledgement that adds nothing (the issue asks for a remark, a tip or a question
  back). Not part of the bar; counted beside it, as a check that cuts a reply down can leave one.
- recital: a reply that says again an earlier reply of the same dialogue (not only the one just
  before, as reply_defects' `repeat`): memory recited whatever the user said. The same text, or
  >= 80% of the reply's distinct content words found in one earlier reply with at least 4 of them.
  Set on the long dev runs (results/replies/check-long-large, the 1.5B model, 420 replies): every
  reply at >= 0.8 with 4+ shared words is a reply said again ("You're Daniel, 42 years old, living
  in a small flat in Glasgow." to two turns in a row) or a told fact said again in full; below
  0.8 come follow-ups on one topic (a melatonin answer after a jet-lag one shares 25 words, 74%),
  and short answers share their 2-3 fact words with any earlier mention ("You live in Glasgow.").
  Recital on a question turn may be the right answer said twice; the issue's bar counts it on
  the turns that ask nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.metrics.reply_defects import SPEECH_VERBS, STOPWORDS, normal_text, stem
from core.text import words

RESTATE_SHARE = 0.7  # the bar: >= 70% of the reply's content words from the user's message
RESTATE_OWN = 3  # ... and <= 3 content words of its own
RESTATE_MIN_SHARED = 2  # fewer shared words is an acknowledgement ("Ingrid!"), not a restatement


def content_stems(text: str, drop: frozenset[str] = frozenset()) -> frozenset[str]:
    """Stems of the content words of `text` (stop words and `drop` left out)."""
    tokens = words(text.replace("\u2019", "'").replace("_", " "))
    return frozenset(stem(t) for t in tokens if t not in STOPWORDS and t not in drop)


@dataclass(frozen=True)
class Overlap:
    """How much of the reply's content comes from the message."""

    shared: int  # the reply's distinct content words found in the message
    own: int  # the reply's distinct content words not in it

    @property
    def share(self) -> float:
        total = self.shared + self.own
        return self.shared / total if total else 0.0


def overlap(reply: str, message: str) -> Overlap:
    mine = content_stems(reply, SPEECH_VERBS)
    theirs = content_stems(message)
    return Overlap(len(mine & theirs), len(mine - theirs))


def restates(reply: str, message: str) -> bool:
    """The reply mostly re-says `message` (whether `message` is a statement is the caller's test)."""
    o = overlap(reply, message)
    return o.shared >= RESTATE_MIN_SHARED and o.share >= RESTATE_SHARE and o.own <= RESTATE_OWN


BARE_WORDS = 2  # a reply with no question and at most this many content words says nothing of its own
_POINTERS = frozenset({"that's", "it's", "this's", "there's", "here's", "what's"})  # "That's great!": one word, great


def bare(reply: str) -> bool:
    """The reply is a bare acknowledgement ("That's great!", "That's a good point.", "I see."): it
    asks nothing and has at most two distinct content words, so to a statement it adds no remark,
    tip or question of its own (issue 52's goal for a statement turn)."""
    return "?" not in reply and len(content_stems(reply, SPEECH_VERBS | _POINTERS)) <= BARE_WORDS


RECITE_SHARE = 0.8  # >= 80% of the reply's content words were in one earlier reply ...
RECITE_MIN_SHARED = 4  # ... and at least 4 of them: a short answer shares its 2-3 fact words with any mention


def recites(reply: str, earlier_replies: Sequence[str]) -> bool:
    """The reply says again one of the assistant's earlier replies of the dialogue: the same text
    (case and spacing ignored), or >= 80% of its distinct content words, and at least 4, found in
    one earlier reply."""
    said = normal_text(reply)
    if not said:
        return False
    mine = content_stems(reply, SPEECH_VERBS)
    for earlier in earlier_replies:
        if normal_text(earlier) == said:
            return True
        shared = len(mine & content_stems(earlier, SPEECH_VERBS))
        if shared >= RECITE_MIN_SHARED and shared / len(mine) >= RECITE_SHARE:
            return True
    return False
