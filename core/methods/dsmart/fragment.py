"""Building OWL fragments: individuals with labels and classes, minted relations with their kind.

Both extractors (spaCy and LLM) emit through `FragmentBuilder`, so every fragment has the same
shape: no blank nodes (IRIs are deterministic, so fragments merge by identity), every individual an
`owl:NamedIndividual` with an `rdfs:label`, every minted class aligned under a top-level DSM class,
every minted relation declared an object or datatype property.
"""

from __future__ import annotations

from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef

from core.methods.dsmart.vocab import (
    ASSISTANT,
    DISJOINT_TOP,
    DSM,
    RELATION_BASE,
    TOP_CLASSES,
    USER,
    bind_prefixes,
    negated,
    noun_class,
    relation,
)

# Triples whose predicate is one of these describe the schema or names, not dialogue facts.
SCHEMA_PREDICATES = frozenset({RDFS.label, RDFS.subClassOf, DSM.negationOf, OWL.disjointWith})
SCHEMA_OBJECTS = frozenset({OWL.NamedIndividual, OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty,
                            OWL.FunctionalProperty, OWL.AnnotationProperty})


def is_fact(triple) -> bool:
    """A dialogue fact (shown in the UI, checked for conflicts), not schema or labelling."""
    _, p, o = triple
    return p not in SCHEMA_PREDICATES and not (p == RDF.type and o in SCHEMA_OBJECTS)


AGENTS = frozenset({DSM.Agent, DSM.Person, DSM.Organization, DSM.Speaker})


def top_classes(graph: Graph, node, known: Graph | None = None) -> set[URIRef]:
    """The top-level DSM classes `node` is typed by in `graph` (and in `known`, the memory so far),
    directly or through a minted noun class ('Murano | type | island', island under Place)."""
    graphs = [g for g in (graph, known) if g is not None]
    out = set()
    for g in graphs:
        for cls in g.objects(node, RDF.type):
            if cls in TOP_CLASSES or cls in AGENTS:
                out.add(cls)
            for g2 in graphs:
                out |= {c for c in g2.objects(cls, RDFS.subClassOf) if c in TOP_CLASSES or c in AGENTS}
    return out


def disjoint(a: URIRef, b: URIRef) -> bool:
    """Whether two top-level classes share no individual (the ontology's disjointness axioms)."""
    if a == b:
        return False
    if {a, b} == {DSM.Person, DSM.Organization}:
        return True
    a, b = (DSM.Agent if c in AGENTS else c for c in (a, b))
    return a != b and a in DISJOINT_TOP and b in DISJOINT_TOP


class FragmentBuilder:
    def __init__(self) -> None:
        self.graph = bind_prefixes(Graph())
        self.speakers_used: set[URIRef] = set()
        self.guesses: list[tuple[URIRef, URIRef]] = []  # (individual, top class) read from a name's NER label

    def guess(self, iri: URIRef, label: str, cls: URIRef | None) -> URIRef:
        """A named individual whose top class only the named-entity recogniser says (`cls`, None when
        it says none). The small model's labels are often wrong ('Murano is an island': PERSON;
        'my sister Nadia': GPE), so the guess is kept only if nothing surer types it otherwise
        (`settle`): a noun it is, a place it is lived in, the memory's earlier type."""
        self.individual(iri, label)
        if cls is not None:
            self.guesses.append((iri, cls))
        return iri

    def settle(self, known: Graph | None = None) -> Graph:
        """The fragment with each guessed type that no surer type of the same individual (in this
        fragment or in `known`, the memory so far) is disjoint with."""
        for iri, cls in self.guesses:
            if not any(disjoint(cls, other) for other in top_classes(self.graph, iri, known)):
                self.graph.add((iri, RDF.type, cls))
        self.guesses = []
        return self.graph

    def speaker(self, iri: URIRef) -> URIRef:
        name = "user" if iri == USER else "assistant" if iri == ASSISTANT else str(iri)
        self.individual(iri, name, DSM.Speaker)
        return iri

    def individual(self, iri: URIRef, label: str, *classes: URIRef) -> URIRef:
        g = self.graph
        g.add((iri, RDF.type, OWL.NamedIndividual))
        if label and g.value(iri, RDFS.label) is None:
            g.add((iri, RDFS.label, Literal(label)))
        for c in classes:
            g.add((iri, RDF.type, c))
        return iri

    def noun_class(self, lemma: str, top: URIRef) -> URIRef:
        c = noun_class(lemma)
        self.graph.add((c, RDF.type, OWL.Class))
        self.graph.add((c, RDFS.label, Literal(lemma)))
        self.graph.add((c, RDFS.subClassOf, top))
        return c

    def relation(self, lemma: str, *, datatype: bool = False, negative: bool = False) -> URIRef:
        p = relation(lemma)
        if negative:
            p = self._negate(p)
        kind = OWL.DatatypeProperty if datatype else OWL.ObjectProperty
        self.graph.add((p, RDF.type, kind))
        self.graph.add((p, RDFS.label, Literal(str(p)[len(RELATION_BASE) :].replace("_", " "))))
        return p

    def _negate(self, p: URIRef) -> URIRef:
        n = negated(p)
        self.graph.add((n, DSM.negationOf, p))
        return n

    def label(self, iri) -> str:
        """The label given to an individual of this fragment ('' when none)."""
        value = self.graph.value(iri, RDFS.label)
        return str(value) if value is not None else str(iri).rsplit("/", 1)[-1]

    def fact(self, s, p, o) -> None:
        self.graph.add((s, p, o))

    def __len__(self) -> int:
        return len(self.graph)
