"""KG augmentation in the UI: the triples of a `kgaug` / `kgaug-c` reply as a small graph, the
stages of its trace, and an OpenDialKG source for the Retrieval comparison page.

The trace is data (`Trace(kind=TRACE_KG)`); this module draws it. Entity and relation names come from
data files and user text, so every label and tooltip that reaches HTML goes through `html.escape`
(vis-network renders tooltips as HTML); tables go through st.dataframe / st.text, which never
interpret HTML. Scripts are inlined so the graph works offline.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import streamlit as st
from pyvis.network import Network

from core.dialogue import EVIDENCE_TRIPLE, Evidence, Reply
from ui.graphs import offline_page

LINKED = "#f58518"  # entities linked in the query
OTHER = "#4c78a8"
OPENDIALKG_DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "opendialkg" / "opendialkg_test.csv"


def short(text: str, limit: int = 36) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def triple_rows(evidence) -> list[dict]:
    return [{"rank": e.meta.get("rank", i), "head": e.meta["head"], "relation": e.meta["relation"], "tail": e.meta["tail"],
             "score": round(e.score, 4), "hop": e.meta.get("hop"), "from": ", ".join(e.meta.get("from", []))}
            for i, e in enumerate(evidence, 1) if e.kind == EVIDENCE_TRIPLE and "head" in e.meta]


def triples_graph_html(evidence, linked: set[str] = frozenset(), height: str = "360px") -> str:
    """The evidence triples as a directed graph: orange = entities linked in the query, edge
    labels = relations, tooltips = rank and score."""
    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line")
    net.barnes_hut(gravity=-2500, spring_length=140)
    added: set[str] = set()
    for row in triple_rows(evidence):
        for name in (row["head"], row["tail"]):
            if name not in added:
                added.add(name)
                net.add_node(name, label=html.escape(short(name)), title=html.escape(name),
                             color=LINKED if name in linked else OTHER, shape="dot", size=14)
        net.add_edge(row["head"], row["tail"], label=html.escape(short(row["relation"], 24)),
                     title=html.escape(f"#{row['rank']} {row['head']} — {row['relation']} → {row['tail']} (score {row['score']})"))
    return offline_page(net)


def linked_names(reply: Reply) -> set[str]:
    link = next((n for n in reply.trace.nodes if n.id == "link"), None) if reply.trace else None
    return {e["name"] for e in link.detail.get("entities", [])} if link else set()


def render_kg_trace(reply: Reply, key: str = "") -> None:
    """The stages of a kgaug reply: rewrite, linked entities, candidates, the chosen triples drawn
    as a graph and listed, then the prompt."""
    nodes = {n.id: n for n in reply.trace.nodes}
    if "rewrite" in nodes:
        d = nodes["rewrite"].detail
        how = {"symbolic": "symbolic pronoun rewrite (weak model)", "llm": "the paper's LLM rewrite prompt",
               "llm->symbolic": "LLM rewrite unreadable → symbolic rewrite"}.get(d["method"], d["method"])
        st.markdown(f"**Rewrite** — {how}")
        st.text(f"query:     {d['query']}\nrewritten: {d['rewritten']}")
        if d.get("reasoning"):
            with st.popover("Chain of thought"):
                st.text(d["reasoning"])
    entities = nodes["link"].detail.get("entities", []) if "link" in nodes else []
    st.markdown(f"**Linked entities** ({len(entities)})")
    if entities:
        st.dataframe(pd.DataFrame(entities), hide_index=True)
    rank = nodes.get("rank")
    if rank is not None and rank.detail.get("note"):
        st.info(rank.detail["note"])
    if "candidates" in nodes:
        c = nodes["candidates"].detail
        st.caption(f"{c['count']} candidate triples ({c['one_hop']} one hop, {c['two_hop']} two hops), "
                   f"ranked by {rank.detail.get('ranker') if rank else '?'}")
    rows = triple_rows(reply.evidence)
    if rows:
        st.markdown("**Triples in the prompt**")
        st.iframe(triples_graph_html(reply.evidence, linked_names(reply)), height=380)  # successor of components.v1.html
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    for m in reply.trace.prompt:
        st.markdown(f"**{m['role']}**")
        st.text(m["content"])


# -- the Retrieval comparison page ---------------------------------------------------------------
@st.cache_data(show_spinner="Reading the OpenDialKG file…", max_entries=2)
def opendialkg_examples(path: str):
    from core.data.opendialkg import load_opendialkg

    dialogues, stats = load_opendialkg(path)
    return [e for d in dialogues for e in d.examples()], stats.as_dict()


def opendialkg_source(query_type):
    """Widgets to pick a grounded OpenDialKG turn; returns (query, dialogue, key). The query's
    gold is the walk's triples (as triple keys, matched by `is_gold_triple`)."""
    from core.methods.kgaug.triples import canonical

    path = st.text_input("OpenDialKG file", value=str(OPENDIALKG_DEFAULT))
    if not Path(path).is_file():
        st.warning(f"No file at {path}")
        return None, None, ""
    examples, stats = opendialkg_examples(path)
    if stats["skipped_rows"]:
        st.caption(f"{stats['skipped_rows']} malformed rows skipped")
    if not examples:
        st.warning("No grounded assistant turns in this file.")
        return None, None, ""
    i = st.selectbox("Grounded turn", range(len(examples)), format_func=lambda i: f"#{examples[i].id} {short(examples[i].query, 90)}")
    ex = examples[i]
    gold = tuple(canonical(*t).key() for t in ex.gold)
    return query_type(ex.query, gold, ex.response, "walk"), ex.history(), f"odkg:{path}:{ex.id}"


def is_gold_triple(evidence: Evidence, gold) -> bool:
    return bool(gold) and evidence.meta.get("triple_key") in gold
