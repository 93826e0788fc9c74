"""The reasoner's findings in words (issue 57).

After each round the memory runs an OWL-RL closure over the part of the graph the round touched
(memory.py); what owlrl reports is a message about IRIs ("Disjoint classes ...#Agent and ...#Place
have a common individual .../entity/murano") that a person cannot act on. Here each message becomes
a `Finding`: a sentence saying what was read ("'Murano' was read both as a person and as a place,
from round 1: ...") and the facts that clash, each with the words and round it came from, so the
reader knows which fact to fix or forget. The page renders them (escaped); this module knows
nothing of the UI.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import RDF, Graph, URIRef

from core.methods.dsmart.conflicts import superclasses
from core.methods.dsmart.recall import source_index, source_sentence
from core.methods.dsmart.speakers import speakers
from core.methods.dsmart.vocab import DSM, label_of

Triple = tuple
_DISJOINT_CLASSES = re.compile(r"Disjoint classes (\S+) and (\S+) have a common individual (\S+)")
_DISJOINT_PROPERTIES = re.compile(r"Erroneous usage of disjoint properties (\S+) and (\S+) on (\S+) and (\S+)")
# the top-level classes in words: what a thing was read as
KIND_WORDS = {DSM.Agent: "a person or an organisation", DSM.Person: "a person", DSM.Speaker: "a person",
              DSM.Organization: "an organisation", DSM.Place: "a place", DSM.Thing: "a thing",
              DSM.Quantity: "a quantity", DSM.Event: "an event", DSM.TimeExpression: "a time"}


@dataclass(frozen=True)
class ClashingFact:
    """One fact of a finding, with where it came from: the fact to fix or forget."""

    triple: Triple
    fact: str  # 'Murano | is a | Person', labels only
    sentence: str  # the words of its round that hold it ("" when none does)
    speaker: str  # user | assistant | import
    round: int | None  # counted from 1, as the page's slider; None: no recorded round asserted it


@dataclass(frozen=True)
class Finding:
    kind: str  # "types" (one thing read as two kinds) | "relations" (two relations that exclude each other) | "other"
    text: str  # what a person reads
    facts: tuple[ClashingFact, ...]  # the facts that clash, each to fix or forget
    message: str  # the reasoner's own words, for whoever needs them


def findings(graph: Graph, history: Sequence, errors: Sequence[str]) -> list[Finding]:
    """The reasoner's `errors` (a round's `TurnRecord.errors`) in words, about `graph` (the graph
    after that round) and the rounds in `history` that asserted its facts."""
    index, spoken = source_index(history), speakers(history)
    out = []
    for message in errors:
        if m := _DISJOINT_CLASSES.search(message):
            out.append(_types(graph, index, spoken, URIRef(m.group(3)), (URIRef(m.group(1)), URIRef(m.group(2))), message))
        elif m := _DISJOINT_PROPERTIES.search(message):
            p, q, s, o = (URIRef(g) for g in m.groups())
            out.append(_relations(graph, index, spoken, (s, p, o), (s, q, o), message))
        else:
            out.append(Finding("other", "The consistency check found facts that cannot all be true; its message "
                               "is below.", (), message))
    return out


def _types(graph: Graph, index, spoken, node: URIRef, classes: tuple[URIRef, URIRef], message: str) -> Finding:
    name = label_of(graph, node)
    clashing: list[ClashingFact] = []
    kinds = []
    for cls in classes:
        types = sorted(t for t in graph.objects(node, RDF.type) if cls in superclasses(graph, t))
        kinds.append(_kind(graph, types, cls))
        clashing += [_sourced(graph, index, spoken, (node, RDF.type, t)) for t in types]
    rounds = sorted({f.round for f in clashing if f.round is not None})
    text = f"'{name}' was read both as {kinds[0]} and as {kinds[1]}, which cannot both be true"
    text = _end(text + _from(clashing, rounds)) + "Fix or forget the fact that is wrong:"
    return Finding("types", text, tuple(clashing), message)


def _kind(graph: Graph, types: Sequence, cls: URIRef) -> str:
    """What a thing was read as: 'a person' for a top-level class, 'a city (a place)' for a class
    named after a noun."""
    direct = [t for t in types if t in KIND_WORDS]
    if direct:
        return KIND_WORDS[direct[0]]
    nouns = [label_of(graph, t).lower() for t in types]
    top = KIND_WORDS.get(cls, label_of(graph, cls).lower())
    return f"{_article(nouns[0])} ({top})" if nouns else top


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _relations(graph: Graph, index, spoken, one: Triple, other: Triple, message: str) -> Finding:
    clashing = [_sourced(graph, index, spoken, t) for t in (one, other) if t in graph]
    rounds = sorted({f.round for f in clashing if f.round is not None})
    said = [" ".join(label_of(graph, t) for t in triple) for triple in (one, other)]
    text = _end(f"The memory holds both '{said[0]}' and '{said[1]}', which cannot both be true"
                f"{_from(clashing, rounds)}") + "Fix or forget the fact that is wrong:"
    return Finding("relations", text, tuple(clashing), message)


def _end(text: str) -> str:
    """A sentence's end before the next: a quotation ends it already."""
    return text + " " if text.endswith('"') else text + ". "


def _from(facts: Sequence[ClashingFact], rounds: Sequence[int]) -> str:
    if not rounds:
        return ""
    where = f"round {rounds[0]}" if len(rounds) == 1 else "rounds " + " and ".join(map(str, rounds))
    sentences = list(dict.fromkeys(f.sentence for f in facts if f.sentence))
    return f", from {where}: " + " ".join(f'"{x}"' for x in sentences) if sentences else f", from {where}"


def _sourced(graph: Graph, index, spoken, triple: Triple) -> ClashingFact:
    s, p, o = triple
    fact = " | ".join((label_of(graph, s), "is a" if p == RDF.type else label_of(graph, p), label_of(graph, o)))
    record = index.get(triple)
    if record is None:
        return ClashingFact(triple, fact, "", spoken.get(triple, "import"), None)
    found = source_sentence(graph, record, triple)
    return ClashingFact(triple, fact, found[1] if found else "", spoken.get(triple, "user"), record.turn_index + 1)


__all__ = ["ClashingFact", "Finding", "findings"]
