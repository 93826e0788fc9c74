"""Data types of the adapted FactScore (KG-augmented dialogue factuality paper, section 4.3).

A response is split into `AtomicFact`s (each keeps the character span it came from); a `FactItem`
is one fact to verify with the dialogue before the response and the evidence passages at hand; a
verifier returns one `Verdict` per item: Supports / Refutes / Not Enough Info, a confidence, the
three label probabilities and the evidence it used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SUPPORTS, REFUTES, NEI = "Supports", "Refutes", "Not Enough Info"
LABELS = (SUPPORTS, REFUTES, NEI)  # the order of every probability vector and confusion matrix
# Spellings of the paper's prompt (true / false / no enough information) and of other datasets.
_ALIASES = {
    "supports": SUPPORTS, "supported": SUPPORTS, "support": SUPPORTS, "true": SUPPORTS, "entailment": SUPPORTS,
    "refutes": REFUTES, "refuted": REFUTES, "refute": REFUTES, "false": REFUTES, "contradiction": REFUTES,
    "not enough info": NEI, "not enough information": NEI, "no enough information": NEI,
    "no enough info": NEI, "nei": NEI, "neutral": NEI, "unverifiable": NEI,
}


def normalise_label(raw: str) -> str:
    """One of LABELS from any known spelling; ValueError otherwise."""
    key = " ".join(str(raw).strip().strip(".\"'").lower().replace("_", " ").split())
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(f"unknown factuality label {raw!r}; expected one of {LABELS} (or true / false / no enough information)")


@dataclass(frozen=True)
class AtomicFact:
    text: str
    start: int = -1  # character span in the response it was split from; -1 when unknown (LLM splitter
    end: int = -1  # output that cannot be located, or facts given by a dataset)
    sentence: int = -1  # index of the source sentence in the response


@dataclass(frozen=True)
class Passage:
    """A piece of evidence: a Wikipedia passage, a knowledge triple rendered as text, a memory item."""

    text: str
    title: str = ""
    source: str = ""  # id of the passage, triple or memory item
    kind: str = "passage"  # passage | triple | memory | history


@dataclass(frozen=True)
class FactItem:
    """One atomic fact to verify. `history` is the dialogue before the response as (speaker, text),
    oldest first, the user's query it answers last; `evidence` may be empty (then only the history
    can support the fact)."""

    fact: str
    history: tuple[tuple[str, str], ...] = ()
    evidence: tuple[Passage, ...] = ()
    response: str = ""
    id: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def query(self) -> str:
        return self.history[-1][1] if self.history else ""


@dataclass(frozen=True)
class UsedEvidence:
    """A passage window a verifier looked at, with what it found there."""

    text: str
    title: str = ""
    source: str = ""
    score: float = 0.0  # selection score (higher = closer to the fact)
    p_entailment: float | None = None
    p_contradiction: float | None = None


@dataclass(frozen=True)
class Verdict:
    label: str  # one of LABELS
    confidence: float  # probability of `label`
    probs: tuple[float, float, float]  # P(Supports), P(Refutes), P(Not Enough Info)
    evidence: tuple[UsedEvidence, ...] = ()
    verifier: str = ""
    seconds: float = 0.0
    signals: dict[str, float] = field(default_factory=dict)  # the features a classifier read, for display
    note: str = ""  # why, when a rule decided (e.g. "no evidence and no history")

    def to_dict(self) -> dict:
        return asdict(self)
