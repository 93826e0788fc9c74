"""LongMemEval retrieval: recall@K of evidence turns and of answer sessions, per question type.

Each instance's haystack is indexed once per method (timed: `index`) and its question asked once
at the largest K (timed: `query`). Turn recall counts the turns flagged `has_answer` inside the
top-K chunks; session recall (`session_recall@K`) counts answer sessions with any turn inside
them. Headline figures leave out abstention (`_abs`) questions, reported separately. On the oracle
file every haystack session is an answer session, so session recall is trivially high there and
turn recall is the informative figure; the S file has ~50 sessions per question.

Items are questions (id: question_id), each with its own haystack; the figures are computed from the
items alone (`summarise`), so shards of a run merge into the single run's figures (core.benchmarks.merge).
"""

from __future__ import annotations

import gc
import time

from core.benchmarks import retrieval_common as ev
from core.benchmarks.runner import BenchResult
from core.data.longmemeval import is_abstention, load_longmemeval, session_of

# sgmem-*+h: the hybrid sentence graph, not in the paper (docs/retrieval.md), beside the paper's sgmem-*
DEFAULT_METHODS = "rag-t,rag-r,rag-s,bm25-t,bm25-r,bm25-s,sgmem-t,sgmem-r,sgmem-s,sgmem-t+h,sgmem-r+h,sgmem-s+h,mcts-t,mcts-r,mcts-s"
HEADLINE = "all (no abstention)"


def add_arguments(parser) -> None:
    ev.add_retrieval_arguments(parser, preset="longmemeval")
    parser.add_argument("--per-type", type=int, default=None,
                        help="only the first N questions of each question type (the files are sorted by type)")


def first_per_type(instances, n: int):
    seen: dict[str, int] = {}
    out = []
    for inst in instances:
        if seen.get(inst.question_type, 0) < n:
            seen[inst.question_type] = seen.get(inst.question_type, 0) + 1
            out.append(inst)
    return out


def run(ctx) -> BenchResult:
    from tqdm import tqdm

    ks = ev.parse_ks(ctx.options.get("ks", "5,10"))
    budgets = ev.parse_budgets(ctx.options.get("budgets", ev.DEFAULT_BUDGETS["longmemeval"]))
    instances = load_longmemeval(ctx.data)
    if ctx.options.get("per_type"):
        instances = first_per_type(instances, ctx.options["per_type"])
    if ctx.limit:
        instances = instances[: ctx.limit]
    mine = ctx.plan([inst.question_id for inst in instances])
    instances = [inst for inst in instances if inst.question_id in mine]
    s = ev.setup(ctx, ctx.methods)
    retrievers = ev.build(ctx.methods, s)
    names = [r.name for r in retrievers]
    items, timings = [], {n: {"index": [], "index_cpu": [], "query": [], "query_cpu": []} for n in names}
    index_mb: dict[str, float] = {}
    timings["shared"] = {"embed_query": []}
    run_qa = bool(ctx.options.get("qa"))
    if run_qa and not s.strong:
        print(f"note: --qa with {s.llm.name}, not a capable endpoint: its accuracy says little about retrieval")
    for inst in tqdm(instances, desc="longmemeval-retrieval", disable=not ctx.progress):
        item = {"question_id": inst.question_id, "question_type": inst.question_type, "question": inst.question,
                "answer": inst.answer, "evidence_turns": list(inst.evidence_turn_ids),
                "answer_sessions": list(inst.answer_session_ids), "methods": {}}
        for r in retrievers:
            t0, c0 = time.perf_counter(), time.process_time()
            r.index(inst.dialogue)
            timings[r.name]["index"].append(time.perf_counter() - t0)
            timings[r.name]["index_cpu"].append(time.process_time() - c0)
            if r.nbytes() is not None:
                index_mb[r.name] = r.nbytes() / 2**20
        # Queries run after every index is built, with the garbage of building them collected: a
        # query should not pay for a full collection of a heap other methods' indexes filled (a
        # ~300 ms pause on this run's 2 GB heap, which landed on whichever query crossed the
        # threshold). Full collections that still happen inside a query are counted (`gc_full`).
        gc.collect()
        # the query is embedded once for every dense method, after the indexes (which warm the
        # embedder when they load), as in the app; `query` times below exclude it
        seconds = s.embed_query(inst.question)
        item["embed_query_s"] = seconds
        if seconds is not None:
            timings["shared"]["embed_query"].append(seconds)
        for r in retrievers:
            full0 = gc.get_stats()[2]["collections"]
            t0, c0 = time.perf_counter(), time.process_time()
            evidence = r.retrieve(inst.question, max(ks))
            latency = time.perf_counter() - t0
            timings[r.name]["query"].append(latency)
            timings[r.name]["query_cpu"].append(time.process_time() - c0)  # robust to other jobs on a shared machine
            gc_full = gc.get_stats()[2]["collections"] - full0
            metrics = {**ev.turn_scores(evidence, inst.evidence_turn_ids, ks),
                       **ev.turn_scores(evidence, [f"{sid}:0" for sid in inst.answer_session_ids], ks,
                                        unit=session_of, prefix="session_"),
                       **ev.context_tokens(evidence, ks)}
            if ev.retriever_level(r) in budgets:
                metrics.update(ev.budget_scores(evidence, inst.evidence_turn_ids, budgets[ev.retriever_level(r)]))
            if run_qa:
                answer, score = ev.answer_and_judge(s.llm, inst.question, inst.answer,
                                                    ev.context_for(evidence, min(ks)), inst.question_date)
                metrics["qa_accuracy"] = float("nan") if score is None else float(score)
                item.setdefault("answers", {})[r.name] = {"answer": answer, "score": score}
            item["methods"][r.name] = {**metrics, "latency_s": round(latency, 6), "gc_full": gc_full,
                                       "chunks": [e.source for e in ev.top_chunks(evidence, max(ks))]}
            if r.name in index_mb:
                item["methods"][r.name]["index_mb"] = index_mb.pop(r.name)
        ctx.write_item(item)
        items.append(item)
    settings = {"ks": ks, "budgets": budgets, "headline": HEADLINE, "embedder": s.embedder_name,
                "retrievers": {r.name: r.settings() for r in retrievers},
                "qa": f"answered and judged by {s.llm.name}" if run_qa else "not run (pass --qa with a capable endpoint)"}
    results, extra = summarise(items, settings)
    return BenchResult(results=results, timings=timings, settings=settings,
                       extra={**extra, "embedded_texts": getattr(s.retriever_context.embedder, "computed", None),
                              "peak_rss_mb": _peak_rss_mb()})


# Extra summary fields a merge takes from the shards: work done, and the largest process.
MERGE_EXTRA = {"embedded_texts": "sum", "peak_rss_mb": "max"}
TIMED_FIELDS = ev.TIMED_FIELDS


def item_id(item: dict) -> str:
    return item["question_id"]


def summarise(items: list[dict], settings: dict) -> tuple[dict, dict]:
    """(results, extra) from the written items: per method the means over the headline questions,
    the index memory per haystack, and the means per question type (abstention apart)."""
    tally = ev.Tally()
    names = list(settings["retrievers"])
    for item in items:
        groups = [item["question_type"]] + (["abstention"] if is_abstention(item["question_id"]) else [HEADLINE])
        for name in names:
            tally.add(name, groups, ev.item_metrics(item["methods"][name]))
    abstentions = any(is_abstention(i["question_id"]) for i in items)
    types = sorted({i["question_type"] for i in items}) + (["abstention"] if abstentions else [])
    results = {n: {**tally.means(n, HEADLINE),
                   **_memory([i["methods"][n]["index_mb"] for i in items if "index_mb" in i["methods"][n]]),
                   "by_type": {t: tally.means(n, t) for t in types}} for n in names}
    return results, {"questions": len(items)}


def _memory(values: list[float]) -> dict[str, float]:
    """Index memory per haystack (the retriever's own structures; the shared model not counted)."""
    if not values:
        return {}
    return {"index_mb_mean": round(sum(values) / len(values), 2), "index_mb_max": round(max(values), 2)}


def _peak_rss_mb() -> float:
    """Peak resident memory of the whole run (models, caches and all indexes), in MiB."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
