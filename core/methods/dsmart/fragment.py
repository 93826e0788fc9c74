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
    DSM,
    RELATION_BASE,
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


class FragmentBuilder:
    def __init__(self) -> None:
        self.graph = bind_prefixes(Graph())
        self.speakers_used: set[URIRef] = set()

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
