"""Slot conflicts: a new value for a single-valued slot that the old graph names differently.

The functional rule (conflicts.functional_conflicts) fires only when old and new values sit on the
same node and property. People restate a count or a habit in other words: "I've finished 10
videos" then "having watched 15 Crash Course videos"; "my gym sessions, which I go to at 7 pm" then
"the gym, which is usually at 6 pm". Two slots are the same when

- they belong to the same owner and measure the same kind (a Quantity's counted class, or the
  time unit of a duration), or are the same property (frequency, time, day) of an activity of the
  same owner; and
- their descriptions match: the same content words (the vocabulary match), or an embedding cosine
  at or above a threshold calibrated on the dev split (docs/dsm-updates.md); or the new count is
  a running total ("which brings my total species count to 32"), which restates every earlier
  count of its kind by its owner ("I've managed to spot 27 different species").

Then the old value is pruned, as for a functional property.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from rdflib import Graph, URIRef

from core.methods.dsmart.vocab import DSM, RELATION_BASE, label_of

SCHEDULE = (DSM.frequency, DSM.atTime, DSM.onDay)
_LABEL = re.compile(r"^(?P<what>.*) \((?P<verb>\S+)(?: (?P<about>.*))?\)$")
_WORD = re.compile(r"[a-z0-9]+")
TOTAL_WORDS = frozenset({"total", "count", "tally"})
_STOP = frozenset("a an the my our your user user's s of to in on at for with and".split())


def description(graph: Graph, node) -> str:
    """A slot as a short phrase: 'finish videos', 'wear times Converse', 'head to gym'."""
    label = label_of(graph, node)
    m = _LABEL.match(label)
    text = f"{m['verb']} {m['what']} {m['about'] or ''}" if m else label
    return re.sub(r"\buser's\b", "my", text).strip()


def content(text: str) -> frozenset[str]:
    return frozenset(w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in _STOP)


@dataclass
class SlotMatcher:
    """Same slot by vocabulary (equal content words) or embedding cosine >= threshold; with no
    embedder, by vocabulary only."""

    embedder: object | None = None
    threshold: float = 0.4
    log: list | None = None  # when a list: every candidate pair scored is appended (calibration)
    _cache: dict[str, np.ndarray] = field(default_factory=dict)

    def similarity(self, a: str, b: str) -> float:
        if content(a) == content(b):
            return 1.0
        if self.embedder is None:
            return 0.0
        missing = [t for t in (a, b) if t not in self._cache]
        if missing:
            for text, vec in zip(missing, self.embedder.encode(missing), strict=True):
                self._cache[text] = vec
        return float(np.dot(self._cache[a], self._cache[b]))

    def same(self, a: str, b: str) -> tuple[bool, float]:
        score = self.similarity(a, b)
        return score >= self.threshold, score


def running_total(text: str) -> bool:
    """'count my total species': the owner's running total of the kind, which restates any earlier
    count of that kind by that owner, whatever verb counted it ('spot different species')."""
    return bool(content(text) & TOTAL_WORDS)


@dataclass(frozen=True)
class SlotPair:
    """A candidate pair (old node, new node) of the same owner and kind, with its score."""

    old: URIRef
    new: URIRef
    old_text: str
    new_text: str
    score: float
    matched: bool
    how: str = ""  # why matched: same words, the similarity, or the running-total rule


def owners(graph: Graph, node) -> set:
    """Who a Quantity or activity belongs to: subjects that link to it by a minted relation, or
    by dsm:does / dsm:has."""
    out = set()
    for s, p in graph.subject_predicates(node):
        if str(p).startswith(RELATION_BASE) or p in (DSM.does, DSM.has):
            out.add(s)
    return out


def kind_of(graph: Graph, q) -> tuple:
    """What a Quantity measures: its time unit for a duration, else its counted class."""
    unit = graph.value(q, DSM.unit)
    return ("unit", str(unit)) if unit is not None else ("kind", graph.value(q, DSM.ofKind))


def candidate_pairs(old: Graph, fragment: Graph, matcher: SlotMatcher) -> list[tuple[SlotPair, object, list]]:
    """(pair, property, stale values) for each old slot that a new slot of the same owner and kind
    could restate with another value."""
    out = []
    for prop in (DSM.amount, *SCHEDULE):
        for new in set(fragment.subjects(prop)):
            values = set(fragment.objects(new, prop))
            who = owners(fragment, new)
            kind = kind_of(fragment, new) if prop == DSM.amount else None
            if not who:
                continue
            for node in set(old.subjects(prop)):
                if node == new or not (owners(old, node) & who):
                    continue
                if prop == DSM.amount and kind_of(old, node) != kind:
                    continue
                stale = [v for v in old.objects(node, prop) if v not in values and (node, prop, v) not in fragment]
                if not stale:
                    continue
                a, b = description(old, node), description(fragment, new)
                matched, score = matcher.same(a, b)
                how = "same words" if score == 1.0 else f"similarity {score:.2f}"
                if not matched and prop == DSM.amount and kind[0] == "kind" and running_total(b):
                    matched, how = True, "the new count is a running total"
                pair = SlotPair(node, new, a, b, score, matched, how)
                if matcher.log is not None:
                    matcher.log.append((pair, prop, stale))
                out.append((pair, prop, stale))
    return out


def slot_conflicts(old: Graph, fragment: Graph, matcher: SlotMatcher):
    """Conflicts for the old values of slots the fragment restates (see the module docstring)."""
    from core.methods.dsmart.conflicts import Conflict

    found = []
    for pair, prop, stale in candidate_pairs(old, fragment, matcher):
        if not pair.matched:
            continue
        for value in stale:
            why = (f"same slot as the new '{pair.new_text}' ({pair.how}):"
                   f" {label_of(fragment, prop)} {value} is replaced")
            found.append(Conflict((pair.old, prop, value), why, "slot"))
    return found


__all__ = ["SlotMatcher", "SlotPair", "candidate_pairs", "description", "slot_conflicts"]
