"""One benchmark run as the command line, a page or a lab script starts it: a typed BenchRequest,
and the BenchContext the runner takes (`bench_context`; also built on each Ray worker).

`python -m core bench NAME ...` turns its flags into a request (core.cli). Code that starts a run
without the command line fills the request's options with `benchmark_options`, which reads the
benchmark's own flags (its `add_arguments`) at their defaults: the run records the same settings
as the same command line would, so its summary compares and merges with command-line runs.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.benchmarks.runner import BenchContext, load_benchmark, portable_settings
from core.benchmarks.shards import Shard
from core.config import LLMSettings
from core.toolkit import make_toolkit

# Flags that say how or where a run goes, not what it measures: kept out of the summary's settings,
# so a sharded or Ray run records the settings of the single run.
RUN_FLAGS = frozenset({"command", "func", "benchmark", "data", "out", "methods", "limit", "seed", "quiet",
                       "backend", "model", "base_url", "strong", "shard", "ray", "ray_shards", "ray_workers", "ray_cpus",
                       "ray_gpus", "ray_retries", "argv", "workers"})
# The command line's LLM flags that a summary records (as given, None when not): a run started from
# code takes its LLM settings whole (BenchRequest.llm), so it records them as not given.
LLM_FLAGS_NOT_GIVEN: dict[str, Any] = {"threads": None, "n_ctx": None, "llm_seed": None, "dtype": None}


@dataclass(frozen=True)
class BenchRequest:
    benchmark: str  # a name of core.benchmarks.runner.BENCHMARKS
    data: Path
    out: Path
    methods: tuple[str, ...]
    llm: LLMSettings  # the methods' LLM; a QA benchmark's reader
    # settings the summary records beside methods, limit, seed and the embedders: the benchmark's own
    # options and the LLM flags as given (benchmark_options fills them for a run started from code)
    options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    seed: int = 0
    progress: bool = True  # a progress bar on the terminal
    embedder: str = ""  # minilm, mpnet, a folder or HF id; "" = core.embedders.DEFAULT_EMBEDDER
    recall_embedder: str | None = None  # the DSM's recall ranker (None = core.embedders.RECALL_EMBEDDER)
    argv: tuple[str, ...] = ()  # the `python -m core` arguments that make this run: its command in the summary
    fresh: bool = False  # a resumable benchmark starts its folder afresh instead of resuming it
    make_judge: Callable[[Any], Any] | None = None  # reader LLM -> judge LLM: QA benchmarks' --judge
    workers: int = 1  # processes that embed (core.embed_pool)


def benchmark_options(name: str, **values: Any) -> dict[str, Any]:
    """BenchRequest.options of a run of `name` started from code, as `bench NAME` with only `values`
    given (by their argparse dest, e.g. conversations="conv-26"): every option the benchmark
    declares at its default, `values` over them; raises ValueError for an option it does not declare."""
    declared = argparse.ArgumentParser(add_help=False)
    module = load_benchmark(name)
    if hasattr(module, "add_arguments"):
        module.add_arguments(declared)
    defaults = vars(declared.parse_args([]))
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ValueError(f"{name} has no option {', '.join(unknown)}; it has {', '.join(sorted(defaults))}")
    chosen = {**defaults, **values}
    return {**LLM_FLAGS_NOT_GIVEN, **{k: v for k, v in chosen.items() if k not in RUN_FLAGS}}


def bench_context(request: BenchRequest, out: Path | None = None, shard: Shard | None = None, **hooks) -> BenchContext:
    """The BenchContext of `request`, writing to `out` (default request.out) and running only `shard`
    when given; `hooks` are BenchContext's callbacks (on_plan, on_item)."""
    module = load_benchmark(request.benchmark)
    ctx = BenchContext(
        name=request.benchmark,
        data=request.data,
        out=out or request.out,
        methods=list(request.methods),
        limit=request.limit,
        seed=request.seed,
        options={"embedder": request.embedder, "recall_embedder": request.recall_embedder, **request.options},
        make_tools=lambda: make_toolkit(request.llm, embedder=request.embedder, recall_embedder=request.recall_embedder),
        progress=request.progress,
        command=shlex.join(["python", "-m", "core", *portable_settings(list(request.argv))]),
        shard=shard,
        resume=bool(getattr(module, "RESUMABLE", False)) and not request.fresh,
        make_judge=request.make_judge,
        workers=max(1, int(request.workers or 1)),
        **hooks,
    )
    ctx.options["reader_describe"] = request.llm.describe()
    return ctx
