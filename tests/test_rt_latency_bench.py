"""`bench latency` end to end on the scripted LLM: one item per method and turn, the fixed summary
format, and dsmart_over_base computed from the medians."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit

FIXTURE = Path(__file__).parent / "fixtures" / "mtbench_small.jsonl"


def test_latency_bench_writes_items_and_ratio(tmp_path, hashing_embedder):
    llm = ScriptedLLM(replies=["A is the tallest."])
    ctx = BenchContext(name="latency", data=FIXTURE, out=tmp_path, methods=["base", "dsm", "rt", "dsmart"], limit=2,
                       seed=0, options={"max_tokens": 16}, make_tools=lambda: Toolkit(llm=llm, embedder=hashing_embedder),
                       progress=False)
    run_benchmark(ctx)
    summary, items = read_run(tmp_path)
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()[:2]]
    turns = sum(len(r["history"]) for r in rows)
    assert len(items) == 4 * turns
    assert {i["method"] for i in items} == {"base", "dsm", "rt", "dsmart"}
    results = summary["results"]
    assert results["base"]["turns"] == turns and results["base"]["llm_calls_per_turn"] == 1.0
    # a weak model with an embedder: dsmart's search is embedding-scored (its one call is the answer);
    # rt's tree over an empty graph asks the LLM
    assert results["dsmart"]["llm_calls_per_turn"] == 1.0 and results["rt"]["llm_calls_per_turn"] > 1.0
    median = {m: statistics.median(i["latency_s"] for i in items if i["method"] == m) for m in ("base", "dsmart")}
    assert summary["dsmart_over_base"] == pytest.approx(median["dsmart"] / median["base"], rel=0.01)
    assert set(summary["timings"]["dsmart"]) >= {"turn", "maintenance", "policy", "value"}
    dsmart_items = [i for i in items if i["method"] == "dsmart"]
    assert all("tree" in i for i in dsmart_items)
    assert max(i["tree"]["memory_facts"] for i in dsmart_items) > 0  # the DSM grew across the rounds
    assert summary["settings"]["max_tokens"] == 16 and summary["settings"]["tree"]["beam_width"] == 3


def test_stop_latency_bench_stops_the_reply_and_times_the_next(tmp_path, hashing_embedder):
    """A slow scripted model: the stopped rt reply ends within one request, sends at most the one
    in flight after the stop, and the base replies before and after are timed."""
    from tests.test_rt_budget import SlowScripted

    llm = SlowScripted(0.02, replies=lambda m: "fine", scorer=lambda m, c: 0.0)
    ctx = BenchContext(name="stop-latency", data=FIXTURE, out=tmp_path, methods=["rt"], limit=2, seed=0,
                       options={"stop_after": 0.1}, make_tools=lambda: Toolkit(llm=llm, embedder=hashing_embedder),
                       progress=False)
    run_benchmark(ctx)
    summary, items = read_run(tmp_path)
    assert len(items) == 2 and all(i["method"] == "rt" for i in items)
    row = summary["results"]["rt"]
    assert row["trials"] == 2 and row["release_max_s"] < 1.0
    assert row["after_stop_over_idle"] > 0
