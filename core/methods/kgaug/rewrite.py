"""Dialogue rewrite for Triton-C: resolve pronouns and references before linking and ranking.

- `LLMRewriter`: the paper's Table 6 rewrite prompt (zero-shot chain of thought); the query is
  the last "Speaker A" line of the "Resolved Dialogue" section. Meant for a strong endpoint (the
  paper fine-tuned Llama-3-8B on GPT-4o rewrites). Output it cannot read falls back to the
  symbolic rewrite, and the result says so.
- `SymbolicRewriter`: for weak models. Person pronouns (he, him, his, she, her, ...) become the
  most recently mentioned person entity, thing references (it, its, that movie, this book, ...)
  the most recent work; kinds come from the graph (the tail of written_by / directed_by /
  starred_actors ... is a person, their head a work), else from spaCy's PERSON label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from core.llm.base import LLM, LLMError, Message
from core.llm.prompts import render_prompt
from core.methods.kgaug.linking import EntityLinker, LinkedEntity

PERSON, THING = 1, 2
# relation -> which end is the person (the other end is the work)
PERSON_ROLES = {
    "starred_actors": "tail", "directed_by": "tail", "written_by": "tail", "Produced by": "tail",
    "Composer": "tail", "Lyricist": "tail", "Program creator": "tail", "Film Executive Produced": "head",
    "Starring TV role": "head", "TV regular appearance": "head", "has_person": "tail",
}
_PERSON_WORDS = {"he": "", "him": "", "she": "", "her": "", "his": "'s", "hers": "'s", "himself": "", "herself": ""}
_THING_PHRASES = r"(?:that|this|the) (?:movie|film|book|novel|show|series|song|album|one)"
_PATTERN = re.compile(rf"\b({_THING_PHRASES}|it|its|{'|'.join(_PERSON_WORDS)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class RewriteResult:
    query: str  # the rewritten query (x')
    context: tuple[str, ...]  # the rewritten context lines (c'); unchanged for the symbolic rewrite
    method: str  # symbolic | llm | llm->symbolic (unreadable LLM output) | none
    replaced: tuple[tuple[str, str], ...] = ()  # (reference as written, entity)
    reasoning: str = ""  # the LLM's chain of thought
    raw: str = ""
    extra: dict = field(default_factory=dict)


class SymbolicRewriter:
    def __init__(self, linker: EntityLinker, kinds: np.ndarray) -> None:
        self.linker = linker
        self.kinds = kinds

    def kind(self, entity: LinkedEntity) -> int:
        k = int(self.kinds[entity.entity]) if entity.entity < len(self.kinds) else 0
        if k:
            return k
        return PERSON if entity.label == "PERSON" else THING

    def antecedents(self, context: Sequence[str]) -> dict[int, str]:
        """The most recent entity of each kind in `context` (oldest line first)."""
        found: dict[int, str] = {}
        for line in reversed(context):
            for e in sorted(self.linker.link(line), key=lambda e: -e.start):
                found.setdefault(self.kind(e), e.name)
            if len(found) == 2:
                break
        return found

    def rewrite(self, context: Sequence[str], query: str) -> RewriteResult:
        own = self.linker.link(query)
        spans = [(e.start, e.end) for e in own]
        targets = self.antecedents(context)
        replaced: list[tuple[str, str]] = []

        def swap(m: re.Match) -> str:
            word = m.group(1)
            if any(m.start() < b and a < m.end() for a, b in spans):
                return word  # inside an entity name ("It Follows")
            low = word.lower()
            if low in _PERSON_WORDS:
                name = targets.get(PERSON)
                suffix = _PERSON_WORDS[low]
            else:
                name = targets.get(THING)
                suffix = "'s" if low == "its" else ""
            if not name:
                return word
            replaced.append((word, name))
            return name + suffix

        rewritten = _PATTERN.sub(swap, query)
        return RewriteResult(rewritten, tuple(context), "symbolic", tuple(replaced))


class LLMRewriter:
    def __init__(self, llm: LLM, fallback: SymbolicRewriter | None, max_tokens: int = 600) -> None:
        self.llm = llm
        self.fallback = fallback
        self.max_tokens = max_tokens

    @staticmethod
    def dialogue_text(context: Sequence[tuple[str, str]], query: str) -> str:
        """Speaker A = the user, Speaker B = the assistant, as in the paper's Table 11."""
        lines = [f"Speaker {'A' if role == 'user' else 'B'}: {text}" for role, text in context]
        return "\n".join(lines + [f"Speaker A: {query}"])

    def rewrite(self, context: Sequence[tuple[str, str]], query: str) -> RewriteResult:
        prompt = render_prompt("kgaug_rewrite", dialogue=self.dialogue_text(context, query))
        try:
            raw = self.llm.chat([Message("user", prompt)], temperature=0.0, max_tokens=self.max_tokens).text
        except LLMError:
            raise
        parsed = parse_rewrite(raw, len(context))
        if parsed is None:
            texts = [t for _, t in context]
            if self.fallback is None:
                return RewriteResult(query, tuple(texts), "none", raw=raw)
            result = self.fallback.rewrite(texts, query)
            return RewriteResult(result.query, result.context, "llm->symbolic", result.replaced, raw=raw)
        reasoning, lines, new_query = parsed
        return RewriteResult(new_query, tuple(lines), "llm", reasoning=reasoning, raw=raw)


_SPEAKER = re.compile(r"^\W*speaker\s*([ab])\W*:\s*(.*)$", re.IGNORECASE)


def parse_rewrite(raw: str, n_context: int) -> tuple[str, list[str], str] | None:
    """(reasoning, resolved context lines, resolved query) or None when unreadable."""
    head, sep, tail = raw.partition("Resolved Dialogue")
    if not sep:
        return None
    body = tail.lstrip(" :*\n")
    turns = [m.groups() for m in (_SPEAKER.match(line.strip()) for line in body.splitlines()) if m]
    if not turns or turns[-1][0].lower() != "a" or not turns[-1][1].strip():
        return None
    reasoning = head.partition("Chain of Thought")[2].lstrip(" :*\n").strip()
    context = [text.strip() for _, text in turns[:-1]][-n_context:] if n_context else []
    return reasoning, context, turns[-1][1].strip()
