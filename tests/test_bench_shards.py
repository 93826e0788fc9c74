"""Benchmarks in shards (`bench NAME --shard K/N`) joined by `bench-merge` into the single run's
summary: checked on a slice of a real LoCoMo conversation against a single run of the same slice."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import cli
from core.benchmarks.merge import MergeError, merge_runs
from core.benchmarks.runner import read_run
from core.benchmarks.shards import Shard, parse_shard, shard_of, split
from core.retrieval.report import level_rows

REPO = Path(__file__).resolve().parent.parent
METHODS = "rag-t,bm25-r,sgmem-s"


# -- the split -------------------------------------------------------------------------------------
def test_parse_shard():
    assert parse_shard("2/3") == Shard(2, 3) and str(parse_shard(" 0 / 1 ")) == "0/1"
    for bad in ("3/3", "1", "-1/3", "a/b", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_split_is_disjoint_covering_and_stable_across_processes():
    ids = [f"conv-{c}#{i}" for c in (26, 30) for i in range(200)]
    parts = split(ids, 3)
    assert sorted(i for p in parts for i in p) == sorted(ids)
    assert all(len(p) > 100 for p in parts)  # SHA-1 spreads the ids evenly enough
    assert [Shard(k, 3).owns("conv-26#0") for k in range(3)].count(True) == 1
    # another interpreter (another hash salt) puts every id in the same shard
    code = ("import sys, json; from core.benchmarks.shards import shard_of; "
            "print(json.dumps([shard_of(i, 3) for i in json.load(sys.stdin)]))")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(ids), cwd=REPO, capture_output=True, text=True,
                         timeout=60, env={"PYTHONHASHSEED": "123", "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [shard_of(i, 3) for i in ids]


def test_ray_without_a_cluster_is_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    data = tmp_path / "lme.json"
    data.write_text("[]")
    code = cli.main(["bench", "longmemeval-retrieval", "--data", str(data), "--out", str(tmp_path / "o"), "--ray", "auto",
                     "--embedder", "hashing", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("ray: cannot join the cluster at 'auto': Could not find any running Ray instance")


def test_shard_and_ray_do_not_go_together(tmp_path, capsys):
    data = tmp_path / "lme.json"
    data.write_text("[]")
    code = cli.main(["bench", "longmemeval-retrieval", "--data", str(data), "--out", str(tmp_path / "o"), "--ray",
                     "--shard", "0/2", "--quiet"])
    assert code == 2 and "--shard and --ray do not go together" in capsys.readouterr().err


def test_a_benchmark_without_summarise_refuses_shards(tmp_path, register_benchmark):
    from core.benchmarks import runner as bench

    register_benchmark("plain", lambda ctx: bench.BenchResult(results={}))
    data = tmp_path / "d.json"
    data.write_text("[]")
    ctx = bench.BenchContext(name="plain", data=data, out=tmp_path / "o", methods=["a"], limit=None, seed=0, shard=Shard(0, 2))
    with pytest.raises(ValueError, match="cannot run in shards"):
        bench.run_benchmark(ctx)


# -- a real LoCoMo slice -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def locomo_slice(shared_data, tmp_path_factory) -> Path:
    """conv-26, sessions 1-2 (35 turns) and the 20 questions whose evidence lies there (5 adversarial)."""
    conv = json.loads((shared_data / "locomo" / "locomo_dev.json").read_text())[0]
    assert conv["sample_id"] == "conv-26"
    keep = {k: v for k, v in conv["conversation"].items() if not k.startswith("session_") or k.split("_")[1] in ("1", "2")}
    qa = [q for q in conv["qa"] if q.get("evidence") and all(e.split(":")[0] in ("D1", "D2") for e in q["evidence"])]
    path = tmp_path_factory.mktemp("locomo") / "conv26-s12.json"
    path.write_text(json.dumps([{**conv, "conversation": keep, "qa": qa}]))
    return path


def bench_argv(data: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    """The slice's command line; the runs share one embedding cache (as workers on one machine do),
    and the queries come from it too (the CPU is shared: embedding is the slow part here)."""
    return ["bench", "locomo-retrieval", "--data", str(data), "--out", str(out), "--methods", METHODS,
            "--embedder", "minilm", "--embedding-cache", str(cache), "--time-query-embedding", "0", "--ks", "1,5",
            "--quiet", *extra]


@pytest.fixture(scope="module")
def runs(locomo_slice, tmp_path_factory) -> Path:
    """The single run and its three shards."""
    root = tmp_path_factory.mktemp("runs")
    assert cli.main(bench_argv(locomo_slice, root / "single", root / "cache")) == 0
    for k in range(3):
        assert cli.main(bench_argv(locomo_slice, root / f"shard{k}", root / "cache", "--shard", f"{k}/3")) == 0
    return root


TIMED = {"latency_s", "gc_full", "embed_query_s"}  # what a rerun measures afresh


def _without_timing(items: list[dict]) -> list[dict]:
    return [{**{k: v for k, v in i.items() if k not in TIMED},
             "methods": {m: {k: v for k, v in d.items() if k not in TIMED} for m, d in i["methods"].items()}} for i in items]


def test_three_shards_merged_are_the_single_run(runs, tmp_path):
    single, single_items = read_run(runs / "single")
    shard_sizes = [len(read_run(runs / f"shard{k}")[1]) for k in range(3)]
    assert sum(shard_sizes) == len(single_items) == 20 and all(shard_sizes)
    assert cli.main(["bench-merge", *(str(runs / f"shard{k}") for k in (2, 0, 1)), "--out", str(tmp_path / "merged")]) == 0
    merged, merged_items = read_run(tmp_path / "merged")
    assert merged["results"] == single["results"]  # exact: the same code over the same items in the same order
    assert merged["results"]["sgmem-s"]["by_category"]["adversarial"]["n"] == 5
    assert merged["settings"] == single["settings"] and "shard" not in merged["settings"]
    assert (merged["benchmark"], merged["data"], merged["questions"], merged["conversations"]) == \
           (single["benchmark"], single["data"], single["questions"], single["conversations"])
    assert _without_timing(merged_items) == _without_timing(single_items)
    # the bootstrap intervals the Retrieval page and docs read from items.jsonl
    for metric in ("recall@5", "hit@1"):
        assert level_rows(merged_items, metric) == level_rows(single_items, metric)
    assert merged["timings"]["rag-t"]["query"]["n"] == 20 and merged["timings"]["rag-t"]["index"]["n"] == 3
    assert [m["shard"] for m in merged["merged_from"]] == ["2/3", "0/3", "1/3"]


def test_merge_checks_itself_against_a_single_run(runs, tmp_path, capsys):
    shards = [str(runs / f"shard{k}") for k in range(3)]
    assert cli.main(["bench-merge", *shards, "--out", str(tmp_path / "m"), "--expect", str(runs / "single")]) == 0
    assert "same settings, figures and 20 items (timings aside)" in capsys.readouterr().out
    other = tmp_path / "other"
    shutil.copytree(runs / "single", other)
    lines = (other / "items.jsonl").read_text().splitlines()
    changed = json.loads(lines[3])
    changed["methods"]["bm25-r"]["chunks"] = changed["methods"]["bm25-r"]["chunks"][::-1]
    (other / "items.jsonl").write_text("\n".join(lines[:3] + [json.dumps(changed)] + lines[4:]) + "\n")
    assert cli.main(["bench-merge", *shards, "--out", str(tmp_path / "m"), "--expect", str(other)]) == 1
    assert capsys.readouterr().err.strip().endswith("differs from " + str(other) + " in: item 4")


def test_a_missing_shard_is_named_in_one_error_line(runs, tmp_path, capsys):
    lost = [json.loads(line)["qid"] for line in (runs / "shard1" / "items.jsonl").read_text().splitlines()]
    code = cli.main(["bench-merge", str(runs / "shard0"), str(runs / "shard2"), "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{len(lost)} items missing: {', '.join(lost)}" in err and "shards given: 0/3, 2/3" in err
    assert not (tmp_path / "m" / "summary.json").exists()


def test_a_shard_cut_short_and_a_shard_given_twice_are_refused(runs, tmp_path):
    cut = tmp_path / "cut"
    shutil.copytree(runs / "shard1", cut)
    lines = (cut / "items.jsonl").read_text().splitlines()
    (cut / "items.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(MergeError, match=rf"1 items missing: {json.loads(lines[0])['qid']} \("):
        merge_runs([runs / "shard0", cut, runs / "shard2"], tmp_path / "m")
    dup = [json.loads(line)["qid"] for line in (runs / "shard0" / "items.jsonl").read_text().splitlines()]
    with pytest.raises(MergeError, match=f"{len(dup)} items duplicated: {', '.join(dup)}"):
        merge_runs([runs / "shard0", runs / "shard1", runs / "shard2", runs / "shard0"], tmp_path / "m")


def test_shards_of_other_settings_or_another_run_are_refused(runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(runs / "shard1", other)
    summary = json.loads((other / "summary.json").read_text())
    (other / "summary.json").write_text(json.dumps({**summary, "settings": {**summary["settings"], "seed": 1}}))
    with pytest.raises(MergeError, match="other settings than .*: seed"):
        merge_runs([runs / "shard0", other, runs / "shard2"], tmp_path / "m")
    with pytest.raises(MergeError, match="not a shard run"):
        merge_runs([runs / "shard0", runs / "single"], tmp_path / "m")


def test_longmemeval_shards_merge_into_the_single_run(tmp_path):
    """Each LongMemEval question has its own haystack; abstention questions stay out of the headline."""
    def instance(i: int, abstain: bool) -> dict:
        city = ["Lisbon", "Oslo", "Lima", "Quito", "Riga", "Bern"][i]
        return {"question_id": f"q{i}" + ("_abs" if abstain else ""), "question_type": ["single-session-user", "multi-session"][i % 2],
                "question": "Which city did I move to?", "answer": city, "question_date": "2023/05/30 (Tue) 23:40",
                "haystack_session_ids": [f"s{i}a", f"s{i}b"], "haystack_dates": ["2023/05/01 (Mon) 08:00", "2023/05/02 (Tue) 08:00"],
                "haystack_sessions": [[{"role": "user", "content": "Recommend a book.", "has_answer": False},
                                       {"role": "assistant", "content": "Dune."}],
                                      [{"role": "user", "content": f"I moved to the city of {city}.", "has_answer": not abstain},
                                       {"role": "assistant", "content": "Nice."}]],
                "answer_session_ids": [] if abstain else [f"s{i}b"]}

    data = tmp_path / "lme.json"
    data.write_text(json.dumps([instance(i, abstain=i == 5) for i in range(6)]))
    argv = ["bench", "longmemeval-retrieval", "--data", str(data), "--methods", "rag-t,bm25-s", "--embedder", "hashing",
            "--no-embedding-cache", "--ks", "1", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "single")]) == 0
    for k in range(2):
        assert cli.main([*argv, "--out", str(tmp_path / f"s{k}"), "--shard", f"{k}/2"]) == 0
    merged = merge_runs([tmp_path / "s1", tmp_path / "s0"], tmp_path / "merged")
    single, items = read_run(tmp_path / "single")
    assert merged["results"] == single["results"] and merged["questions"] == 6
    assert merged["results"]["rag-t"]["by_type"]["abstention"]["n"] == 1 and merged["results"]["rag-t"]["n"] == 5
    assert "index_mb_mean" in merged["results"]["rag-t"]
    assert _without_timing(read_run(tmp_path / "merged")[1]) == _without_timing(items)


# -- the same shards on a local Ray --------------------------------------------------------------------
@pytest.fixture()
def local_ray():
    """A local Ray of 2 CPUs for one test: small object store, no dashboard, shut down afterwards."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}})
    try:
        yield ray
    finally:
        ray.shutdown()


def _kill_workers_mid_shard(ray, stop: threading.Event, killed: list) -> None:
    """Once a shard has chosen its items and is not done (it is building its indexes or asking), kill
    every worker actor: Ray restarts them and runs their shards again."""
    while not stop.is_set():
        names = ray.util.list_named_actors()  # this job's namespace: the run's actors
        progress = [n for n in names if n.startswith("bench-progress-")]
        if progress and ray.get(ray.get_actor(progress[0]).state.remote())["running"]:
            for name in (n for n in names if n.startswith("bench-worker-")):
                ray.kill(ray.get_actor(name), no_restart=False)
                killed.append(name)
            return
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ray_runs_the_shards_and_merges_them_into_the_single_run(runs, locomo_slice, local_ray, tmp_path, capsys):
    """Both workers are killed while a shard runs: Ray restarts them, the shards run again, and
    the merged figures are still the single run's."""
    argv = bench_argv(locomo_slice, tmp_path / "ray", runs / "cache", "--ray", "local", "--ray-workers", "2", "--ray-shards", "3")
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_workers_mid_shard, args=(local_ray, stop, killed), daemon=True)
    killer.start()
    try:
        assert cli.main(argv) == 0
    finally:
        stop.set()
        killer.join(timeout=30)
    assert len(killed) == 2
    merged, items = read_run(tmp_path / "ray")
    single, single_items = read_run(runs / "single")
    assert merged["results"] == single["results"] and merged["settings"] == single["settings"]
    assert "ray" not in merged["settings"] and _without_timing(items) == _without_timing(single_items)
    assert sorted(p.name for p in (tmp_path / "ray" / "shards").iterdir()) == ["0", "1", "2"]
    assert merged["ray"]["workers"] == 2 and merged["ray"]["shards"] == 3 and merged["ray"]["wall_s"] > 0
    err = capsys.readouterr().err
    assert "ray: 3 shards on 2 workers (1 CPU, 0 GPU each)" in err and "ray: 20/20 items, 3/3 shards" in err
    assert "shards retried" in err.splitlines()[-1]
