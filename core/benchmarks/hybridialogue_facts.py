"""HybriDialogue facts: a FactScore verifier's labels against the human factualLabel, per fact.

Data: any file of the HybriDialogue annotated format (FineDialFact; ../shared/data/hybridialogue/).
Rows are verifiers (`--methods nli,llm,judge`): `nli` = the offline classifier over NLI and lexical
signals (assets/models/factcheck), `llm` = the paper's Table 8 prompt on the configured LLM (the
embedded model scores the three answers by likelihood), `judge` = the same prompt on an
OpenAI-compatible endpoint (needs --base-url / WORKBENCH_LLM_BASE_URL). Reported: accuracy,
macro_f1, kappa (3-way), kappa_binary (Supports vs not), the confusion matrix (rows human, columns
verifier, in the order Supports, Refutes, Not Enough Info), and FactScore / NEIP from the human
labels and from the verifier's, per response type, with bootstrap 95% intervals over dialogue
turns. Facts are verified one at a time by default, so `verify_fact` timings are per fact (wall and
process CPU seconds); `--batch N` verifies N together (throughput; each fact gets its batch's time / N).
`--limit N` takes the first N facts. Malformed items are skipped and counted.
Each row of items.jsonl also carries the query, history, response and passages, and `human` (the
gold label), so the run folder imports as an annotation task (`python -m core annotation import`).
"""

from __future__ import annotations

import hashlib
import time

from core.benchmarks.runner import BenchContext, BenchResult
from core.metrics.fact_types import LABELS

DEFAULT_METHODS = "nli"


def add_arguments(parser) -> None:
    parser.add_argument("--factcheck-model", default="", help="folder of the nli verifier's classifier (default assets/models/factcheck)")
    parser.add_argument("--nli-model", default="", help="NLI model id or folder (default: the classifier's)")
    parser.add_argument("--batch", type=int, default=1,
                        help="facts verified together (default 1: per-fact latency; N > 1: throughput, each fact's "
                             "seconds = its batch's / N)")


def _key(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:12]


def make_bench_verifier(name: str, ctx: BenchContext):
    from core.metrics.fact_verifiers import make_verifier

    if name == "nli":
        return make_verifier("nli", model_dir=ctx.options.get("factcheck_model", ""), nli_model=ctx.options.get("nli_model", ""))
    tools = ctx.make_tools() if ctx.make_tools else None
    if tools is None:
        raise ValueError(f"the {name} verifier needs an LLM")
    if name == "llm":
        return make_verifier("llm", llm=tools.llm, strong=tools.strong)
    if name == "judge":
        from core.llm.openai_backend import OpenAICompatibleLLM
        from core.llm.queued import backend_of

        judge = tools.llm if isinstance(backend_of(tools.llm), OpenAICompatibleLLM) else None
        return make_verifier("judge", judge_llm=judge)
    return make_verifier(name)


def per_type_scores(rows: list[dict], label_key: str, seed: int) -> tuple[dict, dict, dict, dict]:
    """(factscore, neip, factscore_ci95, neip_ci95), each {response type or "all": value}."""
    from core.metrics.factscore import group_responses, summarise_factscore

    fs, ne, fs_ci, ne_ci = {}, {}, {}, {}
    types = ["all"] + sorted({r["type"] for r in rows})
    for t in types:
        mine = [r for r in rows if t == "all" or r["type"] == t]
        s = summarise_factscore(group_responses(mine, label_key), seed=seed)
        fs[t], ne[t], fs_ci[t], ne_ci[t] = s.factscore, s.neip, list(s.factscore_ci95), list(s.neip_ci95)
    return fs, ne, fs_ci, ne_ci


def item_context(item) -> dict:
    """What an annotator needs beside the fact (`python -m core annotation import RUN_FOLDER`): the
    query, the history before it, the response, and all passages given with the item."""
    return {"query": item.query, "history": [[who, text] for who, text in item.history[:-1]], "response": item.response,
            "passages": [{"id": p.source, "title": p.title, "text": p.text} for p in item.evidence]}


def _verified(facts, verifier, batch: int, progress: bool, method: str):
    """(fact, verdict, wall seconds, CPU seconds) per fact; with batch > 1 each fact gets its batch's
    time divided by the batch's size."""
    from tqdm import tqdm

    bar = tqdm(total=len(facts), disable=not progress, desc=f"hybridialogue-facts {method}")
    for start in range(0, len(facts), batch):
        chunk = facts[start : start + batch]
        t0, c0 = time.perf_counter(), time.process_time()
        verdicts = verifier.verify([f.item for f in chunk])
        seconds, cpu_s = (time.perf_counter() - t0) / len(chunk), (time.process_time() - c0) / len(chunk)
        bar.update(len(chunk))
        yield from ((f, v, seconds, cpu_s) for f, v in zip(chunk, verdicts))
    bar.close()


def run(ctx: BenchContext) -> BenchResult:
    from core.data.hybridialogue import load_hybridialogue_facts
    from core.metrics.fact_train import agreement

    loaded = load_hybridialogue_facts(ctx.data, ctx.limit)
    if not loaded.facts:
        raise ValueError(f"{ctx.data} holds no well-formed annotated facts ({loaded.skipped} skipped: {list(loaded.reasons)[:3]})")
    batch = max(1, int(ctx.options.get("batch") or 1))
    results: dict[str, dict] = {}
    timings: dict[str, dict[str, list[float]]] = {}
    errors: dict[str, str] = {}
    for method in ctx.methods:
        try:
            verifier = make_bench_verifier(method, ctx)
        except ValueError as err:  # e.g. judge with no endpoint: say so in the summary, run the others
            errors[method] = str(err)
            results[method] = {"error": str(err)}
            continue
        rows, wall, cpu = [], [], []
        for fact, verdict, seconds, cpu_s in _verified(loaded.facts, verifier, batch, ctx.progress, method):
            wall.append(seconds)
            cpu.append(cpu_s)
            context = fact.context_key
            row = {
                "method": method, "id": fact.item.id, "type": fact.response_type,
                "dialogue_id": _key(context), "response_id": _key(context, fact.response_type, fact.item.response),
                "fact": fact.item.fact, "human": fact.label, "label": verdict.label,
                "confidence": round(verdict.confidence, 4), "probs": [round(p, 4) for p in verdict.probs],
                "note": verdict.note, "seconds": round(wall[-1], 4), "cpu_s": round(cpu[-1], 4),
                "evidence": [{"text": u.text[:300], "title": u.title, "score": u.score, "p_entailment": u.p_entailment,
                              "p_contradiction": u.p_contradiction} for u in verdict.evidence[:3]],
                **item_context(fact.item),
            }
            ctx.write_item(row)
            rows.append(row)
        res = agreement([r["human"] for r in rows], [r["label"] for r in rows])
        fs_h, ne_h, fs_h_ci, ne_h_ci = per_type_scores(rows, "human", ctx.seed)
        fs_v, ne_v, fs_v_ci, ne_v_ci = per_type_scores(rows, "label", ctx.seed)
        res.update({
            "factscore_human": fs_h, "factscore_verifier": fs_v, "neip_human": ne_h, "neip_verifier": ne_v,
            "factscore_human_ci95": fs_h_ci, "factscore_verifier_ci95": fs_v_ci,
            "neip_human_ci95": ne_h_ci, "neip_verifier_ci95": ne_v_ci,
            "n_facts": len(rows), "label_counts_human": {l: sum(r["human"] == l for r in rows) for l in LABELS},
            "label_counts_verifier": {l: sum(r["label"] == l for r in rows) for l in LABELS},
        })
        if getattr(verifier, "failures", 0):
            res["unparsed_answers"] = verifier.failures
        results[method] = res
        timings[method] = {"verify_fact": wall, "verify_fact_cpu": cpu}
    return BenchResult(
        results=results, timings=timings,
        settings={"confusion_order": list(LABELS), "batch": batch},
        extra={"n_facts": len(loaded.facts), "skipped_items": loaded.skipped, "skip_reasons": list(loaded.reasons),
               **({"errors": errors} if errors else {})},
    )
