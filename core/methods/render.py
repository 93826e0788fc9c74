"""How a method's memory and reply reach the model and the user with the roles kept (issue 39).

A small model copies what its prompt shows. Shown "User: I live in Porto." it answers "I live in
Porto."; shown "You live in Porto." it answers in the assistant's voice. So memory reaches the
prompt as sentences that say whose fact it is (`memory_notes`): the user's own statements
rewritten in the second person where the rewrite is safe ("I live in Porto" -> "You live in
Porto.", "my sister Ana" -> "your sister Ana"), otherwise quoted with who said them ('You said:
"..."'), the assistant's own turns as 'I replied: "..."', a named speaker's as 'Ana said: "..."',
each with its day and its relative times resolved (core.timeref). The system prompt of every
chat method opens with the same statement of the roles (`chat_roles`), and a reply is generated
with stop strings that end meta-commentary (`REPLY_STOPS`) and tidied (`tidy_reply`): sentences
that repeat the user's message verbatim are dropped.

Every chat method that writes its answer with the LLM uses these helpers (base, rag, sgmem,
sgmem-h, mcts, kgaug), so a comparison between methods is not a comparison of renderings.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Iterable

from core.dialogue import Evidence
from core.llm.prompts import render_prompt
from core.text import split_sentences
from core.timeref import anchor_text, day_text, said_on

# Generation ends where a small model starts talking about its reply or writing the next turn.
REPLY_STOPS = ("\nThis response", "\nThe response", "\nThis answer", "\n\nNote:", "\n\n---", "\nUser:", "\nuser:",
               "<|im_start|>")
ECHO_CHARS = 80  # a reply that repeats this many characters of the user's message in a row echoes it
ECHO_SENTENCE_SHARE = 0.6  # in an echoing reply, a sentence that is this much one copied stretch is dropped
ECHO_SENTENCE_MIN = 25  # ... when the stretch is at least this long

_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|you're|you've|you'll|you'd)\b", re.IGNORECASE)
_GREETING = re.compile(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening))(?: there)?\s*[,!.]*\s*", re.IGNORECASE)
# First person -> second person, longest forms first; verbs that agree with "I" change with it.
_SWAPS = (
    (r"\bI am\b", "you are"), (r"\bI was\b", "you were"), (r"\bam I\b", "are you"), (r"\bwas I\b", "were you"),
    (r"\bI'm\b", "you're"), (r"\bI've\b", "you've"), (r"\bI'll\b", "you'll"), (r"\bI'd\b", "you'd"),
    (r"\bI\b", "you"), (r"\bme\b", "you"), (r"\bmy\b", "your"), (r"\bmine\b", "yours"), (r"\bmyself\b", "yourself"),
    (r"\bwe're\b", "you're"), (r"\bwe've\b", "you've"), (r"\bwe'll\b", "you'll"), (r"\bwe'd\b", "you'd"),
    (r"\bwe\b", "you"), (r"\bus\b", "you"), (r"\bour\b", "your"), (r"\bours\b", "yours"), (r"\bourselves\b", "yourselves"),
)
_SWAP_RES = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _SWAPS)
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?): (.*)$")


def second_person(text: str) -> str | None:
    """The user's words said back to the user: "Hi, I'm Marta and my sister is a nurse." ->
    "You're Marta and your sister is a nurse." None when the rewrite is not safe: the text already
    speaks to someone as "you" (that "you" is the assistant, and swapping both ways needs a parse)."""
    text = text.replace("\u2019", "'").strip()
    if not text or _SECOND_PERSON.search(text):
        return None
    out = _GREETING.sub("", text) or text
    for pattern, replacement in _SWAP_RES:
        out = pattern.sub(replacement, out)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), out)


def _when(date: str) -> str:
    day = said_on(date) if date else None
    return f" ({day_text(day)})" if day else ""


def said_line(role: str, text: str, date: str = "", speaker: str = "") -> str:
    """One memory line that says whose words these are. `role`: "user", "assistant", or another
    speaker's name in `speaker` (benchmark dialogues between two people)."""
    day = said_on(date) if date else None
    text = anchor_text(" ".join(text.split()), day)  # "last month" -> "last month (October 2026)"
    when = _when(date)
    if speaker:
        return f'- {speaker} said{when}: "{text}"'
    if role == "assistant":
        return f'- I replied{when}: "{text}"'
    rewritten = second_person(text)
    if rewritten is not None:
        return f"- {rewritten}{when}"
    return f'- You {"asked" if text.rstrip().endswith("?") else "said"}{when}: "{text}"'


def evidence_lines(e: Evidence) -> list[str]:
    """Memory lines of one evidence item: a dialogue chunk's "User: ..." / "Assistant: ..." /
    "Name: ..." lines each said by its speaker; a generated memory (a fact, a summary) as it is."""
    date = str(e.meta.get("date", "") or "")
    lines = []
    for line in e.text.splitlines():
        line = line.strip()
        if not line or (line.startswith("[") and line.endswith("]")):
            continue  # a session's opening date line: every turn line carries the date already
        m = _SPEAKER.match(line)
        if m is None:
            lines.append(f"- {line}")
            continue
        who, words = m.groups()
        if who in ("User", "Assistant"):
            lines.append(said_line(who.lower(), words, date))
        else:
            lines.append(said_line("", words, date, speaker=who))
    return lines


def memory_notes(evidence: Iterable[Evidence]) -> str:
    """The memory block of a chat prompt: every evidence item's lines, in the order given."""
    lines = [line for e in evidence for line in evidence_lines(e)]
    return "\n".join(lines) or "(nothing yet)"


def chat_roles(sentences: int = 0) -> str:
    """The statement of the roles that opens every chat method's system prompt, with the method's
    reply length (`sentences`; 0 = no length line)."""
    roles = render_prompt("chat_roles").strip()
    if sentences:
        roles += " " + render_prompt("reply_length", sentences=sentences).strip()
    return roles


def memory_system(evidence: Iterable[Evidence], sentences: int = 0) -> str:
    """A chat system prompt with the roles, the reply length and the memory as notes about the user."""
    return chat_roles(sentences) + "\n\n" + render_prompt("chat_memory", memory=memory_notes(evidence)).strip()


def _echo_span(sentence: str, message: str) -> int:
    a, b = " ".join(message.lower().split()), " ".join(sentence.lower().split())
    if not a or not b:
        return 0
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size


def tidy_reply(text: str, user_message: str) -> str:
    """The reply without its echo. A reply that repeats ECHO_CHARS or more characters of the user's
    message in a row loses each sentence that is mostly one copied stretch of it (ECHO_SENTENCE_SHARE,
    at least ECHO_SENTENCE_MIN characters); other replies, and a reply that is nothing but the
    echo (an empty reply says less than a bad one), stay as they are."""
    if _echo_span(text, user_message) < ECHO_CHARS:
        return text.strip()
    sentences = split_sentences(text)
    kept = [s for s in sentences
            if not ((span := _echo_span(s, user_message)) >= ECHO_SENTENCE_MIN and span >= ECHO_SENTENCE_SHARE * len(s))]
    if not kept or len(kept) == len(sentences):
        return text.strip()
    return " ".join(kept).strip()
