"""Memory Graph: the D-SMART Dynamic Structured Memory of a conversation, replayable turn by turn."""

from __future__ import annotations

import streamlit as st

from core.memory_replay import GRAPH_METHODS, rdf_formats
from ui import conversations, forget, graphs, icons, owner, resources, safe, state, warmup

st.set_page_config(page_title="Memory graph", page_icon=icons.FAVICON, layout="wide")
warmup.start()  # shared models load in the background while the page is read
store = resources.default_store()
me = owner.current_owner()
owner.sidebar(me)
st.title("Memory graph")
st.caption("D-SMART's Dynamic Structured Memory: an OWL knowledge graph of the dialogue. Each round adds a "
           "fragment extracted from the turn (local spaCy extractor, or the LLM with a strong endpoint); "
           "conflicting older facts are pruned and kept in the history with the reason.")

infos = {c.id: c for c in store.list_conversations(owner=me)}
if not infos:
    st.info(f"No conversations yet. Chat with the `{GRAPH_METHODS[0]}` method on the Chat page, then come back here.")
    st.stop()
ids = list(infos)
current = st.session_state.get(state.CONVERSATION)
with st.sidebar:
    cid = st.selectbox("Conversation", ids, index=ids.index(current) if current in ids else 0,
                       format_func=conversations.labels(infos.values()).get, key="memory_graph_conversation")
read_only = infos[cid].read_only

service = conversations.service(store, me)
view = service.graph_memory(cid)  # this user's live method instance first, else the stored memory
if view is None:
    st.info("This conversation has no D-SMART memory yet (it was held with another method).")
    if read_only:
        st.caption("It is a shared demo conversation (read-only): copy it on the Chat page to build a memory for it.")
    elif st.button("Build the memory from its turns"):
        settings = state.llm_settings()  # the weak local model takes no part in maintenance: don't load it
        with st.spinner("Maintaining the memory round by round…"):
            service.rebuild_graph_memory(cid, state.current_llm() if settings.is_strong else None, strong=settings.is_strong)
        st.rerun()
    st.stop()

memory, source = view.memory, view.source
history = memory.history
st.caption(f"Source: {source} · {len(history)} round(s) · {len(memory.facts())} facts now")
if history:
    shown = st.slider("Graph after round", 0, len(history), len(history), key=f"memory_graph_turn:{cid}")
else:
    shown = 0
graph = view.graph_after(shown)

tab_graph, tab_turn, tab_triples, tab_export = st.tabs(["Graph", "Round details", "Triples", "Export / import"])
with tab_graph:
    st.markdown(" ".join(f"<span style='color:{c}'>●</span> {name}" for name, c in graphs.LEGEND.items()),
                unsafe_allow_html=True)  # fixed legend text only: no user text here
    if len(graph):
        st.iframe(graphs.network_html(graph), height=650)  # escaped labels, inlined vis-network (offline)
    else:
        st.write("The graph is empty at this point.")

with tab_turn:
    if shown == 0:
        st.write("Move the slider to a round to see what it added and pruned.")
    else:
        record = history[shown - 1]
        # Counted from 1, as the slider is: position 5 is the graph after round 5 (record.turn_index counts from 0).
        st.subheader(f"Round {shown}" + (" (imported)" if record.source == "import" else ""))
        st.text(record.statement)
        st.markdown("**Fragment added**")
        st.dataframe(graphs.facts_frame(graph, record.added, record.speaker), hide_index=True, width="stretch")
        st.markdown("**Conflicts pruned**")
        if record.pruned:
            st.dataframe(graphs.pruned_frame(graph, record.pruned), hide_index=True, width="stretch")
        else:
            st.write("None.")
        st.markdown("**Stage timings (s), LLM calls and tokens**")
        st.dataframe([{"stage": k, "seconds": round(v, 4), **record.cost.get(k, {})} for k, v in record.timings.items()],
                     hide_index=True)
        for finding in view.findings(shown):  # the reasoner's messages in words
            st.warning(safe.literal(finding.text))
            st.dataframe(graphs.findings_frame(finding), hide_index=True, width="stretch")
            st.caption("The OWL-RL reasoner's message: " + safe.literal(finding.message))
        for note in record.notes:
            st.caption(safe.literal(note))  # notes quote model output

with tab_triples:
    search = st.text_input("Search triples and what was said", key=f"memory_graph_search:{cid}")
    st.caption("Each fact beside who stated it and the words of the turn it came from, which the answer prompt shows "
               "the model. What only the assistant said is marked as its own, never as yours.")
    st.dataframe(graphs.triples_frame(graph, memory.asserted_by, search, said=view.said_by_fact(graph),
                                      said_by=memory.speakers()), hide_index=True, width="stretch")
    if not read_only:  # the fact's source message leaves the conversation, every memory and the file
        facts = memory.facts()
        labels = [" — ".join(row) for row in graphs.facts_frame(memory.graph, facts).itertuples(index=False)]
        forget.fact_action(service, cid, [memory.asserted_by(t) for t in facts], labels)

with tab_export:
    c1, c2, c3 = st.columns(3)
    c1.download_button("Turtle", memory.to_turtle(), file_name=f"dsm-{cid}.ttl", mime="text/turtle")
    c2.download_button("TriG (per-round graphs)", memory.to_trig(), file_name=f"dsm-{cid}.trig", mime="application/trig")
    c3.download_button("JSON-LD", memory.to_jsonld(), file_name=f"dsm-{cid}.jsonld", mime="application/ld+json")
    table = graphs.triples_frame(memory.graph, memory.asserted_by, said=view.said_by_fact(), said_by=memory.speakers())
    st.download_button("Facts with who said them (CSV)", table.to_csv(index=False), file_name=f"dsm-{cid}-facts.csv",
                       mime="text/csv")
    st.caption("TriG and the CSV keep who said what: TriG has a named graph per round for what you stated "
               "(dsm:saidBy ent:user) and one (…/assistant) for what only the assistant said.")
    if read_only:
        st.caption("Import is off: this is a shared demo conversation (read-only).")
    upload = None if read_only else st.file_uploader(
        "Import RDF into this memory (Turtle, N-Triples, TriG, JSON-LD)", type=[t.lstrip(".") for t in rdf_formats()])
    if upload is not None and st.button("Import"):
        try:  # the whole file is checked before the memory changes; kept once merged
            record = view.import_rdf(upload.getvalue(), upload.name)
        except ValueError as err:
            st.error(f"Nothing imported: {safe.literal(str(err))}")  # the reason quotes the file
        else:
            st.success(f"Imported {len(record.facts_added)} facts; {len(record.pruned)} older facts pruned.")
