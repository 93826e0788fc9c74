"""`bench NAME ... --ray [local|auto|ADDRESS]`: a benchmark's shards as tasks on Ray worker actors.

Ray is the engine: the run starts W worker actors (each declares `--ray-cpus` CPUs and `--ray-gpus`
GPUs, and loads the embedder once, when it starts; later shards on it reuse the loaded models), hands
them the S shards through Ray's `ActorPool`, and lets Ray retry a shard that raised or whose worker
died (`retry_exceptions`, `max_task_retries`, `max_restarts`). A worker runs its shard in a
temporary folder and returns the shard's summary and items; the driver writes them to
OUT/shards/K and joins them with bench-merge into OUT, so the figures are those of a single run.
While it waits it prints items done / total and an ETA, which the workers report to a small
progress actor.

Workers read the data file and import `core` from the same paths as the driver: on a cluster, every
node needs the repository (or the installed package) and the data at those paths.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from core.paths import REPO_ROOT

# A local Ray for one run: a small object store (shards return a few MB of JSON), no dashboard.
LOCAL_OBJECT_STORE_BYTES = 200 * 2**20
PROGRESS_EVERY_S = 5.0


def run_on_ray(args: argparse.Namespace, make_context: Callable[..., Any]) -> dict:
    """Run every shard of the benchmark on Ray and merge them into args.out; returns the summary.
    `make_context(args, out=, shard=, on_plan=, on_item=)` builds a shard's BenchContext on a worker
    (the command line's: core.benchmarks.request.bench_context of the request its flags make; Ray ships
    it to the workers by reference)."""
    import ray

    from core.benchmarks.merge import merge_runs

    t0 = time.perf_counter()
    started = _connect(args.ray, args)
    try:
        workers = args.ray_workers or max(1, int(ray.cluster_resources().get("CPU", 1) // max(args.ray_cpus, 1e-3)))
        shards = args.ray_shards or 2 * workers
        folders = _run_shards(_portable_args(args), make_context, workers, shards, args)
    finally:
        if started:
            ray.shutdown()
    summary = merge_runs(folders, args.out)
    # how the run went on Ray (the merge's wall_s is its longest shard): beside the figures, not in settings
    summary["ray"] = {"address": args.ray, "workers": min(workers, shards), "shards": shards, "cpus_per_worker": args.ray_cpus,
                      "gpus_per_worker": args.ray_gpus, "wall_s": round(time.perf_counter() - t0, 3)}
    (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    return summary


def _connect(address: str, args: argparse.Namespace) -> bool:
    """Join a cluster ('auto' or an address) or start a local Ray; True when this run started it.
    Inside a Ray already initialised (a test, a notebook), that one is used."""
    import ray

    if ray.is_initialized():
        return False
    env = {"env_vars": {"PYTHONPATH": str(REPO_ROOT)}}  # workers import core from this checkout
    if address == "local":
        ray.init(object_store_memory=LOCAL_OBJECT_STORE_BYTES, include_dashboard=False, runtime_env=env,
                 log_to_driver=not args.quiet)
    else:
        ray.init(address=address, runtime_env=env, log_to_driver=not args.quiet)
    return True


def _portable_args(args: argparse.Namespace) -> dict:
    """The command line as plain values with absolute paths (workers run in another folder)."""
    values = {k: v for k, v in vars(args).items() if k != "func"}
    for key in ("data", "out"):
        values[key] = str(Path(values[key]).resolve())
    if values.get("embedding_cache"):
        values["embedding_cache"] = str(Path(values["embedding_cache"]).resolve())
    values["quiet"] = True  # one progress line from the driver, not a bar per worker
    return values


def _run_shards(values: dict, make_context, workers: int, shards: int, args: argparse.Namespace) -> list[Path]:
    import ray
    from ray.util import ActorPool

    run = uuid.uuid4().hex[:8]  # actors are named per run, so an operator (or a test) can find and kill one
    progress = ray.remote(num_cpus=0)(Progress).options(name=f"bench-progress-{run}").remote()
    worker_class = ray.remote(num_cpus=args.ray_cpus, num_gpus=args.ray_gpus, max_restarts=args.ray_retries,
                              max_task_retries=args.ray_retries)(BenchWorker)
    pool = ActorPool([worker_class.options(name=f"bench-worker-{run}-{i}").remote(values, make_context, progress)
                      for i in range(min(workers, shards))])
    for k in range(shards):
        pool.submit(lambda actor, index: actor.run_shard.options(retry_exceptions=True,
                                                                  max_task_retries=args.ray_retries).remote(index, shards), k)
    out = Path(args.out)
    folders, t0, last = [], time.monotonic(), 0.0
    print(f"ray: {shards} shards on {min(workers, shards)} workers ({args.ray_cpus:g} CPU, {args.ray_gpus:g} GPU each)",
          file=sys.stderr)
    while pool.has_next():
        try:
            index, summary, items = pool.get_next_unordered(timeout=PROGRESS_EVERY_S)
        except TimeoutError:
            index = None
        if index is not None:
            folders.append(_write_shard(out / "shards" / str(index), summary, items))
        if index is not None or time.monotonic() - last >= PROGRESS_EVERY_S:
            last = time.monotonic()
            print(progress_line(ray.get(progress.state.remote()), len(folders), shards, last - t0), file=sys.stderr)
    return sorted(folders, key=lambda f: int(f.name))


def _write_shard(folder: Path, summary: str, items: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text(items, encoding="utf-8")
    (folder / "summary.json").write_text(summary, encoding="utf-8")
    return folder


def progress_line(state: dict, shards_done: int, shards: int, elapsed: float) -> str:
    """'ray: 12/40 items, 1/6 shards, 0:42 elapsed, ETA 1:38' (the total is known once every shard has
    chosen its items; until then it reads 'of at least N')."""
    done, planned, shards_planned = state["done"], state["planned"], state["shards_planned"]
    total = f"{planned}" if shards_planned >= shards else f"at least {planned}"
    eta = "?"
    if done and shards_planned >= shards:
        eta = _clock(elapsed / done * max(planned - done, 0))
    retried = f", {state['retried']} shards retried" if state.get("retried") else ""
    return f"ray: {done}/{total} items, {shards_done}/{shards} shards, {_clock(elapsed)} elapsed, ETA {eta}{retried}"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Items planned and done per shard (a retried shard starts its count again)."""

    def __init__(self) -> None:
        self.planned: dict[int, int] = {}
        self.done: dict[int, int] = {}
        self.retried: set[int] = set()

    def plan(self, shard: int, count: int) -> None:
        if shard in self.planned:
            self.retried.add(shard)
        self.planned[shard], self.done[shard] = count, 0

    def item(self, shard: int) -> None:
        self.done[shard] = self.done.get(shard, 0) + 1

    def state(self) -> dict:
        return {"planned": sum(self.planned.values()), "done": sum(self.done.values()), "shards_planned": len(self.planned),
                "retried": len(self.retried), "running": sorted(k for k, n in self.planned.items() if self.done[k] < n)}


class BenchWorker:
    """One Ray worker: loads the embedder when it starts, then runs shards on request."""

    def __init__(self, values: dict, make_context, progress) -> None:
        from core.resources import load_embedder

        self.make_context = make_context
        self.args = argparse.Namespace(**{**values, "data": Path(values["data"]), "out": Path(values["out"])})
        self.progress = progress
        load_embedder(self.args.embedder)  # once per worker process (core.resources caches it)

    def run_shard(self, index: int, count: int) -> tuple[int, str, str]:
        """(index, summary.json text, items.jsonl text) of shard index/count."""
        from core.benchmarks.runner import run_benchmark
        from core.benchmarks.shards import Shard

        with tempfile.TemporaryDirectory(prefix=f"bench-shard{index}-") as tmp:
            ctx = self.make_context(self.args, out=Path(tmp), shard=Shard(index, count),
                                on_plan=lambda n: self.progress.plan.remote(index, n),
                                on_item=lambda _item: self.progress.item.remote(index))
            summary = run_benchmark(ctx)
            items = (Path(tmp) / "items.jsonl").read_text(encoding="utf-8")
        return index, json.dumps(summary, indent=2, ensure_ascii=False, default=str), items
