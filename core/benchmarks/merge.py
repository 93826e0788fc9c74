"""`python -m core bench-merge DIR... --out DIR`: join shard runs into the single run's summary.

The shards (`bench NAME --shard K/N`, core.benchmarks.shards) must be of one benchmark, data file,
code version and settings (seed, limit, methods and the rest; only where a run kept its caches may differ), and
together hold every planned item exactly once. The joined items are written in the single run's
order and the benchmark's own `summarise(items, settings)` computes the figures from them, as a
single run does at its end, so the merged figures are the single run's, not an average of shard
summaries; interval code that reads items.jsonl (core.retrieval.report) sees the same items in
the same order. Timing samples are pooled, LLM costs added up; `wall_s` is the longest shard
(the elapsed time when the shards ran side by side), each shard's own is under `merged_from`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

from core.benchmarks.runner import load_benchmark, portable_settings, read_run, shardable, summarise_cost, summarise_timings
from core.benchmarks.shards import duplicates
from core.llm import cost as llm_cost
from core.paths import portable_path

# Settings that say where a run kept its files, how many threads it had or whether it started its
# folder afresh (a resumable benchmark's --fresh), not what it measured.
LOCAL_SETTINGS = frozenset({"embedding_cache", "threads", "fresh"})
# Summary fields every run writes; the rest are the benchmark's extra fields.
BASE_FIELDS = frozenset({"benchmark", "data", "code_version", "settings", "results", "timings", "cost", "wall_s", "date",
                         "shard", "timing_samples", "merged_from", "ray"})


class MergeError(ValueError):
    """Shards that do not make one run; the message is one line naming what is wrong."""


def merge_runs(dirs: Sequence[str | Path], out: str | Path) -> dict:
    """Join the shard folders `dirs` into `out` (items.jsonl and summary.json); returns the summary."""
    if not dirs:
        raise MergeError("bench-merge: no shard folders given")
    runs = [_read_shard(Path(d)) for d in dirs]
    first = runs[0][0]
    module = load_benchmark(first["benchmark"])
    if not shardable(module):
        raise MergeError(f"bench-merge: {first['benchmark']} cannot be merged (it has no summarise/item_id)")
    _check_same(runs, [Path(d) for d in dirs])
    items = _joined_items(module, runs)
    results, extra = module.summarise(items, first["settings"])
    summary = {
        "benchmark": first["benchmark"],
        "data": first["data"],
        "code_version": first["code_version"],
        "settings": first["settings"],
        "results": results,
        "timings": summarise_timings(_pooled_timings([s for s, _ in runs])),
        "cost": summarise_cost(_added_costs([s for s, _ in runs])),
        "wall_s": max(s["wall_s"] for s, _ in runs),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **portable_settings({**_shard_extra(module, [s for s, _ in runs], set(extra)), **extra}),
        "merged_from": [{"shard": f"{s['shard']['index']}/{s['shard']['count']}", "dir": portable_path(Path(d).resolve()),
                         "items": len(its), "wall_s": s["wall_s"], "date": s["date"]} for (s, its), d in zip(runs, dirs)],
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "items.jsonl").open("w", encoding="utf-8") as f:
        for item in items:  # as BenchContext.write_item writes them
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    return summary


def compare_runs(merged: str | Path, single: str | Path) -> list[str]:
    """What differs between two runs of one benchmark (a merge and the single run): benchmark, data,
    settings, results and the items without what each run times afresh (the module's TIMED_FIELDS,
    left out of the results too: a QA benchmark reports latency percentiles there). Empty when they agree."""
    (a, a_items), (b, b_items) = read_run(merged), read_run(single)
    timed = getattr(load_benchmark(a["benchmark"]), "TIMED_FIELDS", frozenset())
    differences = [field for field in ("benchmark", "data", "settings", "results")
                   if _canonical(a.get(field), timed) != _canonical(b.get(field), timed)]
    if len(a_items) != len(b_items):
        differences.append(f"items ({len(a_items)} against {len(b_items)})")
    else:
        ids = [i for i, (x, y) in enumerate(zip(a_items, b_items)) if _canonical(x, timed) != _canonical(y, timed)]
        differences += [f"item {i + 1}" for i in ids[:10]] + ([f"{len(ids) - 10} more items"] if len(ids) > 10 else [])
    return differences


def _canonical(value, timed: frozenset) -> str:
    """The value without its timed fields as JSON text: NaN (the interval of a single value) equals NaN."""
    return json.dumps(_untimed(value, timed), sort_keys=True, ensure_ascii=False, default=str)


def _untimed(value, timed: frozenset):
    if isinstance(value, dict):
        return {k: _untimed(v, timed) for k, v in value.items() if k not in timed}
    return value


def _read_shard(folder: Path) -> tuple[dict, list[dict]]:
    if not (folder / "summary.json").is_file():
        raise MergeError(f"bench-merge: {folder} has no summary.json (a shard that did not finish?)")
    summary, items = read_run(folder)
    if "shard" not in summary:
        raise MergeError(f"bench-merge: {folder} is not a shard run (its summary has no 'shard'; run bench with --shard K/N)")
    return summary, items


def _comparable(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if k not in LOCAL_SETTINGS}


def _check_same(runs: list[tuple[dict, list[dict]]], dirs: list[Path]) -> None:
    """Every shard of one run: benchmark, data, code, settings (seed included), shard count and plan."""
    first = runs[0][0]
    for (summary, _), folder in zip(runs[1:], dirs[1:]):
        for field, value, ref in (("benchmark", summary["benchmark"], first["benchmark"]),
                                  ("data", summary["data"], first["data"]),
                                  ("code_version", summary["code_version"], first["code_version"]),
                                  ("shard count", summary["shard"]["count"], first["shard"]["count"])):
            if value != ref:
                raise MergeError(f"bench-merge: {folder} has {field} {value!r}, {dirs[0]} has {ref!r}")
        mine, theirs = _comparable(summary["settings"]), _comparable(first["settings"])
        if mine != theirs:
            keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise MergeError(f"bench-merge: {folder} ran with other settings than {dirs[0]}: {', '.join(keys)}")
        if summary["shard"]["planned"] != first["shard"]["planned"]:
            raise MergeError(f"bench-merge: {folder} planned other items than {dirs[0]} (another --limit or selection?)")


def _joined_items(module, runs: list[tuple[dict, list[dict]]]) -> list[dict]:
    """The items of all shards in the planned order; refuses missing, duplicated or unplanned ids."""
    planned = runs[0][0]["shard"]["planned"]
    count = runs[0][0]["shard"]["count"]
    found = [(module.item_id(item), item) for _, items in runs for item in items]
    ids = [i for i, _ in found]
    twice, have, plan_set = duplicates(ids), set(ids), set(planned)
    missing = [i for i in planned if i not in have]
    unplanned = [i for i in ids if i not in plan_set]
    if twice or missing or unplanned:
        given = sorted(s["shard"]["index"] for s, _ in runs)
        problems = [f"{len(missing)} items missing: {', '.join(missing)}" if missing else "",
                    f"{len(twice)} items duplicated: {', '.join(twice)}" if twice else "",
                    f"{len(unplanned)} items not planned: {', '.join(unplanned)}" if unplanned else ""]
        raise MergeError(f"bench-merge: {'; '.join(p for p in problems if p)} "
                         f"(shards given: {', '.join(f'{k}/{count}' for k in given)})")
    by_id = dict(found)
    return [by_id[i] for i in planned]


def _pooled_timings(summaries: list[dict]) -> dict[str, dict[str, list[float]]]:
    pooled: dict[str, dict[str, list[float]]] = {}
    for summary in summaries:
        for method, stages in summary.get("timing_samples", {}).items():
            for stage, samples in stages.items():
                pooled.setdefault(method, {}).setdefault(stage, []).extend(samples)
    return pooled


def _added_costs(summaries: list[dict]) -> dict[str, dict[str, dict[str, int]]]:
    added: dict[str, dict[str, dict[str, int]]] = {}
    for summary in summaries:
        for method, record in summary.get("cost", {}).items():
            added[method] = llm_cost.merge(added.get(method, {}), record["stages"])
    return added


def _shard_extra(module, summaries: list[dict], from_items: set[str]) -> dict:
    """The benchmark's extra fields the items do not give: added up or the largest where the module's
    MERGE_EXTRA says so, kept when every shard agrees, else listed per shard."""
    rules = getattr(module, "MERGE_EXTRA", {})
    keys = [k for k in summaries[0] if k not in BASE_FIELDS and k not in from_items]
    out = {}
    for key in keys:
        values = [s.get(key) for s in summaries]
        numbers = [v for v in values if isinstance(v, (int, float))]
        if rules.get(key) == "sum" and len(numbers) == len(values):
            out[key] = sum(numbers)
        elif rules.get(key) == "max" and len(numbers) == len(values):
            out[key] = max(numbers)
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = {"per_shard": values}
    return out
