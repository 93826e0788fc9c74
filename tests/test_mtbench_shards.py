"""mtbench in shards (`bench mtbench --shard K/N`) joined by bench-merge: the merged figures (means
over dialogues, their bootstrap intervals, per task and per turn) are the single run's, a shard owns
whole dialogues, and a missing shard is named (tiny random NLI model, scripted LLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nli_helpers import write_tiny_nli_model

from core.benchmarks.merge import MergeError, compare_runs, merge_runs
from core.benchmarks.mtbench import TIMED_FIELDS, item_id
from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.benchmarks.shards import Shard
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit

FIXTURE = Path(__file__).parent / "fixtures" / "mtbench_small.jsonl"
METHODS = ["golden", "base"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Nine dialogues (the fixture's three, each three times under new ids and reworded users): the
    single run and its three shards."""
    root = tmp_path_factory.mktemp("mtbench-shards")
    nli = str(write_tiny_nli_model(root / "nli"))
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    data = root / "mtbench.jsonl"
    data.write_text("".join(json.dumps({**r, "id": 100 * k + r["id"],
                                        "history": [{**h, "user": f"({k}) {h['user']}"} for h in r["history"]]}) + "\n"
                            for k in range(3) for r in rows))

    def run(out: str, shard=None) -> None:
        llm = ScriptedLLM(lambda messages: f"reply to: {messages[-1].content[:30]}")  # a rule: alike in every process
        ctx = BenchContext(name="mtbench", data=data, out=root / out, methods=METHODS, limit=None, seed=3,
                           options={"mode": "golden", "turns": "official", "nli_model": nli, "max_tokens": 16, "judge": False},
                           make_tools=lambda: Toolkit(llm=llm), progress=False, shard=shard)
        run_benchmark(ctx)

    run("single")
    for k in range(3):
        run(f"shard{k}", Shard(k, 3))
    return root


def _untimed(value) -> str:
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in TIMED_FIELDS}
        return [strip(x) for x in v] if isinstance(v, list) else v

    return json.dumps(strip(value), sort_keys=True)  # NaN (an interval of one dialogue) equals NaN here


def test_three_shards_merged_are_the_single_run(runs, tmp_path):
    single, single_items = read_run(runs / "single")
    shard_items = [read_run(runs / f"shard{k}")[1] for k in range(3)]
    assert all(shard_items) and sum(map(len, shard_items)) == len(single_items)
    dialogues = [{i["dialogue_id"] for i in items} for items in shard_items]
    assert sum(map(len, dialogues)) == len(set().union(*dialogues)) == 9  # whole dialogues, each in one shard
    for items in shard_items:
        for d in {i["dialogue_id"] for i in items}:
            assert {i["method"] for i in items if i["dialogue_id"] == d} == set(METHODS)
    merge_runs([runs / f"shard{k}" for k in (1, 2, 0)], tmp_path / "merged")
    merged, merged_items = read_run(tmp_path / "merged")
    assert _untimed(merged_items) == _untimed(single_items)
    for field in ("results", "per_task", "per_turn", "settings"):
        assert _untimed(merged[field]) == _untimed(single[field]), field
    assert compare_runs(tmp_path / "merged", tmp_path / "merged") == [] and compare_runs(tmp_path / "merged", runs / "single") == []
    base = merged["results"]["base"]
    assert base["n_dialogues"] == 9 and base["cs_ci95"][0] < base["cs"] < base["cs_ci95"][1]
    assert merged["settings"]["dialogues"] == 9 == read_run(runs / "shard0")[0]["settings"]["dialogues"]


def test_a_missing_shard_is_refused_naming_its_items(runs, tmp_path):
    lost = [item_id(i) for i in read_run(runs / "shard2")[1]]
    with pytest.raises(MergeError) as err:
        merge_runs([runs / "shard0", runs / "shard1"], tmp_path / "m")
    assert f"{len(lost)} items missing: {', '.join(lost)} (shards given: 0/3, 1/3)" in str(err.value)
