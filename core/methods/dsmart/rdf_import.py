"""Reading an uploaded RDF file (Turtle, N-Triples, TriG, JSON-LD) for import into a memory.

Everything that can be wrong with an upload becomes a `ValueError` whose message says what and
where, before the memory is touched: too large, not UTF-8, a syntax error (with rdflib's line),
a JSON-LD document that names a remote @context (which would make the server fetch a URL), or no
triples at all.
"""

from __future__ import annotations

import json
from pathlib import PurePath

from rdflib import Dataset, Graph, URIRef

from core.methods.dsmart import vocab

MAX_IMPORT_BYTES = 5_000_000
FORMATS = {".ttl": "turtle", ".turtle": "turtle", ".nt": "nt", ".trig": "trig", ".jsonld": "json-ld", ".json": "json-ld"}
CURRENT_GRAPH = URIRef("http://dialogue-workbench.org/dsm/current")  # what DynamicStructuredMemory.to_trig calls it


def format_of(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{filename!r}: unknown RDF file type; use one of {', '.join(sorted(FORMATS))}")
    return FORMATS[suffix]


def parse_rdf(data: bytes, filename: str) -> Graph:
    """The triples of an uploaded file. TriG: the memory's own export's current graph when present,
    else the union of all graphs."""
    fmt = format_of(filename)
    if len(data) > MAX_IMPORT_BYTES:
        raise ValueError(f"{filename!r} has {len(data):,} bytes; imports are limited to {MAX_IMPORT_BYTES:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{filename!r} is not UTF-8 text (byte {err.start})") from err
    if fmt == "json-ld":
        _check_jsonld(text, filename)
    try:
        if fmt == "trig":
            graph = _from_dataset(vocab.parse_rdf(text, "trig", Dataset()))
        else:
            graph = vocab.parse_rdf(text, fmt)
    except ValueError as err:  # vocab.parse_rdf: whatever rdflib raised for malformed input
        raise ValueError(f"{filename!r} is {err}") from err
    except (TypeError, KeyError) as err:  # the JSON-LD processor on a document of the wrong shape
        raise ValueError(f"{filename!r} is not valid {fmt}: {' '.join(str(err).split())[:300]}") from err
    if not len(graph):
        raise ValueError(f"{filename!r} holds no triples")
    return graph


def _from_dataset(ds: Dataset) -> Graph:
    graphs = {g.identifier: g for g in ds.graphs()}
    chosen = [graphs[CURRENT_GRAPH]] if CURRENT_GRAPH in graphs else list(graphs.values())
    out = Graph()
    for g in chosen:
        for triple in g:
            out.add(triple)
    return out


def _check_jsonld(text: str, filename: str) -> None:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{filename!r} is not valid JSON: {err}") from err
    if _remote_context(doc):
        raise ValueError(f"{filename!r} names a remote JSON-LD @context; the server fetches nothing: inline the context")


def _remote_context(node) -> bool:
    if isinstance(node, dict):
        ctx = node.get("@context")
        refs = ctx if isinstance(ctx, list) else [ctx]
        if any(isinstance(r, str) for r in refs):
            return True
        return any(_remote_context(v) for v in node.values())
    if isinstance(node, list):
        return any(_remote_context(v) for v in node)
    return False
