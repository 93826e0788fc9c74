"""HybriDialogue facts annotated by humans (FineDialFact's format; ../shared/data/hybridialogue/).

A JSON list, one object per atomic fact: `history` ([speaker, text] pairs), `A` (the user query),
`response` (the response the fact was split from), `type` (who wrote it: an LLM, or "plain" = the
gold turn), `atomic_fact`, `evidence` (retrieved Wikipedia passages), `isFactualClaim` and the human
`factualLabel` (Supports / Refutes / Not Enough Info).

The annotators' `selected` flags on passages (and `selectedEvidence`) are human labels: a passage is
selected almost only when the fact is Supports or Refutes. They are kept on the record for
analysis but never put in the `FactItem` a verifier sees, or the verifier would read the answer.
Malformed objects are skipped and counted, not fatal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.data.jsonfile import load_json_layout
from core.metrics.fact_types import FactItem, Passage, normalise_label

LAYOUT = "HybriDialogue annotated-facts (FineDialFact)"


@dataclass(frozen=True)
class AnnotatedFact:
    item: FactItem  # what a verifier sees
    label: str  # the human label, one of fact_types.LABELS
    response_type: str  # "Meta-Llama-3.1-8B-Instruct" | "flan-t5-xxl" | "plain" | ...
    verifiable: bool | None  # the annotators' isFactualClaim
    context_key: str  # history + query: facts of one dialogue turn share it (the dev / held-out split's unit)
    selected_sources: tuple[str, ...] = ()  # passages the annotators marked (analysis only)
    dialogue_key: str = ""  # the dialogue's first user turn: all turns of one dialogue share it (the unit of CV folds)


@dataclass(frozen=True)
class HybriFacts:
    facts: list[AnnotatedFact]
    skipped: int  # malformed objects
    reasons: tuple[str, ...] = ()  # the first few skip reasons


def _history(raw) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in raw or ():
        speaker, text = pair
        out.append(("user" if str(speaker).strip().upper() == "A" else "assistant", str(text).strip()))
    return tuple(out)


def parse_fact(obj: dict) -> AnnotatedFact:
    """One object of the file; KeyError / TypeError / ValueError when malformed."""
    if not isinstance(obj, dict):
        raise TypeError(f"an item must be an object, got {type(obj).__name__}")
    fact = str(obj["atomic_fact"]).strip()
    if not fact:
        raise ValueError("empty atomic_fact")
    query = str(obj["A"]).strip()
    history = _history(obj.get("history")) + ((("user", query),) if query else ())
    passages, selected = [], []
    for p in obj.get("evidence") or ():
        passage = Passage(text=str(p["text"]).strip(), title=str(p.get("title", "")).strip(), source=str(p.get("id", "")))
        passages.append(passage)
        if p.get("selected"):
            selected.append(passage.source)
    item = FactItem(fact=fact, history=history, evidence=tuple(passages), response=str(obj.get("response", "")),
                    id=str(obj.get("id", "")))
    claim = obj.get("isFactualClaim")
    return AnnotatedFact(
        item=item,
        label=normalise_label(obj["factualLabel"]),
        response_type=str(obj.get("type", "")),
        verifiable=None if claim is None else str(claim).strip().lower() == "verifiable",
        context_key=repr((history,)),
        selected_sources=tuple(selected),
        dialogue_key=history[0][1] if history else "",
    )


def _parse(data) -> HybriFacts:
    if not isinstance(data, list):
        raise TypeError("a JSON list of fact objects")
    facts, reasons = [], []
    for i, obj in enumerate(data):
        try:
            facts.append(parse_fact(obj))
        except (KeyError, TypeError, ValueError) as err:
            reasons.append(f"item {i}: {type(err).__name__} {err}")
    return HybriFacts(facts, len(reasons), tuple(reasons[:10]))


def load_hybridialogue_facts(path: str | Path, limit: int | None = None) -> HybriFacts:
    """All well-formed facts of the file (the first `limit`), and how many objects were skipped."""
    loaded = load_json_layout(path, _parse, LAYOUT)
    if limit is not None:
        return HybriFacts(loaded.facts[:limit], loaded.skipped, loaded.reasons)
    return loaded
