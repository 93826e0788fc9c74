"""Atomic facts of a response (the paper's Table 7/8 splitting step).

Three splitters behind one base:

- `LLMFactSplitter`: the paper's splitting prompt, one sentence at a time, for a strong endpoint.
  Each returned fact is located back in its sentence (fuzzy match) to keep a source span; a
  sentence whose answer is empty or unusable falls back to the rule splitter.
- `RuleFactSplitter` (offline, deterministic): sentences by pysbd, then clauses by spaCy's parse:
  coordinated predicates ("X was born in A and grew up in B" -> two facts, the subject carried
  over) and relative clauses ("X, which is in A, won B" -> "X won B" and "X is in A"). A sentence
  without a verb (a phrase, a list item) stays whole, as the prompt asks.
- `SentenceFactSplitter`: one fact per sentence, for where no spaCy model is installed.

All three bound their work: responses longer than `max_chars` are cut (and say so), at most
`max_facts` facts come back, so a 100 KB response costs no more than a long one.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from core.metrics.fact_types import AtomicFact
from core.text import split_sentences

RELATIVE_PRONOUNS = {"which", "who", "whom", "that", "whose", "where", "when"}


@dataclass(frozen=True)
class SplitSettings:
    max_chars: int = 20_000  # of the response; the rest is not split
    max_facts: int = 200
    min_words: int = 3  # a clause shorter than this is not split off (it stays in its sentence)


@dataclass(frozen=True)
class SplitResult:
    facts: list[AtomicFact]
    truncated: bool = False  # the response was longer than max_chars or gave more than max_facts
    fallbacks: int = 0  # LLM splitter: sentences split by the rule splitter instead


def sentence_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, sentence) for each pysbd sentence, located in `text` in order."""
    out, cursor = [], 0
    for sentence in split_sentences(text):
        start = text.find(sentence, cursor)
        if start < 0:  # pysbd normalised something; fall back to the cursor
            start = cursor
        end = start + len(sentence)
        out.append((start, end, sentence))
        cursor = end
    return out


class FactSplitter(ABC):
    name: str = "splitter"

    def __init__(self, settings: SplitSettings = SplitSettings()) -> None:
        self.settings = settings

    def split(self, response: str) -> SplitResult:
        """Atomic facts of `response` (an empty or blank response has none)."""
        if not response or not response.strip():
            return SplitResult([])
        truncated = len(response) > self.settings.max_chars
        text = response[: self.settings.max_chars]
        facts, fallbacks = self._split(sentence_spans(text))
        if len(facts) > self.settings.max_facts:
            facts, truncated = facts[: self.settings.max_facts], True
        return SplitResult(facts, truncated, fallbacks)

    @abstractmethod
    def _split(self, sentences: list[tuple[int, int, str]]) -> tuple[list[AtomicFact], int]:
        """Facts of the located sentences, and how many sentences used a fall-back."""


class SentenceFactSplitter(FactSplitter):
    """One fact per sentence (pysbd): the splitter that needs no model, used where spaCy is missing."""

    name = "sentences"

    def _split(self, sentences):
        return [AtomicFact(text, start, end, index) for index, (start, end, text) in enumerate(sentences)], 0


class RuleFactSplitter(FactSplitter):
    name = "rules"

    def __init__(self, nlp, settings: SplitSettings = SplitSettings()) -> None:
        super().__init__(settings)
        self.nlp = nlp

    def _split(self, sentences):
        facts: list[AtomicFact] = []
        docs = self.nlp.pipe([s for _, _, s in sentences])
        for index, ((start, _, _), doc) in enumerate(zip(sentences, docs)):
            for text, lo, hi in clauses(doc, self.settings.min_words):
                facts.append(AtomicFact(text, start + lo, start + hi, index))
        return facts, 0


def _is_predicate(token) -> bool:
    return token.pos_ in ("VERB", "AUX")


def _clause_heads(root) -> list:
    """The root and predicates coordinated with it (conj chains), in order."""
    heads, stack = [], [root]
    while stack:
        head = stack.pop()
        heads.append(head)
        stack.extend(c for c in head.children if c.dep_ == "conj" and _is_predicate(c))
    return sorted(heads, key=lambda t: t.i)


def _subject(head):
    return next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass", "expl", "csubj")), None)


def _render(tokens) -> tuple[str, int, int]:
    tokens = sorted(tokens, key=lambda t: t.i)
    parts = []
    for i, t in enumerate(tokens):
        gap = t.whitespace_ if i + 1 < len(tokens) and tokens[i + 1].i == t.i + 1 else " "
        parts.append(t.text + gap)
    text = "".join(parts).strip().rstrip(",;:")
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
    return text, tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)


def _finish(text: str) -> str:
    text = text.strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def clauses(doc, min_words: int = 3) -> list[tuple[str, int, int]]:
    """(fact, start, end) of one parsed sentence; spans are character offsets in the sentence."""
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if not roots or not any(_is_predicate(t) for t in doc):
        text = doc.text.strip()
        return [(text, 0, len(doc.text.rstrip()))] if text else []
    out = []
    for root in roots:
        out.extend(_clauses_of_root(root, min_words))
    return out or [(doc.text.strip(), 0, len(doc.text.rstrip()))]


def _clauses_of_root(root, min_words: int) -> list[tuple[str, int, int]]:
    """The main clause, each coordinated predicate (with the subject carried over when it has
    none of its own) and each subject relative clause, as separate facts."""
    sentence_tokens = set(root.subtree)
    heads = _clause_heads(root) if _is_predicate(root) else [root]
    relcls = [t for t in sentence_tokens if t.dep_ == "relcl" and _is_predicate(t)]
    # a split-off clause must be long enough to stand alone; otherwise it stays in its parent
    heads = [h for h in heads if h.i == root.i or _long_enough(h, heads, relcls, min_words)]
    relcls = [r for r in relcls if len(list(r.subtree)) >= min_words and _relative_pronoun(r) is not None]
    out = []
    carried = _subject(root)
    for head in heads:
        tokens = _own_only(head, heads, relcls) if head.i != root.i else sentence_tokens - _inner(root, heads, relcls)
        # the conjunction joining this predicate to the next ("and", "but") goes with neither
        tokens = {t for t in tokens if not (t.dep_ in ("cc", "preconj") and t.head in heads)}
        if head.i != root.i and _subject(head) is None and carried is not None:
            tokens |= set(carried.subtree)
        tokens = _tidy_punct(tokens, root.doc)
        if tokens:
            text, lo, hi = _render(tokens)
            out.append((_finish(text), lo, hi))
    for rel in relcls:
        out.extend(_relative_clause(rel, relcls))
    return [o for o in out if o[0].strip(". ")]


def _relative_pronoun(rel):
    return next((t for t in rel.subtree if t.text.lower() in RELATIVE_PRONOUNS and t.head.i == rel.i
                 and t.dep_ in ("nsubj", "nsubjpass")), None)


def _inner(head, heads, relcls) -> set:
    """Tokens of the other clauses nested in `head`'s subtree."""
    inner = set()
    for other in heads + relcls:
        if other.i != head.i and other in set(head.subtree):
            inner |= set(other.subtree)
    return inner


def _tidy_punct(tokens: set, doc) -> set:
    """Drop commas and semicolons left dangling where a clause was cut out, and a trailing comma."""
    kept = set(tokens)
    for t in sorted(tokens, key=lambda t: t.i):
        if t.is_punct and t.text in (",", ";", "-", "--", "—"):
            before = t.i > 0 and doc[t.i - 1] in kept
            after = t.i + 1 < len(doc) and doc[t.i + 1] in kept
            if not (before and after):
                kept.discard(t)
    return kept


def _own_only(head, heads, relcls) -> set:
    """Tokens of `head`'s subtree that are not inside a later clause head or relative clause."""
    return set(head.subtree) - _inner(head, heads, relcls)


def _long_enough(head, heads, relcls, min_words: int) -> bool:
    return len([t for t in _own_only(head, heads, relcls) if not t.is_punct]) >= min_words - 1


def _relative_clause(rel, relcls) -> list[tuple[str, int, int]]:
    """"X, which is in A" -> "X is in A": the antecedent phrase replaces the relative pronoun."""
    antecedent = rel.head
    noun_tokens = set(antecedent.subtree) - set(rel.subtree)
    noun_tokens = {t for t in noun_tokens if not t.is_punct or t.i < rel.i and t.i > antecedent.i and t.text not in (",", ";")}
    clause = set(rel.subtree)
    for other in relcls:
        if other.i != rel.i and other in clause:
            clause -= set(other.subtree)
    pronoun = [t for t in clause if t.text.lower() in RELATIVE_PRONOUNS and t.dep_ in ("nsubj", "nsubjpass", "dobj", "advmod", "pobj")]
    if not pronoun or pronoun[0].text.lower() in ("where", "when", "whose"):
        return []  # "the city where he lived" does not make a clean statement without rewording
    clause = {t for t in clause if t.i != pronoun[0].i and not (t.is_punct and t.text in (",", ";"))}
    if pronoun[0].dep_ in ("nsubj", "nsubjpass"):
        text = _render(noun_tokens)[0] + " " + _render(clause)[0]
    else:  # "the film that he directed" -> "he directed the film" would need reordering: keep order
        return []
    lo = min(t.idx for t in noun_tokens | clause)
    hi = max(t.idx + len(t.text) for t in noun_tokens | clause)
    return [(_finish(text), lo, hi)]


class LLMFactSplitter(FactSplitter):
    """The paper's splitting prompt (Table 7/8), sentence by sentence, for a capable endpoint."""

    name = "llm"

    def __init__(self, llm, fallback: RuleFactSplitter, settings: SplitSettings = SplitSettings(), examples: str = "") -> None:
        super().__init__(settings)
        self.llm, self.fallback, self.examples = llm, fallback, examples or DEFAULT_EXAMPLES

    def _split(self, sentences):
        from core.llm.prompts import render_prompt

        prompts = [render_prompt("factscore_split", examples=self.examples, response=s) for _, _, s in sentences]
        replies = self.llm.chat_batch(prompts, temperature=0.0, max_tokens=256)
        facts, fallbacks = [], 0
        for index, ((start, end, sentence), reply) in enumerate(zip(sentences, replies)):
            lines = parse_fact_lines(reply.text, sentence)
            if not lines:
                fallbacks += 1
                got, _ = self.fallback._split([(start, end, sentence)])
                facts.extend(AtomicFact(f.text, f.start, f.end, index) for f in got)
                continue
            for line in lines:
                lo, hi = locate(line, sentence)
                facts.append(AtomicFact(line, start + lo if lo >= 0 else -1, start + hi if lo >= 0 else -1, index))
        return facts, fallbacks


DEFAULT_EXAMPLES = (
    "Input: He was born in 1961 and grew up in Chicago.\n"
    "Output:\n- He was born in 1961.\n- He grew up in Chicago.\n\n"
    "Input: The 1932 Summer Olympics\nOutput:\n- The 1932 Summer Olympics\n\n"
)


def parse_fact_lines(text: str, sentence: str = "") -> list[str]:
    """Facts from the splitter's answer: the lines with a list marker ("- ", "* ", "1. "), markers
    stripped. An answer without markers counts only when it repeats the input (the prompt's "output
    it exactly as it is" case); anything else ("I cannot do that") is no answer: []."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        marked = re.match(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+(.*)$", line)
        if marked and marked.group(1).strip() and not marked.group(1).lower().startswith(("output", "input")):
            out.append(marked.group(1).strip())
    if out or not sentence:
        return out
    from rapidfuzz import fuzz

    answer = text.strip().removeprefix("Output:").strip()
    return [answer] if answer and fuzz.ratio(answer.lower(), sentence.strip().lower()) >= 90 else []


def locate(fact: str, sentence: str) -> tuple[int, int]:
    """The best-matching span of `fact` in `sentence` (rapidfuzz alignment); (-1, -1) when poor."""
    from rapidfuzz import fuzz

    if not fact or not sentence:
        return -1, -1
    found = fuzz.partial_ratio_alignment(fact.lower(), sentence.lower())
    if found is None or found.score < 60:
        return -1, -1
    lo, hi = found.dest_start, found.dest_end
    while lo < hi and sentence[lo].isspace():
        lo += 1
    while hi > lo and sentence[hi - 1].isspace():
        hi -= 1
    return lo, hi
