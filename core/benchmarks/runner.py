"""Benchmark runner behind `python -m core bench NAME --data FILE --out DIR [options]`.

Each benchmark is a module with `add_arguments(parser)` (optional) and `run(ctx) -> BenchResult`.
The runner owns what every benchmark shares: the fixed command line, the JSONL of items, and the
summary file `{"benchmark", "data", "code_version", "settings", "results", "timings", "cost"}`.

`cost` holds the LLM calls and tokens (`llm_calls`, `prompt_tokens`, `completion_tokens`) per stage:
per method where the benchmark measures its methods apart (`with ctx.metered(method): ...`), and
under "all" for everything the run asked of an LLM.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from core import __version__
from core.benchmarks.shards import Shard, duplicates
from core.llm import cost as llm_cost
from core.paths import REPO_ROOT, portable_path

# name -> module. A benchmark's issue adds its line; the module loads only when it runs.
BENCHMARKS: dict[str, str] = {
    "dsm-updates": "core.benchmarks.dsm_updates",
    "dsm-update-answers": "core.benchmarks.update_answers",
    "mtbench": "core.benchmarks.mtbench",
    "nli": "core.benchmarks.nli",
    "locomo-retrieval": "core.benchmarks.locomo_retrieval",
    "longmemeval-retrieval": "core.benchmarks.longmemeval_retrieval",
    "latency": "core.benchmarks.latency",
    "stop-latency": "core.benchmarks.stop_latency",
    "knowledge-retrieval": "core.benchmarks.knowledge_retrieval",
    "opendialkg-triples": "core.benchmarks.opendialkg_triples",
    "opendialkg-response": "core.benchmarks.opendialkg_response",
    "hybridialogue-facts": "core.benchmarks.hybridialogue_facts",
    "locomo-qa": "core.benchmarks.locomo_qa",
    "longmemeval-qa": "core.benchmarks.longmemeval_qa",
    "replies": "core.benchmarks.replies",
}


@dataclass
class BenchContext:
    name: str
    data: Path
    out: Path
    methods: list[str]
    limit: int | None
    seed: int
    options: dict[str, Any] = field(default_factory=dict)  # benchmark-specific flags
    make_tools: Callable[[], Any] | None = None  # -> core.methods.Toolkit (loads models on demand)
    progress: bool = True
    shard: Shard | None = None  # run only this shard's items (core.benchmarks.shards)
    on_plan: Callable[[int], None] | None = None  # told how many items this run will do (progress of a cluster run)
    on_item: Callable[[dict], None] | None = None  # told of each item written
    command: str = ""  # the command line that ran it, recorded in the summary (results name their command)
    # a benchmark that resumes (RESUMABLE = True) reads back the rows of a killed run of the same
    # command in `previous_items` and appends to items.jsonl instead of starting it afresh
    resume: bool = False
    make_judge: Callable[[Any], Any] | None = None  # reader LLM -> judge LLM (or None): QA benchmarks
    # processes that embed (`--workers N`, core.embed_pool): how the run goes, not what it measures,
    # so it stays out of the summary's settings (a run with 2 workers merges with one with 1)
    workers: int = 1

    def __post_init__(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "items.jsonl"
        self.previous_items: list[dict] = read_items(path) if self.resume and path.exists() else []
        if self.resume and path.exists():
            # rewrite without a last row cut off by the kill, so appended rows start on a clean line
            path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in self.previous_items), encoding="utf-8")
        self._items = path.open("a" if self.resume else "w", encoding="utf-8")
        self.written_items: list[dict] = []
        self.cost: dict[str, dict[str, dict[str, int]]] = {}  # method -> stage -> LLM calls and tokens
        self.planned: list[str] | None = None  # every item id of the whole run, in run order (see plan)
        # what the run started and must stop however it ends (the embedding workers of --workers)
        self.resources = ExitStack()

    def plan(self, ids: Sequence[str], keys: Sequence[str] | None = None) -> set[str]:
        """Declare the run's items by id, in run order (after --limit and other selections); returns
        the ids this run does: its shard's, or all of them. `keys` (one per id) is what the shard is
        chosen by when items must stay together (every row of one question in one shard); default
        the ids themselves."""
        ids = [str(i) for i in ids]
        keys = ids if keys is None else [str(k) for k in keys]
        if len(keys) != len(ids):
            raise ValueError(f"{self.name}: {len(keys)} shard keys for {len(ids)} items")
        twice = duplicates(ids)
        if twice:
            raise ValueError(f"{self.name}: item ids are not unique, cannot shard: {', '.join(twice[:20])}")
        self.planned = ids
        mine = [i for i, k in zip(ids, keys) if self.shard is None or self.shard.owns(k)]
        if self.on_plan is not None:
            self.on_plan(len(mine))
        return set(mine)

    @contextmanager
    def metered(self, method: str):
        """Count the LLM work of the block as `method`'s (added up over blocks); yields the block's
        own meter."""
        with llm_cost.measure() as meter:
            try:
                yield meter
            finally:
                self.cost[method] = llm_cost.merge(self.cost.get(method, {}), meter.as_dict())

    def write_item(self, item: dict) -> None:
        self.written_items.append(item)
        self._items.write(json.dumps(item, ensure_ascii=False) + "\n")
        self._items.flush()
        if self.on_item is not None:
            self.on_item(item)

    def close(self) -> None:
        try:
            self.resources.close()
        finally:
            self._items.close()


@dataclass
class BenchResult:
    results: dict[str, dict[str, Any]]  # method -> metric -> value
    timings: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # method -> stage -> samples (s)
    settings: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # benchmark-specific summary fields


def code_version() -> str:
    """Package version plus the git commit (and '+dirty' with uncommitted changes) when known."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return __version__
    if rev.returncode != 0:
        return __version__
    return f"{__version__}+{rev.stdout.strip()}" + ("-dirty" if dirty.stdout.strip() else "")


def summarise_samples(samples: Iterable[float]) -> dict[str, float]:
    values = np.asarray(list(samples), dtype=float)
    if values.size == 0:
        return {"median_s": float("nan"), "p95_s": float("nan"), "n": 0}
    return {"median_s": float(np.median(values)), "p95_s": float(np.percentile(values, 95)), "n": int(values.size)}


def summarise_timings(timings: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, dict[str, float]]]:
    return {m: {stage: summarise_samples(v) for stage, v in stages.items()} for m, stages in timings.items()}


def summarise_cost(cost: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, Any]]:
    """method -> {"stages": stage -> counts, "total": counts} (every method, even one that made no call)."""
    return {m: {"stages": stages, "total": llm_cost.totals(stages)} for m, stages in cost.items()}


def portable_settings(value: Any) -> Any:
    """Settings with every absolute path inside the repository or ../shared made relative (model
    folders, caches): results compare across machines and never name this one's folders. A path
    outside both (a scratch cache in /tmp) keeps only its file name, as '<outside>/NAME'."""
    if isinstance(value, dict):
        return {k: portable_settings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable_settings(v) for v in value]
    if isinstance(value, Path) or (isinstance(value, str) and value.startswith("/")):
        path = portable_path(value)
        return f"<outside>/{Path(path).name}" if Path(path).is_absolute() else path
    return value


def load_benchmark(name: str):
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS)) or 'none yet'}")
    return importlib.import_module(BENCHMARKS[name])


def shardable(module) -> bool:
    """A benchmark can run in shards when it names its items (`item_id(item)`) and computes its
    results from the items alone (`summarise(items, settings) -> (results, extra)`), which
    `bench-merge` then runs on the joined items."""
    return callable(getattr(module, "item_id", None)) and callable(getattr(module, "summarise", None))


def run_benchmark(ctx: BenchContext) -> dict:
    """Run one benchmark and write DIR/items.jsonl and DIR/summary.json; returns the summary."""
    module = load_benchmark(ctx.name)
    if not ctx.data.exists():
        raise FileNotFoundError(f"data file {ctx.data} does not exist")
    if ctx.shard is not None and not shardable(module):
        ctx.close()
        raise ValueError(f"{ctx.name} cannot run in shards yet (it computes its results while it runs, not from its items)")
    t0 = time.perf_counter()
    version = code_version()  # the code this run loaded: a commit made while it runs is not in it
    try:
        with llm_cost.measure() as meter:
            result: BenchResult = module.run(ctx)
    finally:
        ctx.close()
    summary = {
        "benchmark": ctx.name,
        "data": portable_settings(Path(ctx.data).resolve()),
        "code_version": version,
        **({"command": ctx.command} if ctx.command else {}),
        "settings": portable_settings({"methods": ctx.methods, "limit": ctx.limit, "seed": ctx.seed, **ctx.options,
                                       **result.settings}),
        "results": result.results,
        "timings": summarise_timings(result.timings),
        "cost": summarise_cost({**ctx.cost, "all": meter.as_dict()}),
        "wall_s": round(time.perf_counter() - t0, 3),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **portable_settings(result.extra),
    }
    if ctx.shard is not None:
        summary.update(shard_record(ctx, result))
    (ctx.out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    return summary


def shard_record(ctx: BenchContext, result: BenchResult) -> dict:
    """What a shard's summary adds for bench-merge: which shard, every id the whole run plans, and
    the raw timing samples (a merged median needs the samples, not the shards' medians)."""
    if ctx.planned is None:
        raise ValueError(f"{ctx.name} ran with --shard but never declared its items (BenchContext.plan)")
    return {"shard": {**ctx.shard.as_dict(), "planned": ctx.planned}, "timing_samples": result.timings}
def read_items(path: str | Path) -> list[dict]:
    """Rows of an items.jsonl; a line that does not parse (a row cut off by a kill) is left out."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def read_run(out_dir: str | Path) -> tuple[dict, list[dict]]:
    """(summary, items) of a finished run folder."""
    out_dir = Path(out_dir)
    summary = json.loads((out_dir / "summary.json").read_text())
    items_path = out_dir / "items.jsonl"
    items = [json.loads(line) for line in items_path.read_text().splitlines() if line.strip()] if items_path.exists() else []
    return summary, items
