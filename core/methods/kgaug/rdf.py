"""RDF import and export of triples. Entities become IRIs in one namespace with their names as
rdfs:label; relations become IRIs in another. Reading a user's Turtle file takes names from
rdfs:label where present, else from the IRI's last segment; literal objects keep their text."""

from __future__ import annotations

from typing import Iterable, Iterator
from urllib.parse import quote, unquote

from core.methods.kgaug.triples import Triple

ENTITY_NS = "urn:kgaug:entity:"
RELATION_NS = "urn:kgaug:relation:"


def _parse_errors() -> tuple[type[BaseException], ...]:
    from xml.sax import SAXException

    from rdflib.exceptions import ParserError

    # Turtle/N3 raise BadSyntax (a SyntaxError), N-Triples ParserError, RDF/XML SAXException,
    # JSON-LD a JSONDecodeError, undecodable bytes a UnicodeDecodeError (both ValueErrors).
    return (SyntaxError, ParserError, SAXException, ValueError)


def triples_to_rdflib(triples: Iterable[Triple]):
    from rdflib import RDFS, Graph, Literal, URIRef

    g = Graph()
    g.bind("rdfs", RDFS)
    labelled: set[str] = set()
    for t in triples:
        h, tail = URIRef(ENTITY_NS + quote(t.head, safe="")), URIRef(ENTITY_NS + quote(t.tail, safe=""))
        g.add((h, URIRef(RELATION_NS + quote(t.relation, safe="")), tail))
        for name, node in ((t.head, h), (t.tail, tail)):
            if name not in labelled:
                g.add((node, RDFS.label, Literal(name)))
                labelled.add(name)
    return g


def _local_name(term) -> str:
    text = str(term)
    for sep in ("#", "/", ":"):
        if sep in text:
            text = text.rsplit(sep, 1)[-1]
    return unquote(text)


def read_rdf_triples(path, fmt: str | None = None, skipped: dict | None = None) -> Iterator[tuple[str, str, str]]:
    """Facts of an RDF file (Turtle, N-Triples, ...; rdflib guesses from the suffix). rdflib parses
    the whole file into memory: for very large graphs use the TSV format, which is streamed."""
    from rdflib import RDF, RDFS, BNode, Graph, Literal

    parse_errors = _parse_errors()
    g = Graph()
    try:
        g.parse(str(path), format=fmt)
    except parse_errors as err:  # one syntax error spoils the whole document: name the file and stop
        raise ValueError(f"{path}: not readable as RDF ({type(err).__name__}: {str(err).strip()[:300]}); "
                         "fix the file, or give the triples as subject<TAB>relation<TAB>object lines, "
                         "where a bad line is skipped and counted") from None
    labels = {s: str(o) for s, o in g.subject_objects(RDFS.label)}
    for s, p, o in g:
        if p == RDFS.label:
            continue
        if isinstance(s, BNode) or isinstance(o, BNode):
            if skipped is not None:
                skipped["blank node"] = skipped.get("blank node", 0) + 1
            continue
        relation = "is-a" if p == RDF.type else _local_name(p)
        tail = str(o) if isinstance(o, Literal) else labels.get(o, _local_name(o))
        yield labels.get(s, _local_name(s)), relation, tail
