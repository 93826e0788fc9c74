"""The Metrics page's factuality section: FactScore and NEIP per turn for one of the user's own
conversations (scored here, on demand) or for a benchmark run (hybridialogue-facts, or mtbench
with --factscore), each fact with its label, confidence and evidence, and a per-turn plot.

Facts, evidence and replies are user or model text: they go into dataframes (rendered as text)
or through safe.literal, never into HTML."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.benchmarks.runner import read_run
from ui import conversations, resources, runs, safe

FACT_RUNS = ("hybridialogue-facts", "mtbench")
SCORES_KEY = "factscore_scores"  # (owner, conversation, verifier, turns) -> [(turn index, ResponseScore dict)]


@st.cache_resource(show_spinner="Loading the fact verifier…")
def nli_verifier():
    """The offline verifier: shared read-only models (NLI scorer, spaCy, the stored classifier)."""
    from core.metrics.fact_verifiers import make_verifier
    from core.resources import load_spacy

    return make_verifier("nli", resources=(resources.nli_scorer(), load_spacy(), None))


@st.cache_resource(show_spinner=False)
def rule_splitter():
    from core.metrics.atomic_facts import RuleFactSplitter
    from core.resources import load_spacy

    return RuleFactSplitter(load_spacy())


def verifier_for(name: str, toolkit_fn):
    from core.metrics.fact_verifiers import make_verifier

    if name == "nli":
        return nli_verifier()
    tools = toolkit_fn()
    if name == "llm":
        return make_verifier("llm", llm=tools.llm, strong=tools.strong)
    from core.llm.openai_backend import OpenAICompatibleLLM
    from core.llm.queued import backend_of

    return make_verifier("judge", judge_llm=tools.llm if isinstance(backend_of(tools.llm), OpenAICompatibleLLM) else None)


def turn_rows(scored: list[tuple[int, dict]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per turn: FactScore, NEIP, facts, note), (one row per fact: turn, fact, label,
    confidence, evidence)."""
    turns, facts = [], []
    for index, s in scored:
        turns.append({"turn": index, "factscore": s["factscore"], "neip": s["neip"], "facts": s["n_facts"],
                      "evidence": s.get("evidence_kind", ""), "note": s["note"]})
        for f in s["facts"]:
            facts.append({"turn": index, "fact": f["fact"], "label": f["label"], "confidence": f["confidence"],
                          "evidence": " | ".join(e["text"][:200] for e in f["evidence"]) or "(dialogue history only)"})
    return pd.DataFrame(turns), pd.DataFrame(facts, columns=["turn", "fact", "label", "confidence", "evidence"])


def per_turn_figure(turns: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    scored = turns.dropna(subset=["factscore"]) if not turns.empty else turns
    if not scored.empty:
        fig.add_scatter(x=scored["turn"], y=scored["factscore"], name="FactScore (higher is better)", mode="lines+markers")
        fig.add_scatter(x=scored["turn"], y=scored["neip"], name="NEIP (lower is better)", mode="lines+markers")
    fig.update_layout(xaxis_title="turn", yaxis_title="share of atomic facts", yaxis_range=[0, 1], margin={"t": 30})
    return fig


def run_rows(items: list[dict]) -> list[tuple[int, dict]]:
    """A benchmark run's per-fact items grouped into responses, as scored turns: hybridialogue-facts
    items (one per fact, with `response_id`) or mtbench items carrying a `factscore_facts` list."""
    from core.metrics.factscore import ResponseFacts

    out: list[tuple[int, dict]] = []
    if items and "factscore_facts" in items[0] or any("factscore_facts" in i for i in items):
        for n, item in enumerate(i for i in items if "factscore_facts" in i):
            facts = item["factscore_facts"]
            rf = ResponseFacts(tuple(f["label"] for f in facts))
            out.append((n, {"factscore": rf.factscore, "neip": rf.neip, "n_facts": rf.n_facts, "note": rf.note,
                            "facts": facts, "evidence_kind": item.get("method", "")}))
        return out
    grouped: dict[str, list[dict]] = {}
    for item in items:
        grouped.setdefault(f"{item.get('method', '')}|{item['response_id']}", []).append(item)
    for n, rows in enumerate(grouped.values()):
        rf = ResponseFacts(tuple(r["label"] for r in rows))
        out.append((n, {"factscore": rf.factscore, "neip": rf.neip, "n_facts": rf.n_facts, "note": rf.note,
                        "evidence_kind": rows[0].get("method", ""),
                        "facts": [{"fact": r["fact"], "label": r["label"], "confidence": r["confidence"],
                                   "human": r.get("human"), "evidence": r.get("evidence", [])} for r in rows]}))
    return out


def show_scores(scored: list[tuple[int, dict]], key: str) -> None:
    from core.metrics.factscore import ResponseFacts, summarise_factscore

    turns, facts = turn_rows(scored)
    summary = summarise_factscore([ResponseFacts(tuple(f["label"] for f in s["facts"]), str(i), str(i)) for i, s in scored])
    c1, c2, c3 = st.columns(3)
    lo, hi = summary.factscore_ci95
    c1.metric("FactScore (higher is better)", "undefined" if summary.factscore is None else f"{summary.factscore:.3f}",
              help="share of a reply's atomic facts labelled Supports, averaged over replies with facts")
    c2.metric("NEIP (lower is better)", "undefined" if summary.neip is None else f"{summary.neip:.3f}",
              help="share labelled Not Enough Info")
    c3.metric("Atomic facts", summary.n_facts)
    if summary.factscore is not None and lo == lo:
        st.caption(f"95% bootstrap interval of FactScore over replies: [{lo:.3f}, {hi:.3f}]")
    if summary.factscore is None:
        st.info("No reply has an atomic fact: FactScore and NEIP are undefined here.")
    st.plotly_chart(per_turn_figure(turns), width="stretch", key=f"fs_plot_{key}")
    st.dataframe(turns, hide_index=True, width="stretch", key=f"fs_turns_{key}")
    if not facts.empty:
        chosen = st.selectbox("Turn", sorted(facts["turn"].unique().tolist()), key=f"fs_turn_{key}")
        mine = facts[facts["turn"] == chosen]
        st.dataframe(mine, hide_index=True, width="stretch", key=f"fs_facts_{key}")
        for _, row in mine.iterrows():  # evidence in full, as text
            st.markdown(f"**{safe.literal(row['label'])}** ({row['confidence']:.2f}): {safe.literal(row['fact'])}")
            st.caption(safe.literal(row["evidence"]))


def section(store, me: str, toolkit_fn) -> None:
    st.caption(
        "Adapted FactScore (KG-augmented dialogue factuality paper, section 4.3): each reply is split into atomic facts, "
        "each judged **Supports / Refutes / Not Enough Info** against the evidence its method retrieved and the dialogue "
        "history. FactScore = share supported (higher is better); NEIP = share with not enough information (lower is "
        "better). Offline verifier `nli`: the project's NLI model plus lexical checks, read by a classifier trained on "
        "HybriDialogue dev (3-way kappa vs humans in docs/factscore.md; the paper's GPT-4o reached 0.65)."
    )
    source = st.radio("Score", ["A conversation of mine", "A benchmark run"], horizontal=True, key="fs_source")
    if source == "A benchmark run":
        root = runs.runs_root()
        found = runs.find_runs(root, FACT_RUNS) if root.is_dir() else []
        path = st.selectbox("Run folder", [str(p) for p in found], key="fs_run") if found else None
        typed = st.text_input("or a run folder", key="fs_run_typed")
        path = typed.strip() or path
        if not path:
            st.info("No hybridialogue-facts (or mtbench --factscore) run found. Write one with "
                    "`python -m core bench hybridialogue-facts --data FILE --out DIR`.")
            return
        try:
            summary, items = read_run(Path(path))
        except (OSError, ValueError) as err:
            st.warning(safe.literal(f"{path}: {err}"))
            return
        scored = run_rows(items)
        if not scored:
            st.warning("This run has no FactScore items (an mtbench run needs --factscore).")
            return
        methods = sorted({s["evidence_kind"] for _, s in scored})
        method = st.selectbox("Verifier / method", methods, key="fs_run_method") if len(methods) > 1 else methods[0]
        st.caption(safe.literal(f"{summary.get('benchmark')} on {summary.get('data')}, code {summary.get('code_version')}"))
        show_scores([(i, s) for i, s in scored if s["evidence_kind"] == method], "run")
        return
    chats = store.list_conversations(owner=me)
    if not chats:
        st.info("You have no conversation yet: chat on the Chat page, then score it here.")
        return
    chat = st.selectbox("Conversation", chats, format_func=conversations.label, key="fs_chat")
    verifier_name = st.radio("Verifier", ["nli", "llm", "judge"], horizontal=True, key="fs_verifier",
                             help="nli: offline classifier; llm: the configured model (Table 8 prompt, labels scored by "
                                  "likelihood on the embedded model); judge: an OpenAI-compatible endpoint")
    limit = st.number_input("Latest replies to score", min_value=1, max_value=200, value=10, key="fs_limit")
    key = (me, chat.id, verifier_name, chat.turns, int(limit))
    cache = st.session_state.setdefault(SCORES_KEY, {})
    if st.button("Score the replies", key="fs_go"):
        from core.metrics.factscore import score_turns

        try:
            verifier = verifier_for(verifier_name, toolkit_fn)
        except ValueError as err:
            st.error(safe.literal(str(err)))
            return
        stored = store.turns(chat.id, owner=me)
        replies = [i for i, s in enumerate(stored) if s.turn.role == "assistant"][-int(limit):]
        first = replies[0] if replies else len(stored)
        with st.spinner("Splitting and verifying atomic facts…"):
            scored = score_turns(stored[: (replies[-1] + 1) if replies else 0], verifier, rule_splitter(), skip_before=first)
        cache[key] = [(i, s.as_dict()) for i, s in scored]
    if key in cache:
        show_scores(cache[key], "chat")
