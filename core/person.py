"""The user's words said back to the user, in the second person (issue 56): "I'm Marta and my
sister is a nurse." -> "You're Marta and your sister is a nurse."

One conversion for every place that does it, so the three cannot drift apart again:

- the reply check (`core.reply_check`): a reply sentence that restates the user's facts in the
  first person is said to the user;
- the chat methods' memory lines (`core.methods.render.said_line`): the user's own sentences;
- D-SMART's recall (`core.methods.dsmart.recall`): the source sentences its answer prompt shows.

Pure functions over text; no model. A small model copies what its prompt shows, so a memory line
in the first person comes back as the assistant's own "I teach chemistry" (docs/replies.md).
"""

from __future__ import annotations

import re

# An opening greeting, left out when the user's words are said back: "Hi there, I'm Marta." is
# "You're Marta.", not "Hi there, you're Marta.". A whole word only: "Hiking is fun" keeps "Hiking".
GREETING = re.compile(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b(?: there\b)?[\s,!.]*", re.IGNORECASE)
# The words that speak to someone: in the user's words they mean the assistant
_YOU = re.compile(r"\b(?:you|your|yours|yourself|yourselves|you're|you've|you'll|you'd)\b", re.IGNORECASE)
# First person -> second person, longest forms first; the verbs that agree with "I" change with it
# ("I was" -> "you were", "am I" -> "are you"). "us" only in lower case: "the US" stays a country.
_SWAPS = (
    (r"\b(?:I|we)\s+(?:am|are)\b", "you are"), (r"\b(?:I|we)\s+(?:was|were)\b", "you were"),
    (r"\bam I\b", "are you"), (r"\bwas I\b", "were you"),
    (r"\bI'm\b", "you're"), (r"\bI've\b", "you've"), (r"\bI'll\b", "you'll"), (r"\bI'd\b", "you'd"),
    (r"\bI\b", "you"), (r"\bme\b", "you"), (r"\bmy\b", "your"), (r"\bmine\b", "yours"), (r"\bmyself\b", "yourself"),
    (r"\bwe're\b", "you're"), (r"\bwe've\b", "you've"), (r"\bwe'll\b", "you'll"), (r"\bwe'd\b", "you'd"),
    (r"\bwe\b", "you"), (r"(?-i:\bus\b)", "you"), (r"\bour\b", "your"), (r"\bours\b", "yours"), (r"\bourselves\b", "yourselves"),
)
_SWAP_RES = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _SWAPS)
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")


def second_person(text: str) -> str:
    """Every first-person word of `text` in the second person ("I am" -> "you are", "my" ->
    "your"), one way: a "you" already there stays. Sentence starts are capitalised again; a curly
    apostrophe is read as a straight one ("I’m" is "I'm", not "I" and "m")."""
    out = text.replace("\u2019", "'")
    for pattern, replacement in _SWAP_RES:
        out = pattern.sub(replacement, out)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), out)


def without_greeting(text: str) -> str:
    """`text` stripped, without an opening greeting ("Hi, I'm Marta." -> "I'm Marta."); a text that
    is nothing but a greeting stays whole ("Hello!")."""
    return GREETING.sub("", text).strip() or text.strip()


def says_you(text: str) -> bool:
    """Whether `text` speaks to someone as "you" (in the user's words: to the assistant)."""
    return _YOU.search(text) is not None


__all__ = ["GREETING", "says_you", "second_person", "without_greeting"]
