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

Unless the two slots are about different things of one kind, which no similarity tells apart
(cosine 0.68 for 'my Zumba classes' / 'my yoga classes'): the same head noun with different kind
words on both sides, or proper names on both sides that share no word ('have years Yamaha FG800' /
'have years my black Fender Stratocaster'). Read with spaCy when the memory has it
(docs/dsm-updates.md, "False prunes").

Two durations that time different activities are different slots too ('a pace of 16 minutes' /
'finished a 5K in 35 minutes').

Then the old value is pruned, as for a functional property.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from rdflib import Graph, URIRef

from core.methods.dsmart.word_lists import VALUE_VERBS
from core.methods.dsmart.vocab import DSM, RELATION_BASE, label_of
from core.text import singular

SCHEDULE = (DSM.frequency, DSM.atTime, DSM.onDay)
_LABEL = re.compile(r"^(?P<what>.*) \((?P<verb>\S+)(?: (?P<about>.*))?\)$")
_WORD = re.compile(r"[a-z0-9]+")
TOTAL_WORDS = frozenset({"total", "count", "tally"})
_STOP = frozenset("a an the my our your user user's s of to in on at for with and".split())


def description(graph: Graph, node) -> str:
    """A slot as a short phrase: 'finish videos', 'wear times Converse', 'head to gym'."""
    label = label_of(graph, node)
    m = _LABEL.match(label)
    verb = m["verb"] if m and m["verb"] not in VALUE_VERBS else ""  # 'be', 'cut': no part of what is counted
    text = f"{verb} {m['what']} {m['about'] or ''}" if m else label
    return re.sub(r"\buser's\b", "my", text).strip()


def content(text: str) -> frozenset[str]:
    return frozenset(singular(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def parts(graph: Graph, node) -> tuple[str, str]:
    """(thing, about) of a slot: the noun phrase it measures or schedules ('Zumba classes', 'hours')
    and, for a count, what its verb is about ('Yamaha FG800'; '' when nothing)."""
    label = label_of(graph, node)
    m = _LABEL.match(label)
    if m:
        return m["what"], m["about"] or ""
    return re.sub(r"^user's\s+", "", label), ""


@dataclass
class SlotMatcher:
    """Same slot by vocabulary (equal content words) or embedding cosine >= threshold; with no
    embedder, by vocabulary only."""

    embedder: object | None = None
    threshold: float = 0.4
    log: list | None = None  # when a list: every candidate pair scored is appended (calibration)
    nlp: object | None = None  # spaCy: tells different things of one kind apart (None: not checked)
    _cache: dict[str, np.ndarray] = field(default_factory=dict)
    _docs: dict[str, object] = field(default_factory=dict)

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

    def different_things(self, a: tuple[str, str], b: tuple[str, str]) -> str:
        """Why two slots ((thing, about) each) are about different things, or '' when they may be
        one: the same head noun with different kind words on both sides ('Zumba classes' / 'yoga
        classes': two kinds of class), or proper names on both sides that share no word ('Yamaha
        FG800' / 'Fender Stratocaster'; 'Zumba classes' / 'attend Hip Hop Abs'). One side without
        kind words or names ('films' / 'MCU films') may be the same thing."""
        if self.nlp is None:
            return ""
        (head_a, mods_a), (head_b, mods_b) = self._noun(a[0]), self._noun(b[0])
        if head_a and head_a == head_b and mods_a and mods_b and not mods_a & mods_b:
            return f"different {head_a}: {' '.join(sorted(mods_a))} / {' '.join(sorted(mods_b))}"
        names_a, names_b = self._names(" ".join(a).strip()), self._names(" ".join(b).strip())
        if names_a and names_b and not names_a & names_b:
            return f"different names: {' '.join(sorted(names_a))} / {' '.join(sorted(names_b))}"
        return ""

    def _doc(self, text: str):
        if text not in self._docs:
            self._docs[text] = self.nlp(text)
        return self._docs[text]

    def _noun(self, text: str) -> tuple[str, frozenset[str]]:
        """(head noun lemma, lemmas of the words before it that name its kind: nouns, names and
        gerunds, as in 'yoga class', 'Zumba class', 'weightlifting class'; not adjectives such as
        'new' or 'total', which describe one thing)."""
        doc = self._doc(text)
        nouns = [t for t in doc if t.pos_ in ("NOUN", "PROPN")]
        if not nouns:
            return "", frozenset()
        head = nouns[-1]
        kinds = (t for t in doc[: head.i] if (t.pos_ in ("NOUN", "PROPN") or t.tag_ == "VBG") and t.lower_ not in _STOP)
        return head.lemma_.lower(), frozenset(t.lemma_.lower() for t in kinds)

    def _names(self, text: str) -> frozenset[str]:
        """The proper-noun words of a slot ('Yamaha', 'FG800'; 'Zumba'): what names one thing."""
        # plural-insensitive, as `content`: a short phrase may tag 'cups' a name, and 'cup' is the same word
        return frozenset(singular(t.lower_) for t in self._doc(text) if t.pos_ == "PROPN") if text else frozenset()


def different_activities(a: tuple[str, str], b: tuple[str, str]) -> str:
    """Why two durations ((unit, about) each) time different things, or '': both say what they time
    and the two share no word ('minutes (maintain pace)' / 'minutes (finish 5K)'; 'hours (finish
    full marathon)' / 'hours (complete miles)'). '5K run' / '5K' may be one run; so may a duration
    that does not say what it times."""
    (_, about_a), (_, about_b) = a, b
    if about_a and about_b and not content(about_a) & content(about_b):
        return f"different activities: {about_a} / {about_b}"
    return ""


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
                if matched and (why := matcher.different_things(parts(old, node), parts(fragment, new))):
                    matched, how = False, why
                if matched and prop == DSM.amount and kind[0] == "unit" \
                        and (why := different_activities(parts(old, node), parts(fragment, new))):
                    matched, how = False, why
                pair = SlotPair(node, new, a, b, score, matched, how)
                if matcher.log is not None:
                    matcher.log.append((pair, prop, stale))
                out.append((pair, prop, stale))
    return out


def slot_updates(old: Graph, fragment: Graph, matcher: SlotMatcher) -> tuple[list, list]:
    """(conflicts, carried): conflicts for the old values of slots the fragment restates (see the
    module docstring), and the old slot's descriptions carried onto the new one. 'I weigh 180
    pounds' then 'I'm down to 172 pounds' are one slot; the new count came with the verb 'be', and
    keeps 'weigh' as well (user --weigh--> the new count), so it is still found as what the user
    weighs. Only the owners' minted relations are carried, and only for counts and measures."""
    from core.methods.dsmart.conflicts import Conflict

    found, carried = [], []
    for pair, prop, stale in candidate_pairs(old, fragment, matcher):
        if not pair.matched:
            continue
        for value in stale:
            why = (f"same slot as the new '{pair.new_text}' ({pair.how}):"
                   f" {label_of(fragment, prop)} {value} is replaced")
            found.append(Conflict((pair.old, prop, value), why, "slot"))
        if prop == DSM.amount:
            shared = owners(old, pair.old) & owners(fragment, pair.new)
            carried += [(s, p, pair.new) for s, p in old.subject_predicates(pair.old)
                        if s in shared and str(p).startswith(RELATION_BASE) and (s, p, pair.new) not in fragment]
    return found, carried


__all__ = ["SlotMatcher", "SlotPair", "candidate_pairs", "description", "slot_updates"]
