"""One layout for every chat method's prompt, laid out for the model's prompt cache (issue 53).

A server (llama.cpp, vLLM) keeps the tokens of a slot's last prompt and reuses the longest prefix
the next prompt shares with it; only what follows is computed. On a 2-core CPU the 1.5B model
computes about 70 prompt tokens a second, so a reply that recomputes 400 tokens waits 6 s before
its first word. Every method's prompt therefore reads, in this order:

1. the system message: the same every turn (`chat_system`, core.methods.render);
2. the conversation so far, in order, as chat messages (`conversation_window`): between two
   replies it only grows, so the previous prompt and its reply are a prefix of the next one;
3. what changes: the memory this message needs (a system message of the method's notes, left out
   when there are none), then the user's message.

The conversation is cut to `max_chars` from its start in steps (`window_start`), not one turn at a
time: a window sliding by one turn would change the prompt's first message every turn and
recompute all of it. Memory that the window already shows is not shown again (`outside_window`),
except to a question about what the user told (`asks_what_was_told`): read from the whole window, a
small model answers a changed value with the old one; shown the turns that bear on the question
again, last before it and in the order said, it reads the change (docs/replies.md, "The memory a
question needs, shown again").
"""

from __future__ import annotations

from typing import Iterable, Sequence

from core.dialogue import ASSISTANT, USER, Evidence, Turn
from core.llm.base import Message
from core.llm.prompts import render_prompt
from core.told_answers import fact_question


def _shown_text(turn: Turn) -> str:
    """A turn as the prompt shows it; named speakers (two-person benchmark dialogues) keep their names."""
    return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text


def window_start(turns: Sequence[Turn], max_chars: int) -> int:
    """The first turn the prompt shows. Starts are fixed points of the dialogue: the first turn, then
    each turn where the text since the previous start passes half of `max_chars`. The window begins
    at the earliest start from which the rest fits, so it moves about half a budget at a time and the
    prompt's beginning (hence the cache) stays the same for many turns in between. The newest turn
    is always shown, even alone over the budget."""
    if not turns:
        return 0
    sizes = [len(_shown_text(t)) for t in turns]
    starts, since = [0], 0
    for i, size in enumerate(sizes):
        if since + size > max_chars // 2 and i > starts[-1]:
            starts.append(i)
            since = 0
        since += size
    suffix = [0] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + sizes[i]
    for start in starts:
        if suffix[start] <= max_chars:
            return start
    return len(turns) - 1


def conversation_window(turns: Sequence[Turn], max_chars: int) -> list[Turn]:
    """The turns the prompt shows as the conversation so far (see `window_start`)."""
    return list(turns[window_start(turns, max_chars):])


def window_messages(turns: Sequence[Turn]) -> list[Message]:
    return [Message(ASSISTANT if t.role == ASSISTANT else "user", _shown_text(t)) for t in turns]


def memory_message(notes: str, header: str = "") -> Message | None:
    """The memory shown for this message, or None when there is none. `header` says what the
    notes are (a method's own, e.g. the DSM's); by default the shared `memory_note` prompt, which
    says what memory is for: to answer when the message needs it, not to be recited."""
    notes = notes.strip()
    if not notes or notes == "(nothing yet)":
        return None
    return Message("system", (header.strip() or render_prompt("memory_note").strip()) + "\n" + notes)


def layout_prompt(system: str, turns: Sequence[Turn], query: str, max_chars: int,
                  memory: Message | None = None) -> list[Message]:
    """The prompt of a chat reply: stable system message, the conversation window, the memory for
    this message (if any), the user's message."""
    window = conversation_window(turns, max_chars)
    return [Message("system", system), *window_messages(window), *([memory] if memory else []), Message("user", query)]


def shown_turn_ids(turns: Sequence[Turn], max_chars: int) -> set[str]:
    """The ids of the turns the window shows (their memory need not be shown again)."""
    return {t.turn_id for t in conversation_window(turns, max_chars) if t.turn_id}


def asks_what_was_told(turns: Sequence[Turn], query: str) -> bool:
    """Whether `query` asks for a fact of the user's world (core.told_answers.fact_question): its
    memory is shown whole, what the window shows too."""
    return bool(fact_question(query, [t.text for t in turns if t.role == USER]))


def in_order_said(evidence: Sequence[Evidence], turns: Sequence[Turn]) -> list[Evidence]:
    """`evidence` with the items that hold turns in the order the turns were said (a change reads
    after what it changed), each at a place one of them held; the others stay where they are."""
    position = {t.turn_id: i for i, t in enumerate(turns) if t.turn_id}
    slots = [i for i, e in enumerate(evidence) if _turns_of(e) and _turns_of(e) <= position.keys()]
    ordered = sorted((evidence[i] for i in slots), key=lambda e: min(position[t] for t in _turns_of(e)))
    out = list(evidence)
    for i, e in zip(slots, ordered):
        out[i] = e
    return out


def _turns_of(e: Evidence) -> set[str]:
    """The turns an evidence item holds: a chunk's `turn_ids`, else its source (a turn's id)."""
    ids = (e.meta or {}).get("turn_ids")
    return set(ids) if ids else ({e.source} if e.source else set())


def outside_window(evidence: Iterable[Evidence], shown: set[str]) -> list[Evidence]:
    """The evidence items holding a turn the window does not show: a retrieved turn already in the
    conversation is in the prompt once already. Items that are no turn (a fact, a summary, a graph
    line, named by no turn id) stay."""
    return [e for e in evidence if not (_turns_of(e) and _turns_of(e) <= shown)]
