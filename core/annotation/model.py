"""The data of an annotation task: items (an atomic fact in its dialogue, with evidence), labels
(one annotator's judgment of one item) and the bounds every import and label is checked against.

Nothing here touches the database or the UI; the store and the importers build and check these."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LABELS: tuple[str, ...] = ("Supports", "Refutes", "Not Enough Info")
_LABEL_ALIASES = {
    "supports": "Supports", "supported": "Supports", "support": "Supports", "true": "Supports",
    "refutes": "Refutes", "refuted": "Refutes", "refute": "Refutes", "false": "Refutes",
    "not enough info": "Not Enough Info", "not enough information": "Not Enough Info", "nei": "Not Enough Info",
}
ADJUDICATED = "adjudicated"  # the export's column for the lead's final label
_ANNOTATOR = re.compile(r"^[\w][\w .@'-]*$")  # letters (any script), digits, space and . @ ' - _


class AnnotationError(ValueError):
    """Bad input (a file, a name, a label): the message says what and where, for the page or CLI to show."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what an import or a label may hold. A file over `max_bytes` is refused before it is
    parsed; split it and import the parts into the same task (imports merge)."""

    max_bytes: int = 8_000_000
    max_items: int = 5000  # per import and per task
    max_passages: int = 20
    max_id_chars: int = 200
    max_fact_chars: int = 2000
    max_text_chars: int = 20_000  # a response, a query, one history turn
    max_history_turns: int = 200
    max_passage_chars: int = 10_000
    max_comment_chars: int = 2000
    max_annotator_chars: int = 64
    max_task_name_chars: int = 100


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    title: str = ""
    section: str = ""

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "section": self.section, "text": self.text}


@dataclass(frozen=True)
class Item:
    """One atomic fact to judge. `gold*` come from the import (HybriDialogue's human labels) and are
    shown only in adjudication mode. `span` is where the fact sits in `response` (for highlighting),
    found at import time; None when it could not be placed."""

    item_id: str
    fact: str
    response: str = ""
    query: str = ""
    history: tuple[tuple[str, str], ...] = ()  # (speaker, text) before the query
    evidence: tuple[Passage, ...] = ()
    gold: str | None = None
    gold_evidence: tuple[str, ...] = ()  # passage ids the gold annotators selected
    gold_claim: bool | None = None  # False: the gold annotators said "not a factual claim"
    source: str = ""  # who wrote the response (a model, a method, "plain" for the gold reply)
    span: tuple[int, int] | None = None
    position: int = -1  # order in the task (set by the store)
    version: int = 1  # bumped when a re-import changes the item's content (set by the store)

    def content(self) -> dict:
        """What defines the item's version: everything but its place and version number."""
        return {
            "fact": self.fact, "response": self.response, "query": self.query,
            "history": [list(t) for t in self.history], "evidence": [p.to_dict() for p in self.evidence],
            "gold": self.gold, "gold_evidence": list(self.gold_evidence), "gold_claim": self.gold_claim,
            "source": self.source, "span": list(self.span) if self.span else None,
        }

    @classmethod
    def from_content(cls, item_id: str, data: dict, position: int = -1, version: int = 1) -> Item:
        return cls(
            item_id=item_id, fact=data["fact"], response=data.get("response", ""), query=data.get("query", ""),
            history=tuple((str(s), str(t)) for s, t in data.get("history", [])),
            evidence=tuple(Passage(**p) for p in data.get("evidence", [])),
            gold=data.get("gold"), gold_evidence=tuple(data.get("gold_evidence", [])), gold_claim=data.get("gold_claim"),
            source=data.get("source", ""), span=tuple(data["span"]) if data.get("span") else None,
            position=position, version=version,
        )


@dataclass(frozen=True)
class Label:
    """One annotator's current judgment of one item (the store also keeps every earlier one)."""

    item_id: str
    annotator: str
    label: str
    evidence: tuple[str, ...] = ()  # ids of the passages marked as evidence
    not_claim: bool = False  # "not a factual claim"
    comment: str = ""
    item_version: int = 1  # the item's version when the label was given
    created_at: float = 0.0

    def same_judgment(self, other: Label) -> bool:
        return (self.label, tuple(sorted(self.evidence)), self.not_claim, self.comment) == (
            other.label, tuple(sorted(other.evidence)), other.not_claim, other.comment)


@dataclass(frozen=True)
class Adjudication:
    item_id: str
    label: str
    lead: str
    created_at: float = 0.0


@dataclass(frozen=True)
class TaskInfo:
    id: str
    name: str
    owner: str
    items: int
    adjudication: bool  # gold labels and the adjudication queue are shown
    source: str
    created_at: float
    updated_at: float


@dataclass
class ImportBatch:
    """What one file holds: items, labels, and the lead's final labels. Built and checked in full
    before anything is written; the store writes it in one transaction."""

    items: list[Item] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    adjudications: list[Adjudication] = field(default_factory=list)
    source: str = ""
    skipped: int = 0  # rows deliberately left out (e.g. a chat turn with no reply), reported

    def __len__(self) -> int:
        return len(self.items) + len(self.labels) + len(self.adjudications)


@dataclass(frozen=True)
class ImportReport:
    items_added: int = 0
    items_changed: int = 0  # same id, new content: version bumped
    items_unchanged: int = 0
    labels_added: int = 0
    labels_updated: int = 0  # same item id + annotator: the new label replaces the old (kept as history)
    labels_unchanged: int = 0
    adjudications: int = 0
    skipped: int = 0

    def describe(self) -> str:
        parts = [f"{self.items_added} items added"]
        if self.items_changed:
            parts.append(f"{self.items_changed} changed (new version)")
        if self.items_unchanged:
            parts.append(f"{self.items_unchanged} unchanged")
        if self.labels_added or self.labels_updated or self.labels_unchanged:
            parts.append(f"labels: {self.labels_added} new, {self.labels_updated} updated, {self.labels_unchanged} unchanged")
        if self.adjudications:
            parts.append(f"{self.adjudications} final labels")
        if self.skipped:
            parts.append(f"{self.skipped} rows skipped")
        return ", ".join(parts)


# -- checks shared by the importers, the store and the page -------------------------------------
def normalize_label(value: object, where: str = "") -> str:
    """One of LABELS from the spellings people and tools use (any case; NEI; true/false)."""
    text = re.sub(r"\s+", " ", str(value or "")).strip().lower()
    if text in _LABEL_ALIASES:
        return _LABEL_ALIASES[text]
    raise AnnotationError(f"{where + ': ' if where else 'label '}{str(value)[:40]!r} is not one of "
                          f"{', '.join(LABELS)} (NEI is accepted for Not Enough Info)")


def check_annotator(name: object, limits: Limits = DEFAULT_LIMITS) -> str:
    """An annotator name: spaces collapsed, lower-cased (so "Ana" and "ana " are one annotator, as
    workspace names are); refused when empty, too long or holding markup characters."""
    text = re.sub(r"\s+", " ", str(name or "")).strip().lower()
    if not text:
        raise AnnotationError("Type an annotator name: labels are kept under it.")
    if len(text) > limits.max_annotator_chars:
        raise AnnotationError(f"An annotator name has at most {limits.max_annotator_chars} characters.")
    if not _ANNOTATOR.match(text) or text.lower() == ADJUDICATED:
        raise AnnotationError(f"Annotator name {text[:40]!r}: use letters, digits, spaces and . @ ' - _ only "
                              f"(and not {ADJUDICATED!r}).")
    return text


def check_task_name(name: object, limits: Limits = DEFAULT_LIMITS) -> str:
    text = re.sub(r"\s+", " ", str(name or "")).strip()
    if not text:
        raise AnnotationError("Give the task a name.")
    if len(text) > limits.max_task_name_chars:
        raise AnnotationError(f"A task name has at most {limits.max_task_name_chars} characters.")
    return text


def check_text(value: object, what: str, max_chars: int, where: str = "", required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, (str, int, float)):
        raise AnnotationError(f"{where}: {what} must be text, not {type(value).__name__}")
    text = str(value)
    if required and not text.strip():
        raise AnnotationError(f"{where}: {what} is empty")
    if len(text) > max_chars:
        raise AnnotationError(f"{where}: {what} has {len(text):,} characters; the limit is {max_chars:,}")
    return text
