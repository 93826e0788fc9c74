"""Retrieval comparison: run retrievers side by side on a benchmark conversation or one of your
chats, with gold evidence marked; the SGMem sentence graph around the hits; charts of benchmark runs."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import plotly.express as px
import streamlit as st

from core.benchmarks.runner import read_run
from core.embedders import display_name
from core.methods import sgmem_settings
from ui import conversations, icons, knowledge, owner, resources, runs, safe, state, warmup
from ui import kg as ui_kg
from ui import mcts as mcts_ui
from ui import qa as ui_qa
from ui import retrieval as ur

st.set_page_config(page_title="Retrieval comparison", page_icon=icons.FAVICON, layout="wide")
warmup.start()  # shared models load in the background while the page is read
me = owner.current_owner()
owner.sidebar(me)
st.title("Retrieval comparison")
st.caption("SGMem (sentence graph: KNN sentence edges, h-hop expansion, chunks ranked by mean sentence similarity) against "
           "chunk RAG (cosine over turn/round/session embeddings) and BM25 over the same chunks; `hybrid-*` fuses BM25 and dense "
           "over chunks, `sgmem-*+h` seeds the graph from both. Embedder: the one chosen on the home page; embeddings are cached on disk. Variants with F/M/I use LLM-generated facts, summaries and "
           "insights (slow with the embedded 0.5B model; meaningful only with a capable endpoint).")

compare_tab, runs_tab, qa_tab, knowledge_tab = st.tabs(["Compare retrievers", "Benchmark results", "Answer accuracy (QA)",
                                                       "Commonsense knowledge (MCTS)"])

with compare_tab:
    left, right = st.columns([1, 2])
    with left:
        source = st.radio("Conversation from", ["LoCoMo file", "LongMemEval file", "OpenDialKG file", "My chats"], horizontal=True)
        query, dialogue, key, preset = None, None, "", "locomo"
        if source == "LoCoMo file":
            path = st.text_input("LoCoMo file", value=str(ur.LOCOMO_DEFAULT))
            convs = ur.read_data_file(ur.locomo, path)
            if convs:
                conv = convs[st.selectbox("Conversation", range(len(convs)), format_func=lambda i: f"{convs[i].sample_id} "
                                          f"({len(convs[i].dialogue)} turns, {len(convs[i].dialogue.sessions)} sessions)")]
                dialogue, key = conv.dialogue, f"locomo:{path}:{conv.sample_id}"
                asked = [q for q in conv.questions if q.evidence]
                pick = st.selectbox("Benchmark question", [None] + list(range(len(asked))),
                                    format_func=lambda i: "— type my own —" if i is None else f"[{asked[i].category_name}] {asked[i].question}")
                if pick is not None:
                    q = asked[pick]
                    query = ur.Query(q.question, q.evidence, q.answer or q.adversarial_answer, q.category_name)
        elif source == "LongMemEval file":
            preset = "longmemeval"
            path = st.text_input("LongMemEval file", value=str(ur.LONGMEMEVAL_DEFAULT))
            insts = ur.read_data_file(ur.longmemeval, path)
            if insts:
                inst = insts[st.selectbox("Question", range(len(insts)),
                                          format_func=lambda i: f"[{insts[i].question_type}] {insts[i].question}")]
                dialogue, key = inst.dialogue, f"lme:{path}:{inst.question_id}"
                query = ur.Query(inst.question, inst.evidence_turn_ids, inst.answer, inst.question_type)
        elif source == "OpenDialKG file":  # KG triples (kg-* retrievers); gold = the annotated walk
            query, dialogue, key = ui_kg.opendialkg_source(ur.Query)
        else:
            preset = "longmemeval"
            store = resources.default_store()
            chats = store.list_conversations(owner=me)
            if chats:
                chat = st.selectbox("Chat", chats, format_func=conversations.label)
                dialogue, key = store.dialogue(chat.id, owner=me), f"chat:{chat.id}"
            else:
                st.info("No chats yet: talk on the Chat page first.")
        typed = st.text_input("Query", value="" if query is None else query.text,
                              help="Edit to ask your own question (gold marks then no longer apply).")
        if query is not None and typed != query.text:
            query = ur.Query(typed)
        elif query is None:
            query = ur.Query(typed)
        if query.gold:
            st.caption(safe.literal(f"Gold evidence: {', '.join(query.gold)} · answer: {query.answer}"))
        methods = st.multiselect("Retrievers", ur.RETRIEVER_NAMES,
                                 default=ur.KG_RETRIEVERS if source == "OpenDialKG file" else ur.DEFAULT_RETRIEVERS,
                                 format_func=ur.retriever_label)
        k = st.slider("K (chunks retrieved)", 1, 20, 5)
        with st.expander(f"SGMem hyper-parameters (paper defaults for {preset}, calibrated for the embedder)"):
            base = sgmem_settings(preset, display_name(state.embedder_choice()))
            config = replace(
                base,
                knn_k=st.slider("k: KNN neighbours per sentence", 0, 5, base.knn_k),
                hops=st.slider("h: hops", 0, 2, base.hops),
                max_sentences=st.slider("n: max sentence nodes", 5, 30, base.max_sentences),
                gamma=st.select_slider("γ: threshold on cosine + 1", sorted({0.0, 1.0, 1.1, 1.2, 1.3, 1.5, base.gamma}), base.gamma),
            )
        if dialogue is not None:
            ur.prefetch(key, dialogue, methods, config)  # index while the query is typed
        run = st.button("Retrieve", type="primary", disabled=dialogue is None or not query.text or not methods)

    with right:
        if run:
            results = {}
            for name in methods:
                with st.spinner(f"Indexing with {name}…"):
                    retriever, build = ur.retriever_for(key, dialogue, name, config)
                t0 = time.perf_counter()
                found = retriever.retrieve(query.text, k)
                results[name] = (retriever, found, time.perf_counter() - t0, build)
            st.session_state["retrieval_last"] = (key, query, results)
        last = st.session_state.get("retrieval_last")
        if last and last[0] == key:
            _, shown_query, results = last
            st.markdown(f"**Query:** {safe.literal(shown_query.text)}")
            for col, (name, (retriever, found, latency, build)) in zip(st.columns(len(results)), results.items()):
                with col:
                    st.subheader(name)
                    hit = sum(ur.is_gold(e, shown_query.gold) for e in found)
                    if shown_query.gold:
                        st.metric("chunks with gold evidence", f"{hit} / {len(found)}")
                    ur.render_results(found, shown_query.gold, latency, build)
            graphed = [n for n in results if n.startswith("sgmem")]
            if graphed:
                name = graphed[0]
                retriever = results[name][0]
                st.subheader(f"Sentence graph around the hits ({name})")
                st.caption("orange: retrieved sentences (seeds) · blue: reached by hops · grey: their other KNN neighbours · "
                           "boxes: chunks (green = kept in the top K; red border = holds gold evidence)")
                hits = retriever.search(shown_query.text, k)
                st.iframe(ur.sentence_graph_html(retriever, hits, shown_query.gold), height=580)  # successor of components.v1.html
            for name in [n for n in results if n.startswith("mcts") and results[n][0].last is not None][:1]:
                st.subheader(f"MCTS search over the dialogue's sentences ({name})")
                mcts_ui.render_trace(ur.mcts_trace(results[name][0]), key=f"compare:{name}", show_prompt=False)
        elif dialogue is not None:
            st.info("Pick retrievers and press Retrieve.")

with runs_tab:
    saved = ur.saved_levels(ur.RESULTS_DIR)
    if saved:
        st.markdown("**Measured: levels x methods** (summaries in `results/`, figures in docs/retrieval.md)")
        pick = st.selectbox("Measured run", saved, format_func=lambda p: p.stem.removeprefix("retrieval-levels-"))
        saved_metric = st.radio("Metric", ur.LEVEL_METRICS, horizontal=True, key="saved-levels-metric",
                                help="tok_recall: recall within the same token budget per level (equal context)")
        try:
            frame, header = ur.saved_level_frame(pick, saved_metric)
        except (OSError, ValueError) as err:
            st.error(safe.literal(f"Cannot read {pick.name}: {err}"))
        else:
            if not frame.empty:
                st.caption(safe.literal(f"{header.get('benchmark')} · {header.get('data')} · embedder {header.get('embedder')} · "
                                        f"{header.get('questions')} questions · {header.get('code_version')}"))
                st.plotly_chart(ur.level_chart(frame), key=f"saved-levels:{pick.name}")
    root = runs.runs_root()
    with st.expander("Run a small benchmark here", expanded=not (root.is_dir() and ur.find_runs(root))):
        ur.small_run_panel(root)
    found_runs = ur.find_runs(root) if root.is_dir() else []
    chosen = st.multiselect("Run folders", [str(p) for p in found_runs], default=[str(p) for p in found_runs[:1]],
                            help=f"locomo-retrieval / longmemeval-retrieval runs under {root}")
    extra = st.text_input("Another run folder", help="any folder written by `python -m core bench locomo-retrieval --out DIR`")
    folders = list(dict.fromkeys(chosen + st.session_state.get(ur.SMALL_RUNS, []) + ([extra] if extra.strip() else [])))
    for folder in folders:
        if not (Path(folder) / "summary.json").is_file():
            st.warning(f"No summary.json in {safe.literal(folder)}")
            continue
        try:
            summary, items = read_run(folder)
            frame = ur.recall_frame(summary)
        except (OSError, ValueError, KeyError, TypeError) as err:  # a hand-edited or foreign summary.json
            st.error(safe.literal(f"Cannot read the run in {folder}: {type(err).__name__}: {err}"))
            continue
        st.subheader(safe.literal(f"{summary.get('benchmark', '?')} · {Path(str(summary.get('data', ''))).name} · {summary.get('code_version', '')}"))
        st.dataframe(ur.summary_table(summary), hide_index=True)
        if not frame.empty:
            metric = st.selectbox("Metric", sorted(frame["metric"].unique()), key=f"metric:{folder}",
                                  index=sorted(frame["metric"].unique()).index("recall") if "recall" in set(frame["metric"]) else 0)
            kk = st.selectbox("K", sorted(frame["k"].unique()), key=f"k:{folder}")
            view = frame[(frame["metric"] == metric) & (frame["k"] == kk)]
            st.plotly_chart(px.bar(view, x="group", y="value", color="method", barmode="group",
                                   title=f"{metric}@{kk} per method and group"), key=f"bar:{folder}")
        level_metrics = [m for m in ("recall@5", "recall@10", "tok_recall") if any(
            k.startswith(m) for i in items[:1] for v in i.get("methods", {}).values() for k in v)]
        if level_metrics:
            chosen_metric = st.radio("Levels x methods", level_metrics, horizontal=True, key=f"levels:{folder}",
                                     help="tok_recall: recall within the same token budget per level (equal context)")
            levels = ur.level_frame(items, chosen_metric)
            if not levels.empty:
                st.plotly_chart(ur.level_chart(levels), key=f"levelchart:{folder}")
        lat = ur.latency_frame(items)
        if not lat.empty:
            st.plotly_chart(px.box(lat, x="method", y="latency_ms", points=False, log_y=True,
                                   title="query latency per method (ms, log scale)"), key=f"lat:{folder}")
        with st.expander("Settings"):
            st.code(ur.read_summary_settings(summary), language="json")
    if not folders:
        st.info(f"No retrieval runs under {root} yet: run a small one above, or a full one from the command line "
                f"(`python -m core bench locomo-retrieval --data ../shared/data/locomo/locomo_dev.json --out {root}/locomo-retrieval`).")
    knowledge.render_runs(root)

with qa_tab:  # bench locomo-qa / longmemeval-qa runs, beside the published figures
    ui_qa.render_qa_runs(runs.runs_root())

with knowledge_tab:
    knowledge.render_compare()
