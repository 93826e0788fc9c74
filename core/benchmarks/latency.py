"""Latency: per-turn reply time of each method on MT-Bench-101 dialogues; dsmart_over_base ratio.

Every method answers every user turn of the same dialogues with the same LLM, in golden context
(the history is the benchmark's own `bot` turns), one fresh instance (fresh memory) per dialogue.
A turn's latency is the wall time of `respond` (what the user waits for). Memory maintenance
(`observe` of the round, then `wait`) runs after the reply, as in the chat, and is timed apart as
`maintenance`, never inside the turn. Methods take turns in a rotating order, so a slow spell of the
shared CPU does not always land on the same method. One-time loads (spaCy, the model's first
forward passes) happen before timing.

Reported per method: latency median / p95 / mean (s), LLM calls per turn (a batch of n counts n),
batched model invocations per turn for the tree methods, tree size; in the summary
`dsmart_over_base` (ratio of median turn latencies; the paper's is 1.27 s / 0.27 s = 4.7).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

from core.benchmarks.runner import BenchContext, BenchResult
from core.data.mtbench import load_mtbench, stratified
from core.dialogue import ASSISTANT, TRACE_TREE, USER, Dialogue, Turn

DEFAULT_METHODS = "base,dsm,rt,dsmart"


def add_arguments(parser) -> None:
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cap generated tokens of every method with `generation` settings (same cap for all)")
    parser.add_argument("--tree-early-stop", choices=("all_terminal", "best_terminal"), default=None,
                        help="Reasoning Tree stop rule for rt/dsmart (default: the config's, Algorithm 2's all_terminal)")
    add_tree_argument(parser)


def add_tree_argument(parser) -> None:
    parser.add_argument("--tree", default="", type=parse_tree_overrides,
                        help="Reasoning Tree settings for rt/dsmart, e.g. 'budget_s=0,policy=enumerated,value_scale=decimal' "
                             "(budget_s=0: the paper's unbounded search)")


def parse_tree_overrides(text: str) -> dict:
    """'budget_s=0,policy=enumerated' -> {"budget_s": 0.0, "policy": "enumerated"}, typed by RTConfig's fields."""
    from core.config import parse_overrides
    from core.methods.dsmart.reasoning_tree import RTConfig

    return parse_overrides(text, RTConfig, "--tree")


def method_config(name: str, max_tokens: int | None, early_stop: str | None = None, tree: dict | None = None):
    from core.methods import method_class

    config = method_class(name).default_config()
    if max_tokens is not None and config is not None and hasattr(config, "generation"):
        config = replace(config, generation=replace(config.generation, max_tokens=max_tokens))
    if early_stop is not None and hasattr(config, "tree"):
        config = replace(config, tree=replace(config.tree, early_stop=early_stop))
    if tree and hasattr(config, "tree"):
        config = replace(config, tree=replace(config.tree, **tree))
    return config


def run(ctx: BenchContext) -> BenchResult:
    from core.methods import create_method

    tools = ctx.make_tools()
    max_tokens = ctx.options.get("max_tokens")
    configs = {m: method_config(m, max_tokens, ctx.options.get("tree_early_stop"), ctx.options.get("tree")) for m in ctx.methods}
    dialogues = stratified(load_mtbench(ctx.data), ctx.limit)
    _warm_up(tools, configs)
    samples = {m: [] for m in ctx.methods}
    timings: dict[str, dict[str, list[float]]] = {m: {} for m in ctx.methods}
    iterator = dialogues
    if ctx.progress:
        from tqdm import tqdm

        iterator = tqdm(dialogues, desc="latency", unit="dialogue")
    turn_no = 0
    for d in iterator:
        methods = {m: create_method(m, tools, configs[m]) for m in ctx.methods}
        for i, rnd in enumerate(d.rounds):
            history = d.golden_dialogue(i)
            order = ctx.methods[turn_no % len(ctx.methods):] + ctx.methods[: turn_no % len(ctx.methods)]
            turn_no += 1
            for name in order:
                with ctx.metered(name):
                    item = _timed_turn(methods[name], history, rnd.user, rnd.bot, tools.llm)
                item.update({"dialogue_id": d.id, "task": d.task, "turn": i, "method": name})
                ctx.write_item(item)
                samples[name].append(item)
                stages = timings[name]
                stages.setdefault("turn", []).append(item["latency_s"])
                stages.setdefault("maintenance", []).append(item["maintenance_s"])
                for stage, seconds in item["stages"].items():
                    stages.setdefault(stage, []).append(seconds)
        for method in methods.values():
            _close(method)
    results = {m: _aggregate(samples[m]) for m in ctx.methods}
    extra = {}
    base = statistics.median(timings["base"]["turn"]) if timings.get("base", {}).get("turn") else 0.0
    for m in ctx.methods:
        if m != "base" and base > 0 and timings[m].get("turn"):
            extra[f"{m}_over_base"] = round(statistics.median(timings[m]["turn"]) / base, 3)
    for m in ctx.methods:
        if f"{m}_over_base" in extra:
            results[m]["over_base"] = extra[f"{m}_over_base"]
    settings = {"dialogues": len(dialogues), "turns": turn_no, "llm": tools.llm.name, "strong": tools.strong,
                "llm_dtype": getattr(tools.llm, "dtype", None), "max_tokens": max_tokens}
    tree_cfg = getattr(configs.get("dsmart") or configs.get("rt"), "tree", None)
    if tree_cfg is not None:
        from dataclasses import asdict

        settings["tree"] = asdict(tree_cfg)
    return BenchResult(results=results, timings=timings, settings=settings, extra=extra)


def _warm_up(tools, configs) -> None:
    """One-time loads kept out of the timings: spaCy (extractor, entity linker) and the first
    forward passes of the model (one short generation, one scoring call)."""
    from core.llm.base import Message
    from core.resources import load_spacy

    load_spacy(tools.spacy_model)
    tools.llm.chat("Hello!", max_tokens=4)
    if tools.llm.supports_scoring:
        tools.llm.score_batch([([Message("user", "Score:")], ["0.5", "1.0"])])


def _timed_turn(method, history: Dialogue, user: str, golden: str, llm) -> dict:
    """Answer one user turn (timed), then maintain memory with the golden round (timed apart)."""
    calls0 = llm.calls
    t0 = time.perf_counter()
    reply = method.respond_counted(history, user)
    latency = time.perf_counter() - t0
    calls = llm.calls - calls0
    t1 = time.perf_counter()
    session = history.next_session
    method.observe(Turn(USER, user, session=session))
    method.observe(Turn(ASSISTANT, golden, session=session))
    method.wait()
    item = {"latency_s": round(latency, 6), "maintenance_s": round(time.perf_counter() - t1, 6),
            "llm_calls": calls, "stages": {k: round(v, 4) for k, v in reply.timings.items()},
            "reply_chars": len(reply.text), "cost": reply.cost}
    if reply.trace is not None and reply.trace.kind == TRACE_TREE:
        root = reply.trace.nodes[0].detail
        best = next(n for n in reply.trace.nodes if n.detail.get("best"))
        item["tree"] = {"nodes": len(reply.trace.nodes), "expansions": root["expansions"], "batches": root["batches"],
                        "stop_reason": root["stop_reason"], "best_depth": best.depth, "best_action": best.detail["action"],
                        "memory_facts": root.get("memory_facts", 0)}
    return item


def _aggregate(items: list[dict]) -> dict:
    from core.benchmarks.runner import summarise_samples
    from core.llm.cost import totals

    lat = summarise_samples(i["latency_s"] for i in items)
    out = {
        "turns": len(items),
        "latency_median_s": round(lat["median_s"], 4),
        "latency_p95_s": round(lat["p95_s"], 4),
        "latency_mean_s": round(statistics.fmean(i["latency_s"] for i in items), 4) if items else float("nan"),
        "llm_calls_per_turn": round(statistics.fmean(i["llm_calls"] for i in items), 2) if items else float("nan"),
        "maintenance_median_s": round(summarise_samples(i["maintenance_s"] for i in items)["median_s"], 3),
    }
    work = [totals(i.get("cost") or {}) for i in items]
    for key in ("requests", "processed_tokens", "cached_tokens", "generated_tokens"):
        if any(key in w for w in work):  # where the backend reports its requests (llama.cpp)
            out[f"{key}_per_turn"] = round(statistics.fmean(w.get(key, 0) for w in work), 1)
    trees = [i["tree"] for i in items if "tree" in i]
    if trees:
        out["model_batches_per_turn"] = round(statistics.fmean(t["batches"] for t in trees), 2)
        out["tree_nodes_per_turn"] = round(statistics.fmean(t["nodes"] for t in trees), 2)
        out["expansions_per_turn"] = round(statistics.fmean(t["expansions"] for t in trees), 2)
        out["best_depth_mean"] = round(statistics.fmean(t["best_depth"] for t in trees), 2)
        out["memory_facts_mean"] = round(statistics.fmean(t["memory_facts"] for t in trees), 2)
    return out


def _close(method) -> None:
    memory = getattr(method, "memory", None)
    if memory is not None and hasattr(memory, "close"):
        memory.close()
