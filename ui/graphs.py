"""Graph rendering for the Memory Graph page: the DSM as an interactive pyvis network.

Dialogue text goes into node labels and tooltips as it is, and is shown as text: pyvis writes
the nodes into its <script> block with Jinja's `tojson`, which encodes <, >, & and ' as \u003c...
(so `</script>` cannot end the block), and vis-network 9 draws labels on a canvas and puts string
tooltips in with innerText, never as HTML. A user who types `<script>` or `Tom & Jerry` sees
exactly that (tests/test_bad_input.py checks the page). Scripts are inlined (`cdn_resources="in_line"`)
so the page works offline.
"""

from __future__ import annotations

import hashlib
import re

import pandas as pd
from pyvis.network import Network
from rdflib import RDF, Graph, Literal, URIRef

from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.vocab import CLASS_BASE, DSM, label_of

# colour per top-level class (the first that applies wins); literals are grey boxes
COLOURS = {
    DSM.Speaker: "#e45756",
    DSM.Person: "#f58518",
    DSM.Organization: "#b279a2",
    DSM.Place: "#54a24b",
    DSM.Event: "#eeca3b",
    DSM.Quantity: "#72b7b2",
    DSM.TimeExpression: "#9d755d",
    DSM.Thing: "#4c78a8",
}
UNTYPED = "#bab0ac"
LITERAL = "#d8d8d8"
LEGEND = {"Speaker": "#e45756", "Person": "#f58518", "Organization": "#b279a2", "Place": "#54a24b", "Event": "#eeca3b",
          "Quantity": "#72b7b2", "Time": "#9d755d", "Thing": "#4c78a8", "untyped": UNTYPED, "value": LITERAL}


def top_type(graph: Graph, node) -> URIRef | None:
    """The node's top-level DSM class: asserted directly, or through a minted class."""
    types = set(graph.objects(node, RDF.type))
    for cls in list(types):
        if str(cls).startswith(CLASS_BASE):
            types |= set(graph.objects(cls, URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf")))
    return next((c for c in COLOURS if c in types), None)


def type_names(graph: Graph, node) -> list[str]:
    return sorted(label_of(graph, c) for c in graph.objects(node, RDF.type) if is_fact((node, RDF.type, c)))


def network_html(graph: Graph, height: str = "620px") -> str:
    """The graph's facts as a standalone HTML page (vis-network inlined). Type assertions colour
    nodes and appear in tooltips rather than as edges."""
    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line")
    net.barnes_hut(gravity=-4000, spring_length=140)
    added: set[str] = set()

    def node_id(term, s, p) -> str:
        if isinstance(term, Literal):  # one box per statement of a value; the id carries no user text
            return "literal:" + hashlib.sha1(f"{s}|{p}|{term.n3()}".encode()).hexdigest()[:16]
        return str(term)

    def add(term, s=None, p=None) -> str:
        nid = node_id(term, s, p)
        if nid in added:
            return nid
        added.add(nid)
        label = label_of(graph, term)
        if isinstance(term, Literal):
            kind = term.datatype.split("#")[-1] if term.datatype else "text"
            net.add_node(nid, label=label, shape="box", color=LITERAL, title=f"{term} ({kind})")
        else:
            types = ", ".join(type_names(graph, term)) or "no class"
            title = f"{label_of(graph, term)}\n{term}\ntypes: {types}"
            net.add_node(nid, label=label, color=COLOURS.get(top_type(graph, term), UNTYPED), title=title)
        return nid

    for s, p, o in sorted(graph):
        if not is_fact((s, p, o)) or p == RDF.type:
            continue
        src, dst = add(s), add(o, s, p)
        net.add_edge(src, dst, label=label_of(graph, p), title=str(p))
    for s, _, c in graph.triples((None, RDF.type, None)):  # individuals known only by their type
        if isinstance(s, URIRef) and is_fact((s, RDF.type, c)):
            add(s)
    return offline_page(net)


_REMOTE = re.compile(r"<(?:link|script)\b[^>]*\bhttps?://[^>]*>(?:\s*</script>)?", re.DOTALL)


def offline_page(net) -> str:
    """A pyvis network as a standalone page. pyvis's template still links Bootstrap from a CDN
    (card styling only): those tags are dropped so the page makes no network request;
    vis-network itself is inlined."""
    return _REMOTE.sub("", net.generate_html(notebook=False))


def triples_frame(graph: Graph, asserted_by=None, search: str = "", said: dict | None = None,
                  said_by: dict | None = None) -> pd.DataFrame:
    """Facts as a table (subject, relation, object, turn, and with `said` the sentence each came
    from: triple -> words; with `said_by` who stated it: triple -> user | assistant | import);
    `search` filters case-insensitively, the sentence and speaker included."""
    rows = []
    needle = search.strip().lower()
    for s, p, o in sorted(graph):
        if not is_fact((s, p, o)):
            continue
        row = {"subject": label_of(graph, s), "relation": "is a" if p == RDF.type else label_of(graph, p),
               "object": label_of(graph, o)}
        if said_by is not None:
            row["said by"] = said_by.get((s, p, o), "import")
        if said is not None:
            row["said"] = said.get((s, p, o), "")
        if needle and needle not in " ".join(row.values()).lower():
            continue
        if asserted_by is not None:
            row["turn"] = asserted_by((s, p, o))
        rows.append(row)
    columns = (["subject", "relation", "object"] + (["said by"] if said_by is not None else [])
               + (["said"] if said is not None else []) + (["turn"] if asserted_by else []))
    return pd.DataFrame(rows, columns=columns)


def facts_frame(graph: Graph, triples, said_by=None) -> pd.DataFrame:
    """A round's facts; with `said_by` (triple -> user | assistant) who stated each."""
    rows = [{"subject": label_of(graph, s), "relation": "is a" if p == RDF.type else label_of(graph, p),
             "object": label_of(graph, o), **({"said by": said_by((s, p, o))} if said_by else {})}
            for s, p, o in triples if is_fact((s, p, o))]
    return pd.DataFrame(rows, columns=["subject", "relation", "object"] + (["said by"] if said_by else []))


def findings_frame(finding) -> pd.DataFrame:
    """The facts of a reasoner finding (core.methods.dsmart.findings), each with its round, who said
    it and the words it came from: the fact to fix or forget."""
    rows = [{"fact": f.fact, "round": f.round, "said by": f.speaker, "said": f.sentence} for f in finding.facts]
    return pd.DataFrame(rows, columns=["fact", "round", "said by", "said"])


def pruned_frame(graph: Graph, pruned) -> pd.DataFrame:
    rows = [{"subject": label_of(graph, x.triple[0]), "relation": label_of(graph, x.triple[1]),
             "object": label_of(graph, x.triple[2]), "rule": x.rule, "reason": x.reason} for x in pruned]
    return pd.DataFrame(rows, columns=["subject", "relation", "object", "rule", "reason"])
