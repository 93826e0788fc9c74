"""`dsm-update-answers`: do the chat methods answer knowledge-update questions with the latest value?

Issue 19, step 4: `dsm-updates` checks the graph; this checks the reply. For every LongMemEval
knowledge-update question (abstention questions skipped), each method reads the question's whole
dialogue through `observe` (fresh memory per question and method: the D-SMART graph, RAG's turn
index), then answers the question as the next user message. The reply is correct when it states
the gold answer, by the same string match `dsm-updates --explain` uses on dialogue text
(`dsm_check.states`: the number, every number of a time, or all the answer's content words).

Reported per method: `accuracy` over all questions and over each answer kind of `dsm-updates`
(`latest`: a current value; `earlier`: the question asks for the value before the update;
`unchecked`: yes/no or a sentence, matched by words), `stale_only` (numeric questions whose reply
states the stale number and not the latest), reply latency median / p95 and the memory upkeep time
per question. Methods answer in a rotating order so a slow spell of the CPU does not always land on
the same one.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter

from core.benchmarks.dsm_check import answer_kind, judge
from core.benchmarks.runner import BenchContext, BenchResult

DEFAULT_METHODS = "base,rag,dsm,dsmart"


def add_arguments(parser) -> None:
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cap the reply length of every method (same cap for all)")
    parser.add_argument("--offset", type=int, default=0,
                        help="skip the first N questions (split a long run; python -m core merge-update-answers joins the parts)")


def run(ctx: BenchContext) -> BenchResult:
    from core.benchmarks.latency import _close, method_config
    from core.data.longmemeval import load_longmemeval
    from core.methods import create_method

    tools = ctx.make_tools()
    methods = ctx.methods
    configs = {m: method_config(m, ctx.options.get("max_tokens")) for m in methods}
    instances = [i for i in load_longmemeval(ctx.data) if i.question_type == "knowledge-update" and not i.abstention]
    offset = ctx.options.get("offset") or 0
    instances = instances[offset : offset + ctx.limit if ctx.limit else None]
    iterator = instances
    if ctx.progress:
        from tqdm import tqdm

        iterator = tqdm(instances, desc="dsm-update-answers", unit="question")
    items: dict[str, list[dict]] = {m: [] for m in methods}
    timings: dict[str, dict[str, list[float]]] = {m: {} for m in methods}
    for n, instance in enumerate(iterator):
        kind = answer_kind(instance)
        order = methods[n % len(methods):] + methods[: n % len(methods)]
        for name in order:
            method = create_method(name, tools, configs[name])
            with ctx.metered(name):
                t0 = time.perf_counter()
                method.sync(instance.dialogue)  # observe every turn, wait for the memory
                if hasattr(method, "flush"):
                    method.flush()
                    method.wait()
                upkeep = time.perf_counter() - t0
                t1 = time.perf_counter()
                reply = method.respond_counted(instance.dialogue, instance.question)
                latency = time.perf_counter() - t1
            _close(method)
            item = {"question_id": instance.question_id, "method": name, "question": instance.question,
                    "answer": instance.answer, "answer_kind": kind, "reply": reply.text,
                    "evidence": [e.text for e in reply.evidence[:8]],
                    "latency_s": round(latency, 4), "upkeep_s": round(upkeep, 4), "llm_calls": reply.llm_calls,
                    **judge(reply.text, instance, kind)}
            ctx.write_item(item)
            items[name].append(item)
            timings[name].setdefault("reply", []).append(latency)
            timings[name].setdefault("upkeep", []).append(upkeep)
    results = {m: aggregate(items[m]) for m in methods}
    settings = {"questions": len(instances), "offset": offset, "llm": tools.llm.name, "strong": tools.strong,
                "max_tokens": ctx.options.get("max_tokens"),
                "question_type": "knowledge-update (abstention questions skipped)",
                "match": "dsm_check.states: the number, every number of a time, or all content words of the answer"}
    return BenchResult(results=results, timings=timings, settings=settings)


def aggregate(items: list[dict]) -> dict:
    from core.benchmarks.runner import summarise_samples

    def share(rows: list[dict], key: str) -> float:
        return sum(r[key] for r in rows) / len(rows) if rows else float("nan")

    kinds = Counter(i["answer_kind"] for i in items)
    out = {"questions": len(items), "accuracy": share(items, "correct")}
    for kind in ("latest", "earlier", "unchecked"):
        rows = [i for i in items if i["answer_kind"] == kind]
        out[f"accuracy_{kind}"] = share(rows, "correct")
        out[f"questions_{kind}"] = kinds[kind]
    numeric = [i for i in items if i["stale"] is not None]
    out["stale_only"] = share(numeric, "stale_only")
    out["questions_with_stale"] = len(numeric)
    latency = summarise_samples(i["latency_s"] for i in items)
    out["latency_median_s"] = round(latency["median_s"], 3)
    out["latency_p95_s"] = round(latency["p95_s"], 3)
    out["upkeep_median_s"] = round(statistics.median(i["upkeep_s"] for i in items), 3) if items else float("nan")
    return out
