"""OpenDialKG response generation: BLEU-4, ROUGE-L, entity F1 (and FactScore / NEIP) per method.

The paper's Table 2 rows on the configured LLM: `base` (the Table 6 prompt with no knowledge),
`bm25`, `kaping`, `triton` (top 5 triples by that ranker in the Table 6 knowledge-enhanced prompt)
and `triton-c` (rewrite first: the paper's LLM rewrite with a strong model (`--strong`), the
symbolic pronoun rewrite otherwise; the summary says which ran). Turns are the grounded
assistant turns of `--split` (default eval: index % 5 == 0); the reference is the annotated
response.

Metrics (higher is better, in [0, 1]): `bleu4` corpus BLEU (sacrebleu, 4-gram), `rouge_l` mean
ROUGE-L F, `entity_f1` mean F1 of the graph entities linked in the response against those in the
reference (turns where neither has one are left out; `entity_turns` counts the rest).
`--factscore` adds `factscore` (higher is better) and `neip` (lower is better) from
core/metrics/factscore.py, verifying each response's atomic facts against its retrieved triples
(none for `base`), the gold walk and the dialogue history.
"""

from __future__ import annotations

import time

import numpy as np

from core.benchmarks.runner import BenchContext, BenchResult

DEFAULT_METHODS = "base,bm25,kaping,triton,triton-c"
KNOWN = ("base", "bm25", "kaping", "triton", "triton-c")
FACTSCORE_MISSING = ("--factscore needs core/metrics/factscore.py (the adapted FactScore with NEIP, built by its own "
                     "issue); it is not in this checkout. Run without --factscore, or merge that work first.")


def add_arguments(parser) -> None:
    parser.add_argument("--split", choices=["eval", "all", "train"], default="eval")
    parser.add_argument("--no-shared-kg", action="store_true", help="graph from --data only")
    parser.add_argument("--kg-cache", default="", help="graph cache folder (default ~/.cache/dialogue-workbench/kg)")
    parser.add_argument("--factscore", action="store_true", help="also FactScore and NEIP (needs core/metrics/factscore.py)")
    parser.add_argument("--verifier", default="nli", help="FactScore verifier: nli | llm | judge (see core/metrics/factscore.py)")
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per generated response")
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy, so methods differ only by their prompt")


def check_factscore():
    """The FactScore module, or a clear error when this checkout does not have it."""
    try:
        from core.metrics import factscore
    except ImportError as err:
        raise RuntimeError(FACTSCORE_MISSING) from err
    return factscore


def entity_f1(pred: set[str], ref: set[str]) -> float | None:
    if not pred and not ref:
        return None
    tp = len(pred & ref)
    if not tp:
        return 0.0
    p, r = tp / len(pred), tp / len(ref)
    return 2 * p * r / (p + r)


def run(ctx: BenchContext) -> BenchResult:
    from sacrebleu.metrics import BLEU

    from core.benchmarks.opendialkg_triples import knowledge_for, load_examples
    from core.dialogue import Dialogue
    from core.llm.base import Message
    from core.llm.prompts import render_prompt
    from core.methods.kgaug.method import context_pairs, dialogue_lines, knowledge_lines
    from core.methods.kgaug.pipeline import KGPipeline, make_ranker
    from core.methods.kgaug.rewrite import LLMRewriter
    from core.metrics.lexical import rouge_l

    unknown = set(ctx.methods) - set(KNOWN)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; known: {', '.join(KNOWN)}")
    opts = ctx.options
    fs_module = check_factscore() if opts.get("factscore") else None  # fail before any generation
    if fs_module is not None:
        from core.metrics.fact_verifiers import make_verifier
    examples, stats = load_examples(ctx.data, opts.get("split", "eval"), ctx.limit)
    knowledge, _ = knowledge_for(ctx)
    tools = ctx.make_tools()
    # The verifier too is built before any generation: a missing model must not cost a whole run.
    verifier = (make_verifier(opts.get("verifier", "nli"), llm=tools.llm, strong=tools.strong)
                if fs_module is not None else None)
    rewrite_mode = "llm" if tools.strong else "symbolic"
    pipelines = {}
    for m in ctx.methods:
        if m == "base":
            continue
        ranker = make_ranker("triton" if m == "triton-c" else m, tools.embedder)
        rewriter = None
        if m == "triton-c":
            rewriter = (LLMRewriter(tools.llm, knowledge.symbolic_rewriter()) if rewrite_mode == "llm"
                        else knowledge.symbolic_rewriter())
        pipelines[m] = KGPipeline(knowledge, ranker, rewriter=rewriter)
    temperature, max_tokens = opts.get("temperature", 0.0), opts.get("max_tokens", 96)
    outputs = {m: [] for m in ctx.methods}
    timings = {m: {"retrieve": [], "generate": []} for m in ctx.methods}
    fact_rows = {m: [] for m in ctx.methods}
    for ex in examples:
        context = context_pairs(Dialogue.from_turns(ex.history().turns()).turns())[-6:]
        ref_entities = {e.name for e in knowledge.linker.link(ex.response)}
        record = {"id": ex.id, "query": ex.query, "reference": ex.response, "gold": [list(t) for t in ex.gold], "methods": {}}
        for m in ctx.methods:
            with ctx.metered(m):
                t0 = time.perf_counter()
                retrieval = pipelines[m].run(context, ex.query, 5) if m in pipelines else None
                timings[m]["retrieve"].append(time.perf_counter() - t0)
                shown = context
                if retrieval is not None and retrieval.rewrite is not None and retrieval.rewrite.method == "llm":
                    shown = list(zip([r for r, _ in context], retrieval.rewrite.context))
                prompt = render_prompt("kgaug_response",
                                       knowledge=knowledge_lines(retrieval) if retrieval else "(no knowledge given)",
                                       dialogue=dialogue_lines(shown), query=retrieval.used_query if retrieval else ex.query)
                t0 = time.perf_counter()
                text = tools.llm.chat([Message("user", prompt)], temperature=temperature, max_tokens=max_tokens).text
                timings[m]["generate"].append(time.perf_counter() - t0)
                pred_entities = {e.name for e in knowledge.linker.link(text)}
                row = {"response": text, "rouge_l": rouge_l(text, ex.response), "entity_f1": entity_f1(pred_entities, ref_entities),
                       "triples": [r.triple.key() for r in retrieval.ranked] if retrieval else [],
                       "used_query": retrieval.used_query if retrieval else ex.query}
                outputs[m].append(row)
                record["methods"][m] = row
                if fs_module is not None:
                    fact_rows[m].extend(_fact_rows(fs_module, knowledge, ex, context, text, retrieval, m))
        ctx.write_item(record)
    bleu = BLEU()
    refs = [ex.response for ex in examples]
    results = {}
    for m in ctx.methods:
        rows = outputs[m]
        ef = [r["entity_f1"] for r in rows if r["entity_f1"] is not None]
        results[m] = {
            "bleu4": bleu.corpus_score([r["response"] for r in rows], [refs]).score / 100 if rows else float("nan"),
            "rouge_l": float(np.mean([r["rouge_l"] for r in rows])) if rows else float("nan"),
            "entity_f1": float(np.mean(ef)) if ef else float("nan"),
            "entity_turns": len(ef),
            "turns": len(rows),
        }
        if fs_module is not None:
            results[m].update(_factscore_summary(fs_module, fact_rows[m], verifier))
    return BenchResult(results=results, timings=timings,
                       settings={"split": opts.get("split", "eval"), "llm": tools.llm.name, "strong": tools.strong,
                                 "triton_c_rewrite": rewrite_mode, "top_k": 5, "temperature": temperature,
                                 "max_tokens": max_tokens},
                       extra={"data_rows": stats.as_dict()})


# -- the FactScore hook (core/metrics/factscore.py) ----------------------------------------------
def _fact_rows(fs, knowledge, ex, context, response, retrieval, method) -> list[dict]:
    """Atomic facts of one response with their evidence (retrieved triples + the gold walk)."""
    from core.methods.kgaug.triples import as_prompt_line, canonical
    from core.metrics.fact_types import Passage

    evidence = [Passage(as_prompt_line(canonical(*t)), source="gold walk", kind="triple") for t in ex.gold]
    if retrieval is not None:
        evidence += [Passage(as_prompt_line(r.triple), source="retrieved", kind="triple") for r in retrieval.ranked]
    history = tuple((role, text) for role, text in context) + (("user", ex.query),)
    return [{"response_id": f"{ex.id}:{method}", "dialogue_id": str(ex.source.index), "history": history,
             "evidence": tuple(evidence), "response": response}]


def _factscore_summary(fs, rows: list[dict], verifier) -> dict:
    from core.metrics.atomic_facts import RuleFactSplitter
    from core.resources import load_spacy

    splitter = RuleFactSplitter(load_spacy())
    labelled = []
    for row in rows:
        facts = splitter.split(row["response"]).facts
        items = fs.facts_to_items(facts, row["history"], row["evidence"], row["response"], row["response_id"] + ":")
        verdicts = fs.verify_facts(items, verifier) if items else []
        if not verdicts:
            labelled.append({"response_id": row["response_id"], "dialogue_id": row["dialogue_id"], "label": None})
        labelled += [{"response_id": row["response_id"], "dialogue_id": row["dialogue_id"], "label": v.label} for v in verdicts]
    summary = fs.summarise_factscore(fs.group_responses(labelled))
    return {"factscore": summary.factscore, "neip": summary.neip, "factscore_ci95": list(summary.factscore_ci95),
            "neip_ci95": list(summary.neip_ci95), "facts": summary.n_facts}
