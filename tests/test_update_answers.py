"""`bench dsm-update-answers` (issue 19, step 4): the string match on replies, and the benchmark
end to end on real dev questions with a scripted LLM."""

from __future__ import annotations

import pytest

from core.benchmarks.dsm_check import judge
from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit


@pytest.fixture(scope="module")
def dev_updates(shared_data):
    from core.data.longmemeval import load_longmemeval

    path = shared_data / "longmemeval" / "longmemeval_oracle_dev.json"
    found = {i.question_id: i for i in load_longmemeval(path) if i.question_type == "knowledge-update"}
    return path, found


def test_a_reply_is_judged_by_the_latest_value_and_the_stale_one_is_flagged(dev_updates):
    _, found = dev_updates
    postcards = found["01493427"]  # 25 postcards now; 17 before the update
    assert judge("You have added 25 new postcards so far.", postcards) == {"correct": True, "stale": 17.0, "stale_only": False}
    assert judge("You have added 17 new postcards.", postcards)["stale_only"] is True
    assert judge("I don't know.", postcards) == {"correct": False, "stale": 17.0, "stale_only": False}
    earlier = found["0ddfec37"]  # asks for the value before the update: no stale value to flag
    assert judge("15", earlier, kind="earlier") == {"correct": True, "stale": None, "stale_only": False}
    sneakers = found["07741c45"]  # 'in a shoe rack in my closet': every content word
    assert judge("They are in a shoe rack in your closet.", sneakers)["correct"] is True
    assert judge("They are in a shoe rack.", sneakers)["correct"] is False


def test_bench_answers_each_question_with_each_method(tmp_path, dev_updates, hashing_embedder):
    path, _ = dev_updates
    llm = ScriptedLLM(replies=["You have 25 of them."])
    ctx = BenchContext(name="dsm-update-answers", data=path, out=tmp_path, methods=["base", "rag", "dsmart"], limit=2,
                       seed=0, options={"max_tokens": 16},
                       make_tools=lambda: Toolkit(llm=llm, embedder=hashing_embedder), progress=False)
    run_benchmark(ctx)
    summary, items = read_run(tmp_path)
    assert len(items) == 6 and {i["method"] for i in items} == {"base", "rag", "dsmart"}
    for method in ("base", "rag", "dsmart"):
        rows = {i["question_id"]: i for i in items if i["method"] == method}
        assert rows["01493427"]["correct"] and not rows["06db6396"]["correct"]  # 25 postcards; 5 projects
        result = summary["results"][method]
        assert result["questions"] == 2 and result["accuracy"] == 0.5 and result["accuracy_latest"] == 0.5
        assert result["questions_with_stale"] == 2 and result["stale_only"] == 0.0
    dsmart = [i for i in items if i["method"] == "dsmart"]
    assert all(i["upkeep_s"] > 0 for i in dsmart)  # the graph was built from the dialogue before the reply
    assert any(i["evidence"] for i in dsmart)
    assert summary["settings"]["questions"] == 2


def test_a_run_split_by_offset_merges_into_the_whole(tmp_path, dev_updates, hashing_embedder):
    from pathlib import Path

    from core.tools import merge_update_answers as merge_script
    path, _ = dev_updates
    llm = ScriptedLLM(replies=["You have 25 of them."])
    parts = []
    for offset in (0, 1):
        out = tmp_path / f"part{offset}"
        run_benchmark(BenchContext(name="dsm-update-answers", data=path, out=out, methods=["base"], limit=1, seed=0,
                                   options={"offset": offset}, make_tools=lambda: Toolkit(llm=llm, embedder=hashing_embedder),
                                   progress=False))
        parts.append(str(out))
    assert [read_run(p)[1][0]["question_id"] for p in parts] == ["01493427", "06db6396"]
    merged = merge_script.merge(parts)
    assert merged["settings"]["questions"] == 2 and len(merged["settings"]["parts"]) == 2
    assert merged["results"]["base"]["accuracy"] == 0.5 and merged["results"]["base"]["questions"] == 2
    with pytest.raises(ValueError, match="earlier part"):
        merge_script.merge([parts[0], parts[0]])
    # --rejudge: the stored replies are judged again by the current check, not the stored verdicts
    items_file = Path(parts[0]) / "items.jsonl"
    items_file.write_text(items_file.read_text().replace('"correct": true', '"correct": false'))
    assert merge_script.merge(parts)["results"]["base"]["accuracy"] == 0.0
    rejudged = merge_script.merge(parts, rejudged=True)
    assert rejudged["results"]["base"]["accuracy"] == 0.5 and rejudged["settings"]["rejudged"] is True
