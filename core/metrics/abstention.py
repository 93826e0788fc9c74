"""Abstention (issue 52): asked for a fact the user never gave (a relative's name, a birthplace, a
pet, a favourite film), does the reply say it was not told, or does it invent a value?

A chat script marks such a question `"never_told": true` (core.chat). The reply declines when it
says so in one of the ways people and models say it: "you haven't told me", "you didn't mention",
"you never said", "I don't know", "I'm not sure", "I don't have that information", "I don't have
your flatmate's name", "I don't remember", "(it) wasn't mentioned", "no information". Any other reply is counted as an answer
given, that is a value invented: the question's fact is in no turn. A reply that declines and
then guesses ("I'm not sure, maybe Anna") counts as declined; none was seen in the earlier runs.

The same test on the questions about told facts counts the right answers withheld (`declined_told`):
a method that declines everything must not pass for careful.
"""

from __future__ import annotations

import re

_NEG = r"(?:haven't|have not|hasn't|has not|didn't|did not|never|don't|do not|can't|cannot|can not|couldn't|could not)"
DECLINE_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    # the user did not say it: "you haven't told me", "you didn't mention", "you never shared"
    rf"\byou {_NEG} (?:\w+ )?(?:told|tell|mention(?:ed)?|said|say|share(?:d)?|give(?:n)?|gave|provide(?:d)?|shared)\b",
    rf"\b(?:not|never|wasn't|was not|hasn't been|haven't been|isn't) (?:been )?(?:mentioned|told|said|shared|given|provided)\b",
    # the assistant does not know or remember it
    rf"\bI {_NEG} (?:\w+ )?(?:know|remember|recall|have (?:that|this|any|the|enough|your)?\s*(?:information|info|details?|record))\b",
    # ... or does not have the thing asked for: "I don't have your flatmate's name", "... your phone number"
    rf"\bI {_NEG} have (?:that|this|any|the|your|his|her|their|its)\b[^.!?]{{0,40}}?\b(?:name|number|address|birthday|date)s?\b",
    r"\bI(?:'m| am) (?:not sure|not aware|unsure|afraid I (?:don't|do not))\b",
    r"\bno (?:information|record|mention|details?)\b",
    r"\bI (?:have no|lack) (?:information|record|idea|way of knowing)\b",
))


def declines(reply: str) -> bool:
    """The reply says the fact was not told or is not known (case-insensitive; curly apostrophes
    read as straight ones)."""
    text = reply.replace("\u2019", "'")
    return any(p.search(text) for p in DECLINE_PATTERNS)
