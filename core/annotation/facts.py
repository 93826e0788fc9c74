"""Facts to judge from text: where a fact sits in its response (for highlighting), and the facts
of a chat's replies.

A reply is split by a FactScore splitter (core.metrics.atomic_facts): the page passes the rule
splitter, so annotators judge the same atomic facts the verifier labels; the default, one fact per
sentence, needs no model."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.annotation.model import Item, Passage
from core.dialogue import Reply, Turn
from core.metrics.atomic_facts import FactSplitter, SentenceFactSplitter

_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)|\n+")
MIN_SPAN_SCORE = 60.0  # rapidfuzz partial ratio below which a fact is not placed in its response


def locate(fact: str, response: str) -> tuple[int, int] | None:
    """The span of `response` to highlight for `fact`: the exact text when it is there (any case),
    else the best fuzzy alignment widened to whole sentences; None when nothing matches well."""
    if not fact.strip() or not response.strip():
        return None
    at = response.lower().find(fact.strip().lower())
    if at >= 0:
        return at, at + len(fact.strip())
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(fact, response)
    if found is None or found.score < MIN_SPAN_SCORE:
        return None
    return _widen(response, found.dest_start, found.dest_end)


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow [start, end) to the sentence(s) it touches."""
    bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    left = max(b for b in bounds if b <= start)
    right = min((b for b in bounds if b >= end), default=len(text))
    while right > left and text[right - 1].isspace():
        right -= 1
    return left, right


def items_from_turns(turns: Sequence[Turn], replies: Sequence[Reply | None], prefix: str,
                     splitter: FactSplitter | None = None, max_passages: int = 10) -> list[Item]:
    """One item per fact of each assistant reply: the turns before it as history, the user turn it
    answers as the query, the evidence the method used as passages, the fact's span in the reply as
    the splitter found it. Ids are `prefix:turn:fact`."""
    splitter = splitter or SentenceFactSplitter()
    items: list[Item] = []
    for i, (turn, reply) in enumerate(zip(turns, replies)):
        if turn.role != "assistant" or not turn.text.strip():
            continue
        query = turns[i - 1].text if i and turns[i - 1].role == "user" else ""
        history = tuple((t.who, t.text) for t in turns[: i - 1 if query else i])
        passages = tuple(
            Passage(id=f"e{k + 1}", text=e.text, title=f"{e.kind} {e.source}".strip())
            for k, e in enumerate((reply.evidence if reply else ())[:max_passages])
        )
        for k, fact in enumerate(splitter.split(turn.text).facts):
            span = (fact.start, fact.end) if 0 <= fact.start < fact.end else locate(fact.text, turn.text)
            items.append(Item(item_id=f"{prefix}:{i}:{k}", fact=fact.text, response=turn.text, query=query, history=history,
                              evidence=passages, source=reply.method if reply else "", span=span))
    return items
