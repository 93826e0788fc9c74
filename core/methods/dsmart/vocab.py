"""The dialogue ontology: every IRI the DSM uses comes from this module.

`DSM` is a closed namespace (rdflib `DefinedNamespace`): a typo such as `DSM.liveIn` raises instead
of silently minting a new term. Terms learnt from the dialogue itself (individuals, classes named
after nouns, relations named after verbs) are minted by the functions below in three sub-namespaces,
the way FRED mints `fred:` terms next to its fixed vocabulary; only these functions create them, so
the same words always give the same IRI across turns (that is how entities are resolved).

`ontology()` is the TBox: the top-level classes (pairwise disjoint), the fixed properties, which of
them are functional (single-valued: a second value is a conflict), and the negated-relation pairs.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.exceptions import ParserError
from rdflib.namespace import DefinedNamespace

BASE = "http://dialogue-workbench.org/dsm#"
ENTITY_BASE = "http://dialogue-workbench.org/dsm/entity/"
CLASS_BASE = "http://dialogue-workbench.org/dsm/class/"
RELATION_BASE = "http://dialogue-workbench.org/dsm/relation/"
TURN_BASE = "http://dialogue-workbench.org/dsm/turn/"


class DSM(DefinedNamespace):
    """Fixed classes and properties of the dialogue ontology."""

    _NS = Namespace(BASE)
    _fail = True

    # top-level classes (the DUL-like alignment targets of minted noun classes)
    Agent: URIRef  # something that acts: people, speakers, organisations
    Person: URIRef
    Speaker: URIRef  # a participant of the dialogue (the user, the assistant)
    Organization: URIRef
    Place: URIRef
    Thing: URIRef  # a physical or abstract object
    Quantity: URIRef  # a counted amount: "25 postcards added"
    Event: URIRef
    TimeExpression: URIRef
    # object properties
    livesIn: URIRef  # functional: where someone lives now
    storedAt: URIRef  # functional: where a thing is kept now
    hasSpouse: URIRef  # functional (at a time)
    birthPlace: URIRef  # functional
    worksFor: URIRef  # not functional (the paper's prompt: several employers are fine)
    has: URIRef  # possession / part ("my dog")
    likes: URIRef
    dislikes: URIRef
    ofKind: URIRef  # a Quantity's counted class
    relatedTo: URIRef
    does: URIRef  # someone does an activity (a habit, a class they attend): the node that carries its schedule
    # datatype properties
    name: URIRef  # functional
    age: URIRef  # functional
    birthDate: URIRef  # functional
    amount: URIRef  # functional: a Quantity has one value at a time
    value: URIRef  # functional: "my favourite food is pizza" (the thing's current value)
    quality: URIRef  # "X is happy": not functional
    date: URIRef
    unit: URIRef  # functional: what a Quantity's amount measures in ("month", "pound", "USD")
    frequency: URIRef  # functional: how often an activity happens ("every week", "three times a week")
    atTime: URIRef  # functional: xsd:time of day an activity happens
    onDay: URIRef  # functional: day of the week an activity happens ("Friday")
    # annotations
    negationOf: URIRef  # rel:not_like dsm:negationOf rel:like
    statement: URIRef  # the turn's statement (on the turn's named graph)
    saidBy: URIRef  # who stated a turn graph's triples: ent:user or ent:assistant (on the named graph)
    turnIndex: URIRef


USER = URIRef(ENTITY_BASE + "user")
ASSISTANT = URIRef(ENTITY_BASE + "assistant")

TOP_CLASSES = (DSM.Person, DSM.Organization, DSM.Place, DSM.Thing, DSM.Quantity, DSM.Event, DSM.TimeExpression)
# Person is a kind of Agent, and so is Organization; the rest of the top level is pairwise disjoint.
DISJOINT_TOP = (DSM.Agent, DSM.Place, DSM.Thing, DSM.Quantity, DSM.Event, DSM.TimeExpression)
FUNCTIONAL_OBJECT = (DSM.livesIn, DSM.storedAt, DSM.hasSpouse, DSM.birthPlace)
FUNCTIONAL_DATA = (DSM.name, DSM.age, DSM.birthDate, DSM.amount, DSM.value, DSM.unit, DSM.frequency, DSM.atTime,
                   DSM.onDay)
OBJECT_PROPERTIES = FUNCTIONAL_OBJECT + (DSM.worksFor, DSM.has, DSM.likes, DSM.dislikes, DSM.ofKind, DSM.relatedTo,
                                         DSM.does)
DATA_PROPERTIES = FUNCTIONAL_DATA + (DSM.quality, DSM.date)
FUNCTIONAL = frozenset(FUNCTIONAL_OBJECT + FUNCTIONAL_DATA)
# Pairs that cannot both hold between the same subject and object.
OPPOSITES = ((DSM.likes, DSM.dislikes),)

ENTITY = Namespace(ENTITY_BASE)
CLASS = Namespace(CLASS_BASE)
RELATION = Namespace(RELATION_BASE)

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """ASCII lower-case key with underscores: 'Café Rouge!' -> 'cafe_rouge'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NON_SLUG.sub("_", ascii_text.lower()).strip("_") or "x"


def entity(key: str) -> URIRef:
    """The individual for a normalised key (same words -> same individual, across turns)."""
    return URIRef(ENTITY_BASE + slug(key))


def noun_class(lemma: str) -> URIRef:
    """A class minted from a noun lemma, e.g. 'dog' -> class/Dog."""
    return URIRef(CLASS_BASE + "".join(part.capitalize() for part in slug(lemma).split("_")))


def relation(lemma: str) -> URIRef:
    """A relation minted from a verb (+ preposition), e.g. 'work at' -> relation/work_at."""
    return URIRef(RELATION_BASE + slug(lemma))


def negated(predicate: URIRef) -> URIRef:
    """The negated form of a minted relation: relation/like -> relation/not_like."""
    if not str(predicate).startswith(RELATION_BASE):
        raise ValueError(f"only minted relations have a negated form, not {predicate}")
    return URIRef(RELATION_BASE + "not_" + str(predicate)[len(RELATION_BASE) :])


def turn_graph(index: int) -> URIRef:
    """The named graph holding what turn `index` asserted."""
    return URIRef(f"{TURN_BASE}{index}")


def assistant_graph(index: int) -> URIRef:
    """The named graph holding what only the assistant's sentences of turn `index` asserted."""
    return URIRef(f"{TURN_BASE}{index}/assistant")


def bind_prefixes(graph: Graph) -> Graph:
    graph.bind("dsm", BASE)
    graph.bind("ent", ENTITY_BASE)
    graph.bind("cls", CLASS_BASE)
    graph.bind("rel", RELATION_BASE)
    graph.bind("owl", OWL)
    graph.bind("xsd", XSD)
    return graph


# rdflib's parsers raise BadSyntax (a SyntaxError), ParserError or ValueError for most malformed
# input, but IndexError, AssertionError or AttributeError for some (a lone `0`, `"0`, `@`, `?:`;
# found by tests/test_fuzz_importers.py and test_fuzz_dsm.py): all mean the same.
_RDFLIB_PARSE_ERRORS = (SyntaxError, ParserError, ValueError, IndexError, AssertionError, AttributeError)


def parse_rdf(text: str, format: str = "turtle", graph: Graph | None = None) -> Graph:
    """`text` parsed into `graph` (a new one by default); ValueError with rdflib's first line when
    it is not valid `format`, whatever rdflib raised. Empty text is an empty graph."""
    graph = graph if graph is not None else Graph()
    if not text.strip():
        return graph  # rdflib takes data="" for no data at all and refuses it
    try:
        return graph.parse(data=text, format=format)
    except _RDFLIB_PARSE_ERRORS as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
        raise ValueError(f"not valid {format}: {first}") from err


@lru_cache(maxsize=1)
def ontology() -> Graph:
    """The TBox: class hierarchy, disjointness, property kinds, functional properties. Shared and
    cached: callers copy it, never edit it."""
    g = bind_prefixes(Graph())
    for c in TOP_CLASSES + (DSM.Agent, DSM.Speaker):
        g.add((c, RDF.type, OWL.Class))
    g.add((DSM.Person, RDFS.subClassOf, DSM.Agent))
    g.add((DSM.Organization, RDFS.subClassOf, DSM.Agent))
    g.add((DSM.Speaker, RDFS.subClassOf, DSM.Person))
    for i, a in enumerate(DISJOINT_TOP):
        for b in DISJOINT_TOP[i + 1 :]:
            g.add((a, OWL.disjointWith, b))
    g.add((DSM.Person, OWL.disjointWith, DSM.Organization))
    for p in OBJECT_PROPERTIES:
        g.add((p, RDF.type, OWL.ObjectProperty))
    for p in DATA_PROPERTIES:
        g.add((p, RDF.type, OWL.DatatypeProperty))
    for p in FUNCTIONAL:
        g.add((p, RDF.type, OWL.FunctionalProperty))
    g.add((DSM.livesIn, RDFS.range, DSM.Place))
    g.add((DSM.ofKind, RDFS.range, OWL.Class))
    g.add((DSM.amount, RDFS.domain, DSM.Quantity))
    g.add((DSM.negationOf, RDF.type, OWL.AnnotationProperty))
    for a, b in OPPOSITES:
        g.add((a, OWL.propertyDisjointWith, b))
    return g


def label_of(graph: Graph, term) -> str:
    """A node's human name: its rdfs:label, else the last part of its IRI, else the literal."""
    if isinstance(term, Literal):
        return str(term)
    label = graph.value(term, RDFS.label)
    if label is not None:
        return str(label)
    text = str(term)
    return re.split(r"[#/]", text)[-1] or text

