"""Adapted FactScore with NEIP (KG-augmented dialogue factuality paper, section 4.3, Tables 1, 7, 8).

Each atomic fact of a response is judged Supports / Refutes / Not Enough Info against the evidence
at hand and the dialogue history. FactScore = share of a response's facts labelled Supports (higher
is better); NEIP = share labelled Not Enough Info (lower is better: more of the response can be
checked). A response without facts has neither (None, and `note` says so).

Aggregation: per response as above; per dialogue the mean over its responses that have facts; per
run the mean over dialogues, with a percentile-bootstrap 95% interval over dialogues (the unit that
was sampled). The paper pools facts per response the same way (FActScore averages responses).

The one entry point other parts call (the Metrics page, benchmarks, the Annotation page):
`verify_facts(items, verifier) -> list[Verdict]` (core/metrics/verifier.py), with a verifier from
`make_verifier` (core/metrics/fact_verifiers.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from core.metrics.fact_types import NEI, REFUTES, SUPPORTS, FactItem, Passage, Verdict
from core.metrics.report import bootstrap_ci
from core.metrics.verifier import Verifier, verify_facts

# -- FactScore and NEIP ------------------------------------------------------------------------
@dataclass(frozen=True)
class ResponseFacts:
    """One response's facts and their labels, with its scores."""

    labels: tuple[str, ...]
    response_id: str = ""
    dialogue_id: str = ""

    @property
    def n_facts(self) -> int:
        return len(self.labels)

    @property
    def factscore(self) -> float | None:
        return self.labels.count(SUPPORTS) / len(self.labels) if self.labels else None

    @property
    def neip(self) -> float | None:
        return self.labels.count(NEI) / len(self.labels) if self.labels else None

    @property
    def refuted(self) -> float | None:
        return self.labels.count(REFUTES) / len(self.labels) if self.labels else None

    @property
    def note(self) -> str:
        return "" if self.labels else "no atomic facts: FactScore and NEIP are undefined for this response"


@dataclass(frozen=True)
class FactScoreSummary:
    factscore: float | None
    neip: float | None
    factscore_ci95: tuple[float, float]
    neip_ci95: tuple[float, float]
    n_responses: int
    n_scored_responses: int  # with at least one fact
    n_dialogues: int
    n_facts: int
    per_dialogue: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def as_dict(self, prefix: str = "") -> dict:
        return {
            f"{prefix}factscore": self.factscore, f"{prefix}neip": self.neip,
            f"{prefix}factscore_ci95": list(self.factscore_ci95), f"{prefix}neip_ci95": list(self.neip_ci95),
            f"{prefix}n_responses": self.n_responses, f"{prefix}n_scored_responses": self.n_scored_responses,
            f"{prefix}n_dialogues": self.n_dialogues, f"{prefix}n_facts": self.n_facts,
        }


def group_responses(rows: Sequence[dict], label_key: str = "label") -> list[ResponseFacts]:
    """ResponseFacts from per-fact rows with `response_id`, `dialogue_id` and a label; a row with
    `label` None stands for a response without facts (kept, so it counts as unscored)."""
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        key = (str(row.get("dialogue_id", "")), str(row["response_id"]))
        labels = grouped[key]
        if row.get(label_key) is not None:
            labels.append(row[label_key])
    return [ResponseFacts(tuple(labels), rid, did) for (did, rid), labels in grouped.items()]


def summarise_factscore(responses: Sequence[ResponseFacts], resamples: int = 1000, seed: int = 0) -> FactScoreSummary:
    """Per-dialogue means of response FactScore/NEIP, their mean, and bootstrap 95% intervals."""
    by_dialogue: dict[str, list[ResponseFacts]] = defaultdict(list)
    for r in responses:
        by_dialogue[r.dialogue_id or r.response_id].append(r)
    per_dialogue = {}
    for did, rs in by_dialogue.items():
        scored = [r for r in rs if r.n_facts]
        per_dialogue[did] = {
            "factscore": float(np.mean([r.factscore for r in scored])) if scored else None,
            "neip": float(np.mean([r.neip for r in scored])) if scored else None,
            "n_responses": len(rs), "n_facts": sum(r.n_facts for r in rs),
        }
    fs = [d["factscore"] for d in per_dialogue.values() if d["factscore"] is not None]
    ne = [d["neip"] for d in per_dialogue.values() if d["neip"] is not None]
    return FactScoreSummary(
        factscore=float(np.mean(fs)) if fs else None,
        neip=float(np.mean(ne)) if ne else None,
        factscore_ci95=bootstrap_ci(fs, resamples, seed),
        neip_ci95=bootstrap_ci(ne, resamples, seed),
        n_responses=len(responses),
        n_scored_responses=sum(1 for r in responses if r.n_facts),
        n_dialogues=len(per_dialogue),
        n_facts=sum(r.n_facts for r in responses),
        per_dialogue=per_dialogue,
    )


# -- facts of a response, ready to verify -------------------------------------------------------
def facts_to_items(facts, history: Sequence[tuple[str, str]], evidence: Sequence[Passage] = (), response: str = "",
                   id_prefix: str = "") -> list[FactItem]:
    """FactItems for the atomic facts of one response, sharing its history and evidence."""
    return [FactItem(f.text, tuple(history), tuple(evidence), response, f"{id_prefix}{i}") for i, f in enumerate(facts)]


# -- scoring responses (the Metrics page, mtbench --factscore, opendialkg-response) --------------
@dataclass(frozen=True)
class ScoredFact:
    fact: "object"  # fact_types.AtomicFact (text and source span)
    verdict: Verdict


@dataclass(frozen=True)
class ResponseScore:
    """The facts of one response with their verdicts. `factscore` / `neip` are None when the
    response has no atomic facts (`note` says so); `truncated` when the splitter bounded its work."""

    response: str
    facts: tuple[ScoredFact, ...]
    truncated: bool = False
    evidence_kind: str = "history"  # passage | triple | memory | history: what the facts were checked against

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(f.verdict.label for f in self.facts)

    @property
    def factscore(self) -> float | None:
        return ResponseFacts(self.labels).factscore

    @property
    def neip(self) -> float | None:
        return ResponseFacts(self.labels).neip

    @property
    def note(self) -> str:
        return ResponseFacts(self.labels).note

    def as_dict(self) -> dict:
        return {
            "factscore": self.factscore, "neip": self.neip, "n_facts": len(self.facts), "note": self.note,
            "truncated": self.truncated, "evidence_kind": self.evidence_kind,
            "facts": [{"fact": f.fact.text, "start": f.fact.start, "end": f.fact.end, "label": f.verdict.label,
                       "confidence": round(f.verdict.confidence, 4), "note": f.verdict.note,
                       "evidence": [{"text": u.text, "title": u.title, "source": u.source, "score": u.score}
                                    for u in f.verdict.evidence[:3]]} for f in self.facts],
        }


def passages_from_evidence(evidence) -> tuple[Passage, ...]:
    """core.dialogue.Evidence items (what a method retrieved) as Passages."""
    return tuple(Passage(text=e.text, source=str(e.source), kind=getattr(e, "kind", "memory") or "memory")
                 for e in evidence or () if str(e.text).strip())


def score_response(response: str, history: Sequence[tuple[str, str]], verifier: Verifier, splitter,
                   evidence: Sequence[Passage] = (), response_id: str = "") -> ResponseScore:
    """Split `response` into atomic facts and verify each against `evidence` (passages given with
    the item, or triples / memory the method retrieved) and the dialogue `history` ((speaker, text)
    pairs, oldest first, the user's query last). With neither, each fact is Not Enough Info."""
    split = splitter.split(response or "")
    items = facts_to_items(split.facts, history, evidence, response or "", f"{response_id}:" if response_id else "")
    verdicts = verify_facts(items, verifier) if items else []
    kind = evidence[0].kind if evidence else "history"
    return ResponseScore(response or "", tuple(ScoredFact(f, v) for f, v in zip(split.facts, verdicts)), split.truncated, kind)


def score_turns(turns, verifier: Verifier, splitter, max_history: int = 12, skip_before: int = 0) -> list[tuple[int, ResponseScore]]:
    """(index, score) for each assistant turn of a stored conversation (core.store.StoredTurn-like:
    `.turn` with role/text, `.reply` with `.evidence` or None), each against the turns before it
    and the evidence its method retrieved. Turns before position `skip_before` are history only."""
    out = []
    for i, stored in enumerate(turns):
        turn = stored.turn
        if turn.role != "assistant" or i < skip_before:
            continue
        history = [(t.turn.role, t.turn.text) for t in turns[max(0, i - max_history) : i]]
        evidence = passages_from_evidence(getattr(stored.reply, "evidence", ()) if stored.reply else ())
        out.append((getattr(stored, "index", i), score_response(turn.text, history, verifier, splitter, evidence, str(i))))
    return out


def default_splitter(llm=None, strong: bool = False):
    """The LLM splitter (the paper's prompt) for a strong endpoint, else the rule splitter."""
    from core.metrics.atomic_facts import LLMFactSplitter, RuleFactSplitter
    from core.resources import load_spacy

    rules = RuleFactSplitter(load_spacy())
    return LLMFactSplitter(llm, rules) if (llm is not None and strong) else rules
