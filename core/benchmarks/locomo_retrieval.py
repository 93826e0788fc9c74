"""LoCoMo retrieval: evidence recall@K and hit@K per method and question category.

Every conversation is indexed once per method (timed: `index`); every question with evidence is
asked once at the largest K (timed: `query`, retrieval only; the query embedding, shared by the
dense methods, is timed separately as `embed_query`). Headline figures are over categories 1-4;
category 5 (adversarial) is reported separately under `by_category`. With --qa, each method's
top-K context is answered and judged (SGMem prompts B.1/B.2) by the configured LLM.

Items are questions (id: the qid, "conv-26#3"); the figures are computed from the items alone
(`summarise`), so shards of a run merge into the single run's figures (core.benchmarks.merge). A shard
indexes every conversation its questions come from.
"""

from __future__ import annotations

import time

from core.benchmarks import retrieval_common as ev
from core.benchmarks.runner import BenchResult
from core.data.locomo import load_locomo

# sgmem-*+h: the hybrid sentence graph, not in the paper (docs/retrieval.md), beside the paper's sgmem-*
DEFAULT_METHODS = "rag-t,rag-r,rag-s,bm25-t,bm25-r,bm25-s,sgmem-t,sgmem-r,sgmem-s,sgmem-t+h,sgmem-r+h,sgmem-s+h,mcts-t,mcts-r,mcts-s"
HEADLINE = "categories 1-4"


def add_arguments(parser) -> None:
    ev.add_retrieval_arguments(parser, preset="locomo")
    parser.add_argument("--conversations", default="",
                        help="only these conversations (comma-separated sample ids, e.g. conv-26,conv-30); default all")


def run(ctx) -> BenchResult:
    from tqdm import tqdm

    ks = ev.parse_ks(ctx.options.get("ks", "5,10"))
    budgets = ev.parse_budgets(ctx.options.get("budgets", ev.DEFAULT_BUDGETS["locomo"]))
    conversations = load_locomo(ctx.data)
    if ctx.options.get("conversations"):
        chosen = [c.strip() for c in ctx.options["conversations"].split(",") if c.strip()]
        unknown = sorted(set(chosen) - {c.sample_id for c in conversations})
        if unknown:
            raise ValueError(f"no conversation {', '.join(unknown)} in {ctx.data}")
        conversations = [c for c in conversations if c.sample_id in chosen]
    questions = [(c, q) for c in conversations for q in c.questions if q.evidence]
    if ctx.limit:
        questions = questions[: ctx.limit]
    mine = ctx.plan([q.qid for _, q in questions])
    questions = [(c, q) for c, q in questions if q.qid in mine]
    wanted = {c.sample_id for c, _ in questions}
    conversations = [c for c in conversations if c.sample_id in wanted]
    s = ev.setup(ctx, ctx.methods)
    retrievers = ev.build(ctx.methods, s)
    names = [r.name for r in retrievers]
    items, timings = [], {n: {"index": [], "query": [], "query_cpu": []} for n in names}
    timings["shared"] = {"embed_query": []}
    qa_note = _qa_note(ctx, s)
    bar = tqdm(total=len(questions), desc="locomo-retrieval", disable=not ctx.progress)
    for conv in conversations:
        for r in retrievers:
            t0 = time.perf_counter()
            r.index(conv.dialogue)
            timings[r.name]["index"].append(time.perf_counter() - t0)
        for c, q in questions:
            if c.sample_id != conv.sample_id:
                continue
            seconds = s.embed_query(q.question)
            if seconds is not None:
                timings["shared"]["embed_query"].append(seconds)
            item = {"qid": q.qid, "sample_id": c.sample_id, "category": q.category, "category_name": q.category_name,
                    "question": q.question, "answer": q.answer or q.adversarial_answer, "evidence": list(q.evidence), "methods": {}}
            for r in retrievers:
                t0, c0 = time.perf_counter(), time.process_time()
                evidence = r.retrieve(q.question, max(ks))
                latency = time.perf_counter() - t0
                timings[r.name]["query"].append(latency)
                timings[r.name]["query_cpu"].append(time.process_time() - c0)  # robust to other jobs on a shared machine
                metrics = {**ev.turn_scores(evidence, q.evidence, ks), **ev.context_tokens(evidence, ks)}
                if ev.retriever_level(r) in budgets:
                    metrics.update(ev.budget_scores(evidence, q.evidence, budgets[ev.retriever_level(r)]))
                if qa_note is None:
                    answer, score = ev.answer_and_judge(s.llm, q.question, q.answer or "Not mentioned in the conversation",
                                                        ev.context_for(evidence, min(ks)), conv.dialogue.sessions[-1].date)
                    metrics["qa_accuracy"] = float("nan") if score is None else float(score)
                    item.setdefault("answers", {})[r.name] = {"answer": answer, "score": score}
                item["methods"][r.name] = {**{k: v for k, v in metrics.items()},
                                           "latency_s": round(latency, 6),
                                           "chunks": [e.source for e in ev.top_chunks(evidence, max(ks))]}
            ctx.write_item(item)
            items.append(item)
            bar.update(1)
    bar.close()
    settings = {"ks": ks, "budgets": budgets, "headline": HEADLINE, "embedder": s.embedder_name,
                "retrievers": {r.name: r.settings() for r in retrievers},
                "qa": qa_note or f"answered and judged by {s.llm.name}"}
    results, extra = summarise(items, settings)
    return BenchResult(results=results, timings=timings, settings=settings,
                       extra={**extra, "embedded_texts": getattr(s.retriever_context.embedder, "computed", None)})


# Extra summary fields a merge adds up over shards (work done, not a figure of the items).
MERGE_EXTRA = {"embedded_texts": "sum"}
TIMED_FIELDS = ev.TIMED_FIELDS


def item_id(item: dict) -> str:
    return item["qid"]


def summarise(items: list[dict], settings: dict) -> tuple[dict, dict]:
    """(results, extra) from the written items: per method the means over the headline questions
    and per category (a single run and merged shards both come here)."""
    tally = ev.Tally()
    names = list(settings["retrievers"])
    for item in items:
        groups = [item["category_name"]] + ([HEADLINE] if item["category"] != 5 else [])
        for name in names:
            tally.add(name, groups, ev.item_metrics(item["methods"][name]))
    categories = sorted({i["category_name"] for i in items})
    results = {n: {**tally.means(n, HEADLINE), "by_category": {cat: tally.means(n, cat) for cat in categories}} for n in names}
    return results, {"questions": len(items), "conversations": len({i["sample_id"] for i in items})}


def _qa_note(ctx, s) -> str | None:
    """None when QA runs; otherwise why not."""
    if not ctx.options.get("qa"):
        return "not run (pass --qa with a capable endpoint)"
    if not s.strong:
        print(f"note: --qa with {s.llm.name}, not a capable endpoint: its accuracy says little about retrieval")
    return None
