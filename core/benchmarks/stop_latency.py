"""Stop frees the model: a stopped reply must leave the next user's reply as fast as on an idle model.

Per trial, on the same MT-Bench-101 turn (golden history): (1) a `base` reply on the idle model,
timed (greedy, a fixed length, its prompt already in the model's cache from a first untimed reply,
so the idle and after-stop replies do the same work); (2) a reply of the stopped method (`--methods`, e.g. dsmart) started in a worker thread, as
the Chat page runs it, and stopped after `--stop-after` seconds, as the Stop button, a method
switch or a closed page stop it (the reply's cancel event); the time from the stop until the
worker has ended is `release_s`; (3) a `base` reply right after, timed, on the same model.

Reported per stopped method: idle and after-stop base reply medians, their ratio
`after_stop_over_idle` (the issue's bar: <= 1.5), release_s median / max, and how many LLM
requests the stopped reply still sent after the stop (`requests_after_stop`, should be 0 or 1:
at most the one in flight).
"""

from __future__ import annotations

import contextvars
import statistics
import threading
import time

from core.benchmarks.runner import BenchContext, BenchResult
from core.data.mtbench import load_mtbench, stratified
from core.llm import cancel as stopping
from core.llm import cost

DEFAULT_METHODS = "dsmart"


def add_arguments(parser) -> None:
    parser.add_argument("--stop-after", type=float, default=2.0, help="seconds a reply runs before it is stopped")


def run(ctx: BenchContext) -> BenchResult:
    from core.benchmarks.latency import _warm_up
    from core.methods import ReplyStream, create_method

    tools = ctx.make_tools()
    stop_after = float(ctx.options.get("stop_after") or 2.0)
    dialogues = stratified(load_mtbench(ctx.data), ctx.limit)
    _warm_up(tools, {})
    results, timings = {}, {}
    for name in ctx.methods:
        idle, after, release, late = [], [], [], []
        for d in dialogues:
            history, query = d.golden_dialogue(0), d.rounds[0].user
            base = create_method("base", tools, _fixed_base())
            _timed(base, history, query)  # the prompt into the cache: both timed replies find it there
            idle.append(_timed(base, history, query))
            stopped = create_method(name, tools)
            stream = ReplyStream(sink=lambda piece: None)
            with cost.measure() as meter:
                worker = threading.Thread(target=contextvars.copy_context().run,  # counted by this meter
                                          args=(_reply_until_stopped, stopped, history, query, stream), daemon=True)
                worker.start()
                time.sleep(stop_after)
                sent = cost.totals(meter.as_dict()).get("requests", 0)
                t0 = time.perf_counter()
                stream.cancel.set()
                worker.join()
                release.append(time.perf_counter() - t0)
                late.append(cost.totals(meter.as_dict()).get("requests", 0) - sent)
            after.append(_timed(base, history, query))
            ctx.write_item({"dialogue_id": d.id, "method": name, "idle_s": round(idle[-1], 4),
                            "after_stop_s": round(after[-1], 4), "release_s": round(release[-1], 4),
                            "requests_after_stop": late[-1]})
        results[name] = {
            "trials": len(idle),
            "idle_median_s": round(statistics.median(idle), 4),
            "after_stop_median_s": round(statistics.median(after), 4),
            "after_stop_over_idle": round(statistics.median(after) / statistics.median(idle), 3),
            "release_median_s": round(statistics.median(release), 4),
            "release_max_s": round(max(release), 4),
            "requests_after_stop_max": max(late),
        }
        timings[name] = {"idle": idle, "after_stop": after, "release": release}
    return BenchResult(results=results, timings=timings,
                       settings={"stop_after_s": stop_after, "dialogues": len(dialogues), "llm": tools.llm.name})


def _fixed_base():
    """base with greedy decoding and a fixed reply length: the two timed replies do the same work."""
    from dataclasses import replace

    from core.methods import method_class

    config = method_class("base").default_config()
    return replace(config, generation=replace(config.generation, temperature=0.0, max_tokens=FIXED_TOKENS))


FIXED_TOKENS = 48


def _timed(method, history, query) -> float:
    t0 = time.perf_counter()
    method.respond_counted(history, query)
    return time.perf_counter() - t0


def _reply_until_stopped(method, history, query, stream) -> None:
    """The Chat page's worker: the reply runs until it ends or is stopped (then nothing is kept)."""
    try:
        method.respond_streaming(history, query, stream)
    except stopping.Cancelled:
        pass
