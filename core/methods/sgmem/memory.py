"""Generated memory of SGMem: session summaries, facts and insights (Appendix B.3-B.5 prompts).

Summaries and facts come one LLM call per session; insights one call over all facts. Results are
cached on disk by (model, prompt, input) so a conversation is summarised once, whatever method or
benchmark asks. The embedded 135M model rarely returns valid JSON: facts then fall back to a
symbolic extractor (the speaker's own declarative sentences with first-person pronouns replaced
by the speaker's name; marked `fallback` in `meta`); insights have no honest symbolic substitute
and are left empty when the model's output fails validation.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from core.dialogue import EVIDENCE_FACT, EVIDENCE_INSIGHT, EVIDENCE_SUMMARY, Dialogue, Evidence, Turn
from core.llm import cost
from core.llm.base import LLM, LLMOutputError, Message
from core.llm.prompts import load_prompt, render_prompt
from core.methods.sgmem.config import MEMORY_KINDS, MemoryGenerationSettings
from core.paths import DEFAULT_CACHE_DIR
from core.resources import Embedder
from core.retrieval.base import session_key, turn_line
from core.text import split_sentences
from core.vectors import VectorIndex

FACTS_SCHEMA = {"type": "array", "items": {"type": "string"}}
INSIGHTS_SCHEMA = {
    "type": "array",
    "items": {"anyOf": [{"type": "string"}, {"type": "object", "required": ["content"], "properties": {"content": {"type": "string"}}}]},
}


@dataclass(frozen=True)
class MemoryItem:
    kind: str  # summary | fact | insight
    text: str
    session: str  # session key it came from ("" for insights over many sessions)
    date: str = ""
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GeneratedMemory:
    items: tuple[MemoryItem, ...] = ()

    def of(self, kind: str) -> list[MemoryItem]:
        return [m for m in self.items if m.kind == kind]


MemoryProvider = Callable[[Dialogue, str], GeneratedMemory]  # (dialogue, kinds "mfi") -> memory


class MemoryGenerator:
    """Runs the Appendix B prompts through `llm`, with an on-disk cache."""

    def __init__(self, llm: LLM, settings: MemoryGenerationSettings = MemoryGenerationSettings(),
                 cache_folder: str | Path | None = None) -> None:
        self.llm = llm
        self.settings = settings
        self.folder = Path(cache_folder or DEFAULT_CACHE_DIR / "sgmem-memory")
        self.folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, dialogue: Dialogue, kinds: str) -> GeneratedMemory:
        items: list[MemoryItem] = []
        facts: list[MemoryItem] = []
        for session in dialogue.sessions:
            if not session.turns:
                continue
            if "m" in kinds:
                items += self.summary(session.turns)
            if "f" in kinds or "i" in kinds:
                facts += self.facts(session.turns)
        if "f" in kinds:
            items += facts
        if "i" in kinds:
            items += self.insights(facts)
        return GeneratedMemory(tuple(items))

    # -- the three prompts -------------------------------------------------------------------
    def summary(self, turns: list[Turn]) -> list[MemoryItem]:
        text = self._cached("sgmem_summary", self._session_text(turns), self._summarise)
        key, date = session_key(turns[0]), turns[0].date
        return [MemoryItem(EVIDENCE_SUMMARY, text, key, date)] if text.strip() else []

    def facts(self, turns: list[Turn]) -> list[MemoryItem]:
        value = self._cached("sgmem_fact", self._session_text(turns), self._extract_facts)
        key, date = session_key(turns[0]), turns[0].date
        if value is None:  # the model's output failed validation: symbolic facts
            return [MemoryItem(EVIDENCE_FACT, f, key, date, {"fallback": True}) for f in symbolic_facts(turns)]
        return [MemoryItem(EVIDENCE_FACT, f, key, date) for f in value if f.strip()]

    def insights(self, facts: list[MemoryItem]) -> list[MemoryItem]:
        if not facts:
            return []
        records = json.dumps([{"timestamp": f.date, "content": f.text} for f in facts], ensure_ascii=False, indent=0)
        value = self._cached("sgmem_insight", records, self._reflect)
        out = []
        for entry in value or []:
            content = entry if isinstance(entry, str) else entry.get("content", "")
            stamp = "" if isinstance(entry, str) else str(entry.get("timestamp", ""))
            if content.strip():
                out.append(MemoryItem(EVIDENCE_INSIGHT, content.strip(), "", stamp))
        return out

    def _summarise(self, dialogue_text: str):
        prompt = render_prompt("sgmem_summary", dialogue=dialogue_text)
        s = self.settings
        with cost.stage("summary"):
            return self.llm.chat([Message("user", prompt)], temperature=s.temperature, max_tokens=s.max_tokens).text

    def _extract_facts(self, messages_text: str):
        prompt = render_prompt("sgmem_fact", messages=messages_text)
        try:
            with cost.stage("facts"):
                return [str(f) for f in self.llm.json([Message("user", prompt)], FACTS_SCHEMA, max_tokens=self.settings.max_tokens)]
        except LLMOutputError:
            return None

    def _reflect(self, records: str):
        prompt = render_prompt("sgmem_insight", memories=records)
        try:
            with cost.stage("insights"):
                return self.llm.json([Message("user", prompt)], INSIGHTS_SCHEMA, max_tokens=self.settings.max_tokens)
        except LLMOutputError:
            return None

    # -- cache -------------------------------------------------------------------------------
    def _session_text(self, turns: list[Turn]) -> str:
        lines = [f"[{turns[0].date}]"] if turns[0].date else []
        lines += [turn_line(t) for t in turns]
        text = "\n".join(lines)
        return text[-self.settings.max_session_chars :]

    def _cached(self, prompt_name: str, text: str, compute):
        key = hashlib.sha1(
            json.dumps([self.llm.name, prompt_name, load_prompt(prompt_name), text, self.settings.max_tokens]).encode()
        ).hexdigest()
        path = self.folder / f"{key}.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))["value"]
        value = compute(text)
        path.write_text(json.dumps({"model": self.llm.name, "prompt": prompt_name, "value": value}, ensure_ascii=False), encoding="utf-8")
        return value


_FIRST_PERSON = [(re.compile(r"\bI'm\b"), "{who} is"), (re.compile(r"\bI've\b"), "{who} has"),
                 (re.compile(r"\bI'd\b"), "{who} would"), (re.compile(r"\bI'll\b"), "{who} will"),
                 (re.compile(r"\b(?:I|me)\b"), "{who}"), (re.compile(r"\b(?:my|My|mine)\b"), "{who}'s"),
                 (re.compile(r"\bmyself\b"), "{who}")]


def symbolic_facts(turns: list[Turn], min_words: int = 5) -> list[str]:
    """Declarative first-person sentences of each speaker, made standalone by naming the speaker."""
    out = []
    for turn in turns:
        who = turn.speaker if turn.speaker and turn.speaker not in ("user", "assistant") else (
            "The user" if turn.role == "user" else "The assistant")
        for sentence in split_sentences(turn.text):
            if sentence.endswith("?") or len(sentence.split()) < min_words:
                continue
            if not re.search(r"\b(?:I|I'm|I've|I'd|I'll|my|My|me|mine|myself)\b", sentence):
                continue
            for pattern, repl in _FIRST_PERSON:
                sentence = pattern.sub(repl.format(who=who), sentence)
            out.append(sentence)
    return out


class MemoryTables:
    """The summary, fact and insight index tables (three of SGMem's seven)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.tables: dict[str, tuple[VectorIndex, list[MemoryItem]]] = {}

    def build(self, memory: GeneratedMemory, kinds: str) -> None:
        self.tables = {}
        for letter in kinds:
            kind = MEMORY_KINDS[letter]
            items = memory.of(kind)
            index = VectorIndex(self.embedder.dim)
            if items:
                index.add(self.embedder.encode([m.text for m in items]), list(range(len(items))))
            self.tables[kind] = (index, items)

    def search(self, query_vector, k: int, offset: float = 0.0) -> list[Evidence]:
        """Top-k of each kind; score = cosine + offset (SGMem adds epsilon = 1)."""
        out = []
        for kind, (index, items) in self.tables.items():
            for hit in index.search(query_vector, k)[0]:
                item = items[hit.item]
                out.append(Evidence(item.text, hit.score + offset, item.session or kind, kind,
                                    {"date": item.date, "session": item.session, **item.meta}))
        return out

    def __len__(self) -> int:
        return sum(len(items) for _, items in self.tables.values())
