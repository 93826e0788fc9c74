"""`bench locomo-qa --methods mem0`: mem0's memories (built by the scripted reader model through
the real mem0ai library) are the context, under the same budget and reader as the others."""

from __future__ import annotations

import json

from tests.test_mem0 import new_messages
from tests.test_qa_bench import _reader_by_question, _run

FACTS = {"cat named Pixel": "Ann adopted a cat named Pixel", "hiking in Norway": "Bob went hiking in Norway",
         "sister lives in Lisbon": "Ann's sister lives in Lisbon"}


def reader_and_extractor(messages):
    new = new_messages(messages)
    if not new:
        return _reader_by_question(messages)
    if "weather" in new:
        return "{'memory': broken"  # the small model's malformed JSON: counted, the run goes on
    return json.dumps({"memory": [{"id": str(i), "text": fact} for i, (key, fact) in enumerate(FACTS.items()) if key in new]})


def test_mem0_answers_from_its_memories_dated_within_the_budget(tmp_path):
    from core.benchmarks.runner import read_run
    from core.llm.fake import ScriptedLLM

    summary = _run(tmp_path, ScriptedLLM(reader_and_extractor), ["base", "mem0"], budget=40)
    _, items = read_run(tmp_path / "out")
    mem0 = {i["question_id"]: i for i in items if i["method"] == "mem0" and i["status"] == "ok"}
    assert len(mem0) == 3  # a row for every answerable question
    assert all(0 < i["context_tokens"] <= 40 and "MEMORY:" in i["context"] for i in mem0.values())
    assert "- [1:00 pm on 8 May, 2023] Ann adopted a cat named Pixel" in mem0["conv-1#0"]["context"]
    assert mem0["conv-1#0"]["answer"] == "Pixel" and mem0["conv-1#2"]["answer"] == "Lisbon"
    build = summary["settings"]["sources"]["mem0"]["build"]
    # LoCoMo's two sessions: 2 rounds, then 1 whose extraction reply was not JSON
    assert build["rounds"] == 3 and build["invalid_json"] == 1 and build["memories_added"] == 3
    assert build["llm_calls_per_round"] == 1 and build["searches"] == 3 and "search_p95_s" in build  # the gold-less question is not asked
