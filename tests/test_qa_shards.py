"""locomo-qa and longmemeval-qa in shards (`bench NAME --shard K/N`) joined by bench-merge: the
merged figures, bootstrap intervals and paired differences are the single run's (computed from
the joined rows), a shard owns whole questions, a missing shard is named, and a killed shard
resumes. A scripted reader and judge (rules of the prompt, so every process answers alike) and the
hashing embedder keep it fast."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.benchmarks.merge import MergeError, compare_runs, merge_runs
from core.benchmarks.qa_common import TIMED_FIELDS, item_id
from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.benchmarks.shards import Shard
from core.llm.fake import ScriptedLLM

CITIES = ["Lisbon", "Oslo", "Lima", "Quito", "Riga", "Bern", "Cairo", "Dakar", "Hanoi", "Perth", "Sofia", "Tunis"]


def _reader(messages) -> str:
    """Answers with the city the context gives the asked-about friend, else does not know."""
    text = messages[-1].content
    friend = re.findall(r"Zed\d+", text.rsplit("Question:", 1)[-1])
    found = re.search(rf"{friend[0]} lives in (\w+)", text) if friend else None
    return found.group(1) if found else "I do not know"


def _judge(messages) -> str:
    """LoCoMo's J prompt wants a JSON label, LongMemEval's yes / no; "I do not know" is wrong
    except where the question is unanswerable."""
    text = messages[-1].content
    right = "unanswerable" in text or not re.search(r"(Generated answer|Model Response): I do not know", text)
    if "Gold answer" in text:
        return '{"label": "CORRECT"}' if right else '{"label": "WRONG"}'
    return "yes" if right else "no"


def _locomo_file(tmp_path):
    """Two conversations of 12 friends each; questions over categories 1-4, one without a gold
    answer and one adversarial (left out)."""
    convs = []
    for c in range(2):
        turns = [{"speaker": ["Ann", "Bob"][i % 2], "dia_id": f"D1:{i + 1}",
                  "text": f"My friend Zed{c}{i} lives in {CITIES[(i + c) % len(CITIES)]} now."} for i in range(12)]
        later = [{"speaker": "Ann", "dia_id": "D2:1", "text": "The weather is grey today."},
                 {"speaker": "Bob", "dia_id": "D2:2", "text": "Rain all week here too."}]
        conv = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:00 pm on 8 May, 2023", "session_1": turns,
                "session_2_date_time": "2:00 pm on 9 May, 2023", "session_2": later}
        qa = [{"question": f"Where does Zed{c}{i} live?", "answer": CITIES[(i + c) % len(CITIES)], "evidence": [f"D1:{i + 1}"],
               "category": 1 + i % 4} for i in range(12)]
        qa += [{"question": "What is Bob learning?", "answer": "", "evidence": ["D1:2"], "category": 4},
               {"question": "Did Bob adopt a dog?", "adversarial_answer": "yes", "evidence": [], "category": 5}]
        convs.append({"sample_id": f"conv-{c + 1}", "conversation": conv, "qa": qa})
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(convs))
    return path


def _longmemeval_file(tmp_path):
    """Twelve instances, each its own three-session history (the friend in the first, small talk
    after it); types alternate, every fourth history never names the friend, the last abstains."""
    def instance(i: int) -> dict:
        abstain = i == 11
        fact = f"My friend Zed{i} lives in {CITIES[i]} now." if i % 4 else "Nothing new with my friends."
        chat = ["Recommend a book for the weekend please.", "Dune is a good one to start with.",
                "What should I cook for dinner tonight?", "A mushroom risotto would be lovely."]
        return {"question_id": f"q{i}" + ("_abs" if abstain else ""),
                "question_type": ["single-session-user", "multi-session", "temporal-reasoning"][i % 3],
                "question": f"Where does my friend Zed{i} live?", "answer": CITIES[i], "question_date": "2023/05/30 (Tue) 23:40",
                "haystack_session_ids": [f"s{i}a", f"s{i}b", f"s{i}c"],
                "haystack_dates": ["2023/05/01 (Mon) 08:00", "2023/05/02 (Tue) 08:00", "2023/05/03 (Wed) 08:00"],
                "haystack_sessions": [[{"role": "user", "content": fact, "has_answer": not abstain},
                                       {"role": "assistant", "content": "Nice."}],
                                      [{"role": ["user", "assistant"][k % 2], "content": t} for k, t in enumerate(chat[:2])],
                                      [{"role": ["user", "assistant"][k % 2], "content": t} for k, t in enumerate(chat[2:])]],
                "answer_session_ids": [] if abstain else [f"s{i}a"]}

    path = tmp_path / "lme.json"
    path.write_text(json.dumps([instance(i) for i in range(12)]))
    return path


CASES = {"locomo-qa": (_locomo_file, ["base", "full", "bm25-t", "rag-t"], 24),
         "longmemeval-qa": (_longmemeval_file, ["base", "bm25-r", "rag-r"], 24)}


def _run(name, data, out, methods, budget, shard=None, resume=True, reader=None):
    from core.methods import Toolkit
    from core.resources import load_embedder

    tools = Toolkit(llm=reader or ScriptedLLM(_reader), embedder=load_embedder("hashing"))
    judge = ScriptedLLM(_judge)
    judge.name = "scripted-judge"
    ctx = BenchContext(name=name, data=data, out=out, methods=methods, limit=None, seed=7,
                       options={"embedder": "hashing", "no_embedding_cache": True, "budget": budget, "window": 4096,
                                "boot": 300},
                       make_tools=lambda: tools, progress=False, shard=shard, resume=resume, make_judge=lambda r: judge)
    return run_benchmark(ctx)


def _untimed(value) -> str:
    """The value without what each run times afresh, as JSON text (NaN, the interval of a single
    value, equals NaN there)."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in TIMED_FIELDS}
        return [strip(x) for x in v] if isinstance(v, list) else v

    return json.dumps(strip(value), sort_keys=True)


def _single_and_shards(name, tmp_path):
    make, methods, budget = CASES[name]
    data = make(tmp_path)
    _run(name, data, tmp_path / "single", methods, budget)
    for k in range(3):
        _run(name, data, tmp_path / f"shard{k}", methods, budget, shard=Shard(k, 3))
    return data, methods, budget


@pytest.mark.parametrize("name", sorted(CASES))
def test_three_shards_merged_are_the_single_run(name, tmp_path):
    _, methods, _ = _single_and_shards(name, tmp_path)
    single, single_items = read_run(tmp_path / "single")
    shard_items = [read_run(tmp_path / f"shard{k}")[1] for k in range(3)]
    assert all(shard_items) and sum(map(len, shard_items)) == len(single_items)
    # a shard owns whole questions: every method of each of its questions, no question in two shards
    questions = [{i["question_id"] for i in items} for items in shard_items]
    assert sum(map(len, questions)) == len(set().union(*questions)) == single["questions"]
    for items, qs in zip(shard_items, questions):
        assert sorted((i["question_id"], i["method"]) for i in items) == sorted((q, m) for q in qs for m in methods)

    merged = merge_runs([tmp_path / f"shard{k}" for k in (2, 0, 1)], tmp_path / "merged")
    merged_items = read_run(tmp_path / "merged")[1]
    assert _untimed(merged_items) == _untimed(single_items)  # the same rows in the single run's order
    # the figures, their intervals and the paired differences: the single run's, from the joined rows
    assert _untimed(merged["results"]) == _untimed(single["results"])
    assert _untimed(merged["paired"]) == _untimed(single["paired"]) and merged["bad_input"] == single["bad_input"]
    assert (merged["questions"], merged["conversations"], merged["settings"]) == \
           (single["questions"], single["conversations"], single["settings"])
    assert compare_runs(tmp_path / "merged", tmp_path / "single") == []
    # what each run times afresh is still the merged rows' own figure
    for m in methods:
        latency = [i["latency_s"] for i in merged_items if i["method"] == m and i["status"] == "ok"]
        assert merged["results"][m]["latency_p95_s"] == round(float(np.percentile(latency, 95)), 4)
    # not a trivial agreement: scores vary, intervals are wide, the judge and the pairs are there
    varied = next(m for m in methods[1:] if 0 < single["results"][m]["f1"] < 1)
    row = single["results"][varied]
    assert row["f1_ci95"][0] < row["f1"] < row["f1_ci95"][1]
    assert row["n_f1"] > max(sum(1 for i in items if i["method"] == varied and i.get("f1") is not None) for items in shard_items)
    assert "judge_accuracy" in row and row["judge_status"] == "unvalidated"
    assert merged["paired"]["f1"][f"{varied} - base"]["n"] == row["n_f1"] and "judge" in merged["paired"]
    assert merged["resumed_items"] == 0 and [m["shard"] for m in merged["merged_from"]] == ["2/3", "0/3", "1/3"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_missing_shard_is_refused_naming_its_items(name, tmp_path):
    _single_and_shards(name, tmp_path)
    lost = [item_id(i) for i in read_run(tmp_path / "shard1")[1]]
    with pytest.raises(MergeError) as err:
        merge_runs([tmp_path / "shard0", tmp_path / "shard2"], tmp_path / "merged")
    message = str(err.value)
    assert len(message.splitlines()) == 1 and f"{len(lost)} items missing: {', '.join(lost)} (shards given: 0/3, 2/3)" in message
    assert not (tmp_path / "merged" / "summary.json").exists()


def test_a_killed_shard_resumes_and_still_merges_into_the_single_run(tmp_path):
    name = "locomo-qa"
    data, methods, budget = _single_and_shards(name, tmp_path)
    path = tmp_path / "shard1" / "items.jsonl"
    lines = path.read_text().splitlines()
    # killed: the last row half written, the question before it never written
    path.write_text("\n".join(lines[: -len(methods) - 1]) + "\n" + lines[-1][:30])
    reader = ScriptedLLM(_reader)
    again = _run(name, data, tmp_path / "shard1", methods, budget, shard=Shard(1, 3), reader=reader)
    assert again["resumed_items"] == len(lines) - len(methods) - 1
    assert 1 <= reader.calls <= 2  # the two unfinished questions (base and full may share a call)
    assert len(read_run(tmp_path / "shard1")[1]) == len(lines)
    merged = merge_runs([tmp_path / f"shard{k}" for k in range(3)], tmp_path / "merged")
    single = read_run(tmp_path / "single")[0]
    assert _untimed(merged["results"]) == _untimed(single["results"])
    assert _untimed(merged["paired"]) == _untimed(single["paired"])
    assert merged["resumed_items"] == again["resumed_items"]
    # another shard's folder is not resumed as this shard's
    with pytest.raises(ValueError, match=r"rows this run does not plan \(another --shard"):
        _run(name, data, tmp_path / "shard1", methods, budget, shard=Shard(2, 3))
