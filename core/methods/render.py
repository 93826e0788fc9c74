"""How a chat reply's prompt says who said what (issue 39): one opening for every chat method, and
memory lines that name whose words they are.

A small model copies what its prompt shows. Shown "User: I teach chemistry." it answers "I teach
chemistry."; shown "You teach chemistry." it answers about the user. And a long list of rules in the
system prompt throws the 0.5B model off altogether: under the older rule-laden prompt it answered
"You." to "Hi, I'm Marta ..." and "Say hello.", where under its trained "You are a helpful
assistant" opening it greets the user by name (scripts/lab/system_prompt_probe.py). So:

- `chat_system(sentences)`: the one opening of every chat method's system prompt (base, rag, sgmem,
  sgmem-h, mcts, rt's answer): a plain assistant, a length, and one sentence on "you" and "your".
  A lever given to one method is given to all, so comparing methods does not compare renderings.
- `memory_notes(evidence)`: the user's own sentences in the second person where the rewrite is safe
  ("I live in Porto" -> "You live in Porto.", `core.person.second_person`), otherwise quoted as the user's ('You said: "..."');
  the assistant's turns as 'I replied: "..."'; a named speaker's as 'Ana said: "..."'. Relative
  times are the method's to resolve (its `anchor_time`): the lines show the evidence's words as given.
"""

from __future__ import annotations

import re
from typing import Iterable

from core.dialogue import Evidence
from core.llm.prompts import render_prompt
from core.person import says_you, second_person, without_greeting

_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?): (.*)$", re.DOTALL)


def chat_system(sentences: int = 2) -> str:
    """The opening of every chat method's system prompt; `sentences` > 0 adds the reply's length."""
    length = " " + render_prompt("reply_length", sentences=sentences).strip() if sentences > 0 else ""
    return render_prompt("chat_system", length=length).strip()


def said_to_user(text: str) -> str | None:
    """The user's words said back to the user (`core.person.second_person`, an opening greeting
    left out): "Hi, I'm Marta and my sister is a nurse." -> "You're Marta and your sister is a
    nurse." None when the rewrite is not safe: the text already speaks to someone as "you" (that
    "you" is the assistant, and swapping both ways needs a parse)."""
    text = text.replace("\u2019", "'").strip()
    if not text or says_you(text):
        return None
    return second_person(without_greeting(text))


def said_line(role: str, text: str, speaker: str = "") -> str:
    """One memory line that says whose words these are. `role`: "user" or "assistant"; a named
    speaker (benchmark dialogues between two people) in `speaker`."""
    text = " ".join(text.split())
    if speaker:
        return f'- {speaker} said: "{text}"'
    if role == "assistant":
        return f'- I replied: "{text}"'
    rewritten = said_to_user(text)
    if rewritten is not None:
        return f"- {rewritten}"
    return f'- You {"asked" if text.rstrip().endswith("?") else "said"}: "{text}"'


def evidence_lines(e: Evidence) -> list[str]:
    """The memory lines of one evidence item: a dialogue chunk's "User: ..." / "Assistant: ..." /
    "Name: ..." lines each said by its speaker; a generated memory (a fact, a summary) as it is."""
    lines = []
    for line in e.text.splitlines():
        line = line.strip()
        if not line or (line.startswith("[") and line.endswith("]")):
            continue  # a session's opening date line
        m = _SPEAKER.match(line)
        if m is None:
            lines.append(f"- {line}")
            continue
        who, words = m.groups()
        if who in ("User", "Assistant"):
            lines.append(said_line(who.lower(), words))
        else:
            lines.append(said_line("", words, speaker=who))
    return lines


def memory_notes(evidence: Iterable[Evidence]) -> str:
    """The memory block of a chat prompt: every evidence item's lines, in the order given."""
    return "\n".join(line for e in evidence for line in evidence_lines(e)) or "(nothing yet)"
