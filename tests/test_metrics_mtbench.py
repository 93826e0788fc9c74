"""The MT-Bench-101 loader and runner: stratified limits, golden vs autoregressive history, the
golden reference row, scored turns, and the summary format (tiny random NLI model, scripted LLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nli_helpers import write_tiny_nli_model

from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.data.mtbench import MTBenchDialogue, MTBenchRound, load_mtbench, stratified
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit
from core.metrics.lexical import token_f1

FIXTURE = Path(__file__).parent / "fixtures" / "mtbench_small.jsonl"


def _d(i: int, task: str) -> MTBenchDialogue:
    return MTBenchDialogue(i, task, (MTBenchRound("u", "b"),))


def test_stratified_limit_covers_every_task_round_robin():
    dialogues = [_d(i, t) for i, t in enumerate("AAAABBC")]
    assert [d.id for d in stratified(dialogues, 4)] == [0, 4, 6, 1]
    assert [d.id for d in stratified(dialogues, 6)] == [0, 4, 6, 1, 5, 2]
    assert len(stratified(dialogues, None)) == 7 and len(stratified(dialogues, 99)) == 7


def test_loader_reads_fixture_and_flags_official_turns():
    dialogues = load_mtbench(FIXTURE)
    assert [d.task for d in dialogues] == ["GR", "CM", "SC"]
    cm = dialogues[1]
    assert not cm.is_scored(0) and cm.is_scored(1)
    assert dialogues[0].is_scored(0)
    assert [t.role for t in cm.golden_turns(1)] == ["user", "assistant"]


def test_loader_error_names_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "GR", "id": 1, "history": [{"user": "x", "bot": "y"}]}\n{"task": "GR"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        load_mtbench(bad)


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    return str(write_tiny_nli_model(tmp_path_factory.mktemp("tiny-nli-mtbench")))


def _run(tmp_path, tiny_nli, mode: str, llm: ScriptedLLM) -> tuple[dict, list[dict]]:
    ctx = BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / mode, methods=["golden", "base"], limit=None, seed=0,
                       options={"mode": mode, "turns": "official", "nli_model": tiny_nli, "max_tokens": 16, "judge": False},
                       make_tools=lambda: Toolkit(llm=llm), progress=False)
    run_benchmark(ctx)
    return read_run(tmp_path / mode)


def test_runner_golden_context(tmp_path, tiny_nli):
    llm = ScriptedLLM(lambda messages: f"reply to: {messages[-1].content[:30]}")
    summary, items = _run(tmp_path, tiny_nli, "golden", llm)
    dialogues = load_mtbench(FIXTURE)
    n_turns = sum(len(d.rounds) for d in dialogues)
    assert len(items) == 2 * n_turns
    assert summary["benchmark"] == "mtbench" and set(summary["results"]) == {"golden", "base"}
    golden = [i for i in items if i["method"] == "golden"]
    assert all(i["response"] == i["reference"] and i["f1"] is None for i in golden)
    base = [i for i in items if i["method"] == "base"]
    for item in base:
        assert item["f1"] == pytest.approx(token_f1(item["response"], item["reference"]))
        assert item["cs"] == pytest.approx((item["p_entailment"] - item["p_contradiction"] + 1) / 2)
        assert item["der"] == float(item["nli_label"] == "entailment")
    # the history the base method saw for turn 2 holds the benchmark's golden bot answer of turn 1
    d0 = dialogues[0]
    second_prompt = " ".join(m.content for m in llm.requests[1])
    assert d0.rounds[0].bot[:40] in second_prompt
    # official protocol: CM's and SC's first turns are written but not scored
    unscored = {(i["task"], i["turn"]) for i in items if not i["scored"]}
    assert unscored == {("CM", 1), ("SC", 1)}
    res = summary["results"]["base"]
    assert res["n_dialogues"] == 3 and res["n_turns"] == n_turns - 2
    assert {"cs", "der", "f1", "bleu", "rouge_l", "cs_ci95"} <= set(res)
    assert "f1" not in summary["results"]["golden"]
    assert set(summary["per_task"]["base"]) == {"GR", "CM", "SC"}
    assert summary["settings"]["mode"] == "golden" and summary["timings"]["base"]["respond"]["n"] == n_turns


def test_runner_autoregressive_history_is_the_methods_own(tmp_path, tiny_nli):
    llm = ScriptedLLM(lambda messages: f"OWN-ANSWER-{len(messages)}")
    _, items = _run(tmp_path, tiny_nli, "autoregressive", llm)
    d0 = load_mtbench(FIXTURE)[0]
    second_prompt = " ".join(m.content for m in llm.requests[1])
    assert "OWN-ANSWER-" in second_prompt and d0.rounds[0].bot[:40] not in second_prompt
    base_items = [i for i in items if i["method"] == "base"]
    assert all(i["mode"] == "autoregressive" for i in base_items)


def test_max_tokens_caps_generation_settings():
    from core.benchmarks.mtbench import method_config

    assert method_config("base", 24).generation.max_tokens == 24
    assert method_config("base", None).generation.max_tokens == 200


def test_reuse_rescores_earlier_answers_without_an_llm(tmp_path, tiny_nli):
    llm = ScriptedLLM(lambda messages: f"answer {len(messages)}")
    _, first = _run(tmp_path, tiny_nli, "golden", llm)

    def no_llm():
        raise AssertionError("a reused run must not build the LLM")

    ctx = BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / "again", methods=["golden", "base"], limit=None, seed=0,
                       options={"mode": "golden", "nli_model": tiny_nli, "reuse": str(tmp_path / "golden")},
                       make_tools=no_llm, progress=False)
    run_benchmark(ctx)
    _, second = read_run(tmp_path / "again")
    assert [(i["method"], i["response"]) for i in second] == [(i["method"], i["response"]) for i in first]
    assert [i["cs"] for i in second] == pytest.approx([i["cs"] for i in first])
    wrong_mode = BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / "bad", methods=["base"], limit=None, seed=0,
                              options={"mode": "autoregressive", "nli_model": tiny_nli, "reuse": str(tmp_path / "golden")},
                              make_tools=no_llm, progress=False)
    with pytest.raises(ValueError, match="mode"):
        run_benchmark(wrong_mode)


def test_judge_adds_quality_with_a_strong_model(tmp_path, tiny_nli):
    def reply(messages):
        return "Fine. Rating: [[7]]" if "impartial judge" in messages[-1].content else "an answer"

    ctx = BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / "judged", methods=["base"], limit=1, seed=0,
                       options={"mode": "golden", "nli_model": tiny_nli, "judge": True},
                       make_tools=lambda: Toolkit(llm=ScriptedLLM(reply), strong=True), progress=False)
    run_benchmark(ctx)
    summary, items = read_run(tmp_path / "judged")
    assert all(i["quality"] == 7.0 for i in items)
    assert summary["results"]["base"]["quality"] == 7.0
    weak = BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / "weak", methods=["base"], limit=1, seed=0,
                        options={"mode": "golden", "nli_model": tiny_nli, "judge": True},
                        make_tools=lambda: Toolkit(llm=ScriptedLLM(reply), strong=False), progress=False)
    with pytest.raises(ValueError, match="capable"):
        run_benchmark(weak)


def test_reuse_of_an_unfinished_run_with_a_smaller_limit(tmp_path, tiny_nli):
    llm = ScriptedLLM(lambda messages: "an answer")
    _, first = _run(tmp_path, tiny_nli, "golden", llm)
    done = [i for i in first if i["method"] == "base" and i["dialogue_id"] == first[0]["dialogue_id"]]
    partial = tmp_path / "partial.jsonl"  # as a run killed after its first dialogue leaves it: no summary
    partial.write_text("".join(json.dumps(i) + "\n" for i in done))

    def ctx(limit, out):
        return BenchContext(name="mtbench", data=FIXTURE, out=tmp_path / out, methods=["base"], limit=limit, seed=0,
                            options={"mode": "golden", "nli_model": tiny_nli, "reuse": str(partial)},
                            make_tools=lambda: Toolkit(llm=llm), progress=False)

    run_benchmark(ctx(1, "one"))
    assert [i["response"] for i in read_run(tmp_path / "one")[1]] == [i["response"] for i in done]
    with pytest.raises(ValueError, match="no answer"):
        run_benchmark(ctx(2, "two"))
