"""The `dsm` method: rounds from turns, memory in the prompt, state persistence; the benchmark."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from rdflib import Literal

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.dsmart.dsm_method import memory_from_state
from core.methods.dsmart.vocab import DSM, entity
from core.methods.dsmart.vocab import USER as USER_NODE


def chat(method, dialogue, pairs):
    for q, a in pairs:
        for role, text in ((USER, q), (ASSISTANT, a)):
            method.observe(dialogue.add(Turn(role, text)))


def test_dsm_pairs_turns_into_rounds_and_answers_with_the_memory():
    llm = ScriptedLLM(["Your dog is called Max."])
    method = create_method("dsm", Toolkit(llm=llm))
    # a window of one character shows the newest turn alone (core.methods.layout): the rest is memory
    method.config = replace(method.config, generation=replace(method.config.generation, max_history_chars=1))
    dialogue = Dialogue()
    chat(method, dialogue, [("My dog is Rex.", "Nice name."), ("Actually my dog is called Max.", "Noted.")])
    method.wait()
    assert [r.question for r in method.memory.history] == ["My dog is Rex.", "Actually my dog is called Max."]
    reply = method.respond(dialogue, "What is my dog called?")
    system = reply.trace.prompt[0]["content"]
    assert system.startswith("You are a helpful assistant") and "dog" not in system  # the opening every chat method shares
    notes = reply.trace.prompt[-2]  # the memory: after the conversation, before the question
    assert notes["role"] == "system" and reply.trace.prompt[-1]["content"] == "What is my dog called?"
    system = notes["content"]
    memory = [line for line in system.splitlines() if line.startswith("- ")]
    # the facts reach the prompt as their source sentences, second person, the current value first;
    # the sentence whose value a later round pruned comes after it, marked as changed; the current
    # value's line gives what it replaced
    assert memory[0] == "- Actually your dog is called Max. (before: your dog is Rex)"
    assert memory[1] == "- Your dog is Rex. (since changed)"
    assert " | " not in system and "dsm:" not in system and "http" not in system
    assert reply.text == "Your dog is called Max." and reply.method == "dsm"
    assert any(e.kind == "sentence" and "Max" in e.text for e in reply.evidence)
    assert llm.calls == 1  # maintenance used no LLM call with the weak local setting


def test_dsm_state_round_trips_with_a_pending_user_turn():
    method = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    dialogue = Dialogue()
    chat(method, dialogue, [("I live in Paris.", "Lovely.")])
    method.observe(dialogue.add(Turn(USER, "I moved to Berlin.")))  # its reply has not come yet
    data = method.save_state()
    again = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    again.load_state(data, method.observed)
    assert again.observed == 3
    again.observe(dialogue.add(Turn(ASSISTANT, "Exciting!")))
    again.wait()
    assert set(again.memory.graph.objects(USER_NODE, DSM.livesIn)) == {entity("Berlin")}
    assert [r.turn_index for r in again.memory.history] == [0, 1]
    view = memory_from_state(data)
    assert set(view.graph.objects(USER_NODE, DSM.livesIn)) == {entity("Paris")}
    with pytest.raises(ValueError):
        again.load_state(b"nonsense", 0)


def test_sync_replays_a_stored_dialogue():
    method = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    dialogue = Dialogue.from_turns([Turn(USER, "My name is Alice."), Turn(ASSISTANT, "Hi Alice!")])
    method.sync(dialogue)
    assert (USER_NODE, DSM.name, Literal("Alice")) in method.memory.graph


def _lme_item(qid, question, answer, sessions):
    return {"question_id": qid, "question_type": "knowledge-update", "question": question, "answer": answer,
            "question_date": "2023/06/01 (Thu) 10:00", "haystack_session_ids": [f"s{i}" for i in range(len(sessions))],
            "haystack_dates": [d for d, _ in sessions], "answer_session_ids": [f"s{i}" for i in range(len(sessions))],
            "haystack_sessions": [turns for _, turns in sessions]}


def test_dsm_updates_benchmark_on_a_tiny_file(tmp_path):
    from core.benchmarks.runner import BenchContext, read_run, run_benchmark

    def turn(role, text, has=False):
        return {"role": role, "content": text, "has_answer": has}

    data = [
        # listed newest first: the loader orders sessions by date
        _lme_item("q1", "How many new postcards have I added to my collection?", "25", [
            ("2023/05/02 (Tue) 10:00", [turn("user", "I've added 25 new postcards to my collection.", True), turn("assistant", "Great.")]),
            ("2023/05/01 (Mon) 10:00", [turn("user", "I've added 17 new postcards to my collection.", True), turn("assistant", "Nice.")]),
        ]),
        _lme_item("q2", "Where do I live now?", "Berlin", [
            ("2023/05/01 (Mon) 10:00", [turn("user", "I live in Paris.", True), turn("assistant", "Lovely.")]),
            ("2023/05/03 (Wed) 10:00", [turn("user", "I moved to Berlin.", True), turn("assistant", "Exciting!")]),
        ]),
        _lme_item("q3_abs", "How many cats do I have?", "not enough information", []),
        _lme_item("q4", "Where did I live before I moved?", "Paris", [  # asks for the value before the update
            ("2023/05/01 (Mon) 10:00", [turn("user", "I live in Paris.", True), turn("assistant", "Lovely.")]),
            ("2023/05/03 (Wed) 10:00", [turn("user", "I moved to Berlin.", True), turn("assistant", "Exciting!")]),
        ]),
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(data))
    ctx = BenchContext("dsm-updates", path, tmp_path / "out", ["dsm"], None, 0, options={}, progress=False)
    summary = run_benchmark(ctx)
    summary, items = read_run(tmp_path / "out")
    dsm = summary["results"]["dsm"]
    assert dsm["questions"] == 3 and dsm["questions_with_stale"] == 1  # the _abs question is skipped
    assert dsm["update_accuracy"] == 1.0 and dsm["stale_pruned"] == 1.0 and dsm["latest_kept"] == 2 / 3
    assert dsm["latest_kept_checkable"] == 1.0 and dsm["questions_checkable"] == 2
    assert dsm["earlier_in_history"] == 1.0 and dsm["questions_asking_earlier"] == 1  # Paris: pruned, in the history
    assert [i["answer_kind"] for i in items] == ["latest", "latest", "earlier"]
    assert items[0]["stale"] == 17 and items[0]["latest"] == 25
    assert items[1]["latest_kept"] is True and items[1]["stale"] is None
    assert summary["timings"]["dsm"]["maintenance"]["n"] == 6
    assert set(summary["timings"]["dsm"]["maintenance"]) >= {"median_s", "p95_s"}
    assert dsm["answer_pruned"] == 0 and not items[2]["answer_pruned"]  # pruning Paris is right for q4

    # another question type: a current answer extracted, then pruned, counts as a false prune
    for item in data:
        item["question_type"] = "single-session-user"
    data[0]["question_id"], data[0]["answer"] = "s1", "17"  # 17 was stated, then replaced by 25
    data[0]["haystack_sessions"][0][0]["has_answer"] = False  # the evidence is the 17 turn alone
    path.write_text(json.dumps(data))
    options = {"question_type": "single-session-user"}
    run_benchmark(BenchContext("dsm-updates", path, tmp_path / "ssu", ["dsm"], None, 0, options=options, progress=False))
    summary, items = read_run(tmp_path / "ssu")
    assert [(i["question_id"], i["answer_pruned"]) for i in items] == [("s1", True), ("q2", False), ("q4", False)]
    assert summary["results"]["dsm"]["answer_pruned"] == 1 / 3
    assert summary["settings"]["question_type"].startswith("single-session-user")
    with pytest.raises(ValueError, match="no 'multi-session' questions"):
        run_benchmark(BenchContext("dsm-updates", path, tmp_path / "ms", ["dsm"], None, 0,
                                   options={"question_type": "multi-session"}, progress=False))


def test_dsm_updates_reads_the_value_an_answer_states(tmp_path):
    """Gold answers of the dev split, read by hand: the number a sentence states, the value a
    change goes to; no number in a frequency, a model name or a score; the stale number in the
    answer's unit."""
    from core.benchmarks.dsm_check import answer_number, numbers, stale_number
    from core.data.longmemeval import load_longmemeval

    assert answer_number("We've met up twice.") == 2
    assert answer_number("You increased the limit (from one cup to two cups)") == 2
    assert answer_number("You switched to less water (5 ounces) per tablespoon of coffee.") == 5
    assert answer_number("$400,000") == 400000 and answer_number("3 months") == 3 and answer_number("five") == 5
    assert answer_number("forty minutes") == 40  # the package's one number-word table (core.text) has the tens
    for unchecked in ("Three times a week.", "a 70-200mm zoom lens", "5-2", "27 minutes and 45 seconds", "6:00 pm", "Yes"):
        assert answer_number(unchecked) is None, unchecked
    assert numbers("my Canon EOS 80D camera and my 70-200mm lens") == []
    assert numbers("a 10-minute walk, $1,250 and 3.5 miles") == [10, 1250, 3.5]

    def turn(text, has):
        return {"role": "user", "content": text, "has_answer": has}

    item = _lme_item("r", "What coffee-to-water ratio do I use?", "You switched to 5 ounces per tablespoon.", [
        ("2023/05/01 (Mon) 10:00", [turn("I use 1 tablespoon of coffee for every 6 ounces of water.", True)]),
        ("2023/05/03 (Wed) 10:00", [turn("Now it's 1 tablespoon for every 5 ounces.", True)]),
    ])
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([item]))
    (instance,) = load_longmemeval(path)
    assert stale_number(instance, 5) == 6  # not the 1 tablespoon that comes first


@pytest.mark.slow
def test_dsm_updates_on_real_longmemeval(shared_data, tmp_path):
    from core.benchmarks.runner import BenchContext, run_benchmark

    ctx = BenchContext("dsm-updates", shared_data / "longmemeval" / "longmemeval_oracle_dev.json", tmp_path, ["dsm"],
                       2, 0, options={}, progress=False)
    summary = run_benchmark(ctx)
    assert summary["results"]["dsm"]["questions"] == 2
    assert summary["timings"]["dsm"]["maintenance"]["n"] > 10
