"""Knowledge retrieval (MCTS paper, Tables III-IV): pairwise diversity and human-logic alignment of 5 KB sentences per context.

Data: a DailyDialog or EmpatheticDialogues file; `--kb` a GenericsKB-format file. One context per
dialogue: its turns up to the last but one (at most `--context-turns` of them); the last turn is
the next human turn, the logic transition. Each method retrieves 5 sentences. Rows: mcts,
mcts-no-reasoner, mcts-no-bridging (the paper's ablations), dense (SBERT = all-MiniLM-L6-v2), bm25,
sgmem (SGMem-style sentence graph). As in the paper, the baselines' query is the context plus the
reasoner's inferences (`--baseline-query context` for the context alone).

Metrics (names fixed): semantic_overlap_p/_r/_f1 (BERTScore between every pair of a method's
sentences), rouge1/2/l_overlap (ROUGE F between the pairs), all 0-100 and lower = more diverse;
alignment@0.5, alignment_no_threshold, alignment_curve (core.metrics.alignment). `paired`: each
MCTS row minus each baseline on the same contexts, with a 95% bootstrap interval. Timings per
method: `query` = the whole retrieval for one context (the reasoner's run included for the
methods that use it), `search` = without the reasoner; `reasoner.infer` counts only runs where the
LLM actually ran (not served from the reasoner's disk cache).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from core.benchmarks.runner import BenchResult

DEFAULT_METHODS = "mcts,mcts-no-reasoner,mcts-no-bridging,dense,bm25,sgmem"
MCTS_ROWS = ("mcts", "mcts-no-reasoner", "mcts-no-bridging")
BASELINE_ROWS = ("dense", "bm25", "sgmem")


def add_arguments(parser) -> None:
    from core.methods.mcts.config import DEFAULT_KB

    g = parser.add_argument_group("knowledge retrieval")
    g.add_argument("--kb", default=str(DEFAULT_KB), help="GenericsKB-format file: term<TAB>sentence<TAB>score")
    g.add_argument("--kb-limit", type=int, default=None, help="use the first N distinct KB sentences only (a slice)")
    g.add_argument("--k", type=int, default=5, help="sentences retrieved per context (paper: 5)")
    g.add_argument("--context-turns", type=int, default=4, help="turns of context before the next turn")
    g.add_argument("--baseline-query", choices=["context+reasoner", "context"], default="context+reasoner",
                   help="what the dense/bm25/sgmem baselines search with (paper: context + reasoner inferences)")
    g.add_argument("--no-reasoner-cache", action="store_true", help="run the LLM for every context (for timing)")
    g.add_argument("--simulations", type=int, default=None, help="override: MCTS simulations per tree")
    g.add_argument("--reasoner", default="", type=_reasoner_overrides,
                   help="reasoner settings, e.g. 'budget_s=0' (all 11 relations, unbounded) or 'turn_words=0,round_size=2'")
    g.add_argument("--nli-model", default="", help="NLI model for P_e (default: assets/models/nli-minilm-l6)")
    g.add_argument("--bertscore-model", default="", help="BERTScore model folder or id (default: packaged MiniLM)")
    g.add_argument("--bertscore-layers", type=int, default=4)
    g.add_argument("--kb-cache", default="", help="cache folder of built KBs (default ~/.cache/dialogue-workbench)")


def _reasoner_overrides(text: str) -> dict:
    from core.config import parse_overrides
    from core.methods.mcts.config import ReasonerSettings

    return parse_overrides(text, ReasonerSettings, "--reasoner")


def contexts(path, limit: int | None, turns: int) -> list[dict]:
    from core.data.chitchat import load_chitchat

    out = []
    for d in load_chitchat(path):
        if len(d.utterances) < 2:
            continue
        n = len(d.utterances) - 1
        out.append({"id": d.id, "context": d.lines(n)[-turns:], "transition": d.utterances[n], "speaker": d.speakers[n]})
        if limit and len(out) >= limit:
            break
    return out


def _build_methods(names, kb, embedder, simulations):
    from core.methods.mcts.baselines import BASELINES
    from core.methods.mcts.config import ABLATIONS
    from core.methods.mcts.retriever import KnowledgeSearch

    out = {}
    for name in names:
        if name in ABLATIONS:
            config = ABLATIONS[name]
            if simulations:
                config = replace(config, search=replace(config.search, simulations=simulations))
            out[name] = KnowledgeSearch(kb, embedder, config)
        elif name in BASELINES:
            out[name] = BASELINES[name](kb, embedder)
        else:
            raise ValueError(f"unknown knowledge-retrieval method {name!r}; known: {', '.join(MCTS_ROWS + BASELINE_ROWS)}")
    return out


def _uses_reasoner(name: str, baseline_query: str) -> bool:
    return name in ("mcts", "mcts-no-bridging") or (name in BASELINE_ROWS and baseline_query == "context+reasoner")


def run(ctx) -> BenchResult:
    from tqdm import tqdm

    from core.methods.mcts.config import ReasonerSettings
    from core.methods.mcts.kb import load_or_build
    from core.methods.mcts.reasoner import Reasoner

    o = ctx.options
    k, bq = int(o.get("k", 5)), o.get("baseline_query", "context+reasoner")
    items = contexts(ctx.data, ctx.limit, int(o.get("context_turns", 4)))
    tools = ctx.make_tools()
    embedder = tools.need_embedder()
    t0 = time.perf_counter()
    kb = load_or_build(o.get("kb") or _default_kb(), embedder, limit=o.get("kb_limit"), cache_dir=o.get("kb_cache") or None)
    kb_seconds = time.perf_counter() - t0
    methods = _build_methods(ctx.methods, kb, embedder, o.get("simulations"))
    need_reasoner = any(_uses_reasoner(m, bq) for m in methods)
    reasoner_settings = ReasonerSettings(**{"cache": not o.get("no_reasoner_cache"), **(o.get("reasoner") or {})})
    reasoner = Reasoner(tools.llm, embedder, reasoner_settings, cache_dir=o.get("kb_cache") or None) if need_reasoner else None
    timings = {m: {"query": [], "search": []} for m in methods}
    timings["reasoner"] = {"infer": []}
    retrieved = {m: [] for m in methods}
    cached_runs, inferred = 0, []  # inferred: relations with a completion per context (a budget drops some)
    for item in tqdm(items, desc="knowledge-retrieval", disable=not ctx.progress):
        reasoning, r_seconds = None, 0.0
        if reasoner is not None:
            calls = tools.llm.calls
            t1 = time.perf_counter()
            reasoning = reasoner.infer(item["context"])
            inferred.append(len(reasoning.candidates))
            r_seconds = time.perf_counter() - t1
            if tools.llm.calls > calls:
                timings["reasoner"]["infer"].append(r_seconds)
            else:
                cached_runs += 1
        record = {**item, "reasoning": reasoning.as_dict() if reasoning else None, "methods": {}}
        for name, method in methods.items():
            t2 = time.perf_counter()
            found, notes = _retrieve(name, method, item["context"], reasoning, k, bq)
            search_s = time.perf_counter() - t2
            total = search_s + (r_seconds if _uses_reasoner(name, bq) else 0.0)
            timings[name]["search"].append(search_s)
            timings[name]["query"].append(total)
            retrieved[name].append([e.text for e in found])
            record["methods"][name] = {"sentences": [e.text for e in found], "scores": [round(e.score, 4) for e in found],
                                       "ids": [e.meta.get("sentence_id") for e in found], "query_s": round(total, 4),
                                       "search_s": round(search_s, 4), "notes": notes}
        ctx.write_item(record)
    per = per_context([it["transition"] for it in items], retrieved, o)
    results = _metrics(per, retrieved)
    return BenchResult(
        results=results,
        timings=timings,
        settings={"kb": _relative(o.get("kb") or _default_kb()), "kb_sentences": len(kb), "kb_concepts": len(kb.concepts),
                  "kb_groups": kb.groups.n_groups, "kb_sha256": kb.header.get("source_sha256", ""), "k": k,
                  "baseline_query": bq, "embedder": embedder.name, "llm": tools.llm.name if need_reasoner else None,
                  "reasoner": {"budget_s": reasoner_settings.budget_s, "round_size": reasoner_settings.round_size,
                               "turn_words": reasoner_settings.turn_words, "relations": list(reasoner_settings.relations)},
                  "bertscore": f"{o.get('bertscore_model') or 'packaged all-MiniLM-L6-v2'}, layer {o.get('bertscore_layers', 4)}",
                  "nli": o.get("nli_model") or "assets/models/nli-minilm-l6",
                  "alignment": "premise = next human turn, hypothesis = knowledge; per context the best sentence"},
        extra={"contexts": len(items), "kb_load_s": round(kb_seconds, 2), "reasoner_cache_hits": cached_runs,
               "inferences_per_context": {"median": float(np.median(inferred)), "min": min(inferred)} if inferred else None,
               "paired": paired_differences(per)},
    )


def _default_kb() -> str:
    from core.methods.mcts.config import DEFAULT_KB

    return str(DEFAULT_KB)


def _relative(path: str) -> str:
    """A path as the repository sees it (e.g. ../shared/data/...), for summaries that travel."""
    import os

    from core.paths import REPO_ROOT

    return os.path.relpath(os.path.abspath(path), REPO_ROOT)


def _retrieve(name, method, context, reasoning, k, baseline_query):
    from core.text import without_speaker

    if name in MCTS_ROWS:
        result = method.run(context, reasoning, k)
        return list(result.knowledge), list(result.notes)
    query = " ".join(without_speaker(t) for t in context)  # 'Listener:' / 'A:' tags are no query words
    if baseline_query == "context+reasoner" and reasoning is not None:
        query = f"{query} {' '.join(r.sentence for r in reasoning.selected)}"
    return method.retrieve(query, k), []


def _metrics(per: dict, retrieved: dict) -> dict:
    """The table's rows: per method, the per-context values averaged (0-100)."""
    from core.metrics.alignment import alignment_scores

    results = {}
    for name, sets in retrieved.items():
        sem = [s for s in per[name]["semantic"] if s is not None]
        rouge = [r for r in per[name]["rouge"] if r is not None]
        results[name] = {
            "semantic_overlap_p": _pct([s["p"] for s in sem]), "semantic_overlap_r": _pct([s["r"] for s in sem]),
            "semantic_overlap_f1": _pct([s["f1"] for s in sem]),
            "rouge1_overlap": _pct([r["rouge1"] for r in rouge]), "rouge2_overlap": _pct([r["rouge2"] for r in rouge]),
            "rougel_overlap": _pct([r["rougeL"] for r in rouge]),
            **alignment_scores(per[name]["best"]),
            "mean_retrieved": round(float(np.mean([len(s) for s in sets])), 3) if sets else 0.0,
            "n": len(sets),
        }
    return results


def per_context(transitions, retrieved, options) -> dict[str, dict[str, list]]:
    """Per method, per context: BERTScore overlap (p, r, f1) and ROUGE overlaps of its sentences'
    pairs (None under two sentences), and the best entailment of the next turn by one of them."""
    from core.metrics.alignment import best_entailment
    from core.metrics.diversity import bertscore_overlap, load_bertscorer, rouge_overlap
    from core.metrics.nli import load_nli

    bert = load_bertscorer(options.get("bertscore_model", ""), int(options.get("bertscore_layers", 4)))
    nli = load_nli(options.get("nli_model", ""))
    return {name: {"semantic": bertscore_overlap(sets, bert), "rouge": [rouge_overlap(s) for s in sets],
                   "best": best_entailment(transitions, sets, nli)} for name, sets in retrieved.items()}


PAIRED_METRICS = ("semantic_overlap_f1", "rougel_overlap", "alignment@0.5")


def context_values(per: dict[str, list], metric: str) -> list[float | None]:
    """One method's per-context value of a headline metric, 0-1 (None where it is undefined)."""
    if metric == "semantic_overlap_f1":
        return [s["f1"] if s else None for s in per["semantic"]]
    if metric == "rougel_overlap":
        return [r["rougeL"] if r else None for r in per["rouge"]]
    if metric == "alignment@0.5":
        return [float(b > 0.5) for b in per["best"]]
    raise ValueError(f"no per-context values for {metric!r}")


def paired_differences(per: dict[str, dict[str, list]], rows=MCTS_ROWS, against=BASELINE_ROWS,
                       metrics=PAIRED_METRICS, resamples: int = 2000, seed: int = 0) -> dict:
    """Each MCTS row minus each baseline on the same contexts, per metric: the mean difference and
    its 95% bootstrap interval, x100 like the table (overlaps: below 0 = more diverse; alignment:
    above 0 = better aligned). Contexts where either value is undefined are left out."""
    from core.metrics.report import bootstrap_ci

    out = {}
    for a in (r for r in rows if r in per):
        for b in (r for r in against if r in per):
            cell = {}
            for metric in metrics:
                diffs = [x - y for x, y in zip(context_values(per[a], metric), context_values(per[b], metric))
                         if x is not None and y is not None]
                low, high = bootstrap_ci(diffs, resamples, seed)
                cell[metric] = {"diff": round(100 * float(np.mean(diffs)), 2) if diffs else float("nan"),
                                "low": round(100 * low, 2), "high": round(100 * high, 2), "n": len(diffs)}
            out[f"{a} - {b}"] = cell
    return out


def _pct(values) -> float:
    return round(100 * float(np.mean(values)), 2) if values else float("nan")
