"""Cost meters: LLM calls and tokens per stage, reported by every backend through the LLM base.

The scripted fake counts words, so every figure here is exact."""

from __future__ import annotations

import contextvars
import json
import threading

import pytest

from core.benchmarks import runner as bench
from core.dialogue import Dialogue, Reply, Turn
from core.llm import cost
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method


def words(*texts: str) -> int:
    return sum(len(t.split()) for t in texts)


def test_chat_batch_json_score_and_stream_count_per_stage():
    llm = ScriptedLLM(["one two three", "four five", "six", "not json", '{"a": 1}', "six seven eight nine"])
    with cost.measure() as meter:
        with cost.stage("a"):
            llm.chat("hello world")  # 2 prompt words, "one two three"
        with cost.stage("b"):
            llm.chat_batch(["x", "y z"])  # "four five", "six"
        with cost.stage("c"):
            assert llm.json("give json", {"type": "object"}) == {"a": 1}  # "not json" fails: one retry
        with cost.stage("d"):
            assert llm.score("is it", ["yes", "no"])
        with cost.stage("e"):
            assert "".join(llm.stream("go on now")) == "six seven eight nine"
        llm.chat("outside")  # no stage: "other"
    retry = words("give json", "Your last answer was invalid (no JSON found in model output: 'not json'). Reply with JSON only.")
    assert meter.as_dict() == {
        "a": {"llm_calls": 1, "prompt_tokens": 2, "completion_tokens": 3},
        "b": {"llm_calls": 2, "prompt_tokens": 3, "completion_tokens": 3},
        "c": {"llm_calls": 2, "prompt_tokens": 2 + retry, "completion_tokens": words("not json", '{"a": 1}')},
        "d": {"llm_calls": 1, "prompt_tokens": 2 + 2, "completion_tokens": 0},
        "e": {"llm_calls": 1, "prompt_tokens": 3, "completion_tokens": 4},
        "other": {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 4},
    }
    assert cost.totals(meter.as_dict())["llm_calls"] == llm.calls == 8


def test_meters_nest_and_count_nothing_outside_or_in_other_threads():
    llm = ScriptedLLM(["a b"])
    llm.chat("not measured")
    with cost.measure() as outer:
        with cost.measure() as inner, cost.stage("s"):
            llm.chat("one")
        seen = threading.Thread(target=lambda: llm.chat("plain thread"))  # a new thread: a fresh context
        seen.start(), seen.join()
        with cost.stage("t"):
            context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(llm.chat, "copied context"))
        worker.start(), worker.join()
    assert inner.as_dict() == {"s": {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 2}}
    assert outer.as_dict() == {"s": {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 2},
                               "t": {"llm_calls": 1, "prompt_tokens": 2, "completion_tokens": 2}}
    assert not cost.active()


def test_a_stopped_stream_counts_what_was_generated():
    llm = ScriptedLLM(["one two three four"])
    with cost.measure() as meter:
        pieces = llm.stream("hi")
        next(pieces)
        pieces.close()
    assert meter.as_dict() == {"other": {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1}}


def test_base_reply_carries_its_cost_per_stage():
    llm = ScriptedLLM(["Hello Ana, nice to meet you."])
    method = create_method("base", Toolkit(llm=llm))
    dialogue = Dialogue(id="d")
    dialogue.add(Turn("user", "I am Ana."))
    dialogue.add(Turn("assistant", "Hi!"))
    reply = method.respond_counted(dialogue, "Who am I?")
    prompt = words(*(m.content for m in llm.requests[0]))
    assert prompt > words("I am Ana.", "Hi!", "Who am I?")  # the system prompt too
    assert reply.cost == {"generate": {"llm_calls": 1, "prompt_tokens": prompt, "completion_tokens": 6}}
    assert Reply.from_dict(json.loads(json.dumps(reply.to_dict()))).cost == reply.cost


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


def test_dsm_round_cost_statement_and_conflict_checks(nlp):
    """A round with the statement prompt and scored conflict checks: one statement call, then one
    yes/no scoring call per (new fact, old value) pair of a non-functional relation."""
    from core.methods.dsmart.config import DSMConfig
    from core.methods.dsmart.memory import DynamicStructuredMemory, record_from_dict, record_to_dict

    statements = iter(["I work at Google.", "I work at Apple."])
    llm = ScriptedLLM(lambda messages: next(statements), scorer=lambda messages, option: 1.0 if option == "no" else 0.0)
    memory = DynamicStructuredMemory(llm, config=DSMConfig(statements="llm", llm_conflicts="on", slot_threshold=None), nlp=nlp)
    first = memory.observe_round("Where do I work?", "At Google.")
    statement_prompt = words(llm.requests[0][0].content)
    assert first.cost == {"statement": {"llm_calls": 1, "prompt_tokens": statement_prompt, "completion_tokens": 4}}
    second = memory.observe_round("I moved.", "To Apple.")
    assert [p.rule for p in second.pruned] == ["llm"]
    question = llm.requests[-1][0].content
    assert second.cost["statement"]["llm_calls"] == 1 and second.cost["statement"]["completion_tokens"] == 4
    assert second.cost["detect_llm"] == {"llm_calls": 1, "prompt_tokens": words(question, "yes", "no"), "completion_tokens": 0}
    assert record_from_dict(json.loads(json.dumps(record_to_dict(second)))).cost == second.cost


def _tiny_llm_benchmark(ctx):
    llm = ScriptedLLM(["three word answer"])
    for m in ctx.methods:
        with ctx.metered(m), cost.stage("generate"):
            llm.chat("two words")
    llm.chat("unattributed")
    return bench.BenchResult(results={m: {} for m in ctx.methods})


def test_every_summary_has_cost_per_method_and_all(tmp_path, register_benchmark):
    register_benchmark("tiny-llm", _tiny_llm_benchmark)
    data = tmp_path / "data.json"
    data.write_text("[]")
    ctx = bench.BenchContext(name="tiny-llm", data=data, out=tmp_path / "out", methods=["a", "b"], limit=None, seed=0)
    bench.run_benchmark(ctx)
    summary, _ = bench.read_run(tmp_path / "out")
    one = {"llm_calls": 1, "prompt_tokens": 2, "completion_tokens": 3}
    assert summary["cost"]["a"] == {"stages": {"generate": one}, "total": one}
    assert summary["cost"]["b"]["total"] == one
    assert summary["cost"]["all"]["stages"] == {"generate": {"llm_calls": 2, "prompt_tokens": 4, "completion_tokens": 6},
                                                "other": {"llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 3}}
    assert summary["cost"]["all"]["total"]["llm_calls"] == 3


def _pets(nlp, scorer, known=()):
    """Old: the user has a dog and a cat; new: a parrot and a hamster (4 same-predicate pairs)."""
    from core.methods.dsmart import conflicts as cf
    from core.methods.dsmart.config import DSMConfig
    from core.methods.dsmart.memory import DynamicStructuredMemory

    memory = DynamicStructuredMemory(None, config=DSMConfig(statements="text", llm_conflicts="off", slot_threshold=None), nlp=nlp)
    memory.observe_round("I have a dog. I have a cat.", "")
    fragment = memory._extract(memory._statement("I have a parrot. I have a hamster.", "", [])[1], [])
    llm = ScriptedLLM(scorer=scorer)
    with cost.measure() as meter:
        found = cf.llm_conflicts_scored(llm, memory.graph, fragment, known)
    return found, llm, meter


def test_scored_conflicts_stop_asking_about_a_fact_once_it_is_replaced(nlp):
    from core.methods.dsmart.vocab import DSM, USER, entity

    found, llm, meter = _pets(nlp, lambda messages, option: 1.0 if option == "no" else 0.0)
    assert {c.triple for c in found} == {(USER, DSM.has, entity("dog")), (USER, DSM.has, entity("cat"))}
    assert meter.total().llm_calls == 2  # one question per old fact, not one per pair (4)


def test_scored_conflicts_ask_every_pair_once_in_batches_and_skip_known(nlp):
    from core.methods.dsmart.vocab import DSM, USER, entity

    found, llm, meter = _pets(nlp, lambda messages, option: 1.0 if option == "yes" else 0.0)
    assert found == [] and meter.total().llm_calls == 4
    assert len({m[0].content for m in llm.requests}) == 4
    found, llm, meter = _pets(nlp, lambda messages, option: 1.0 if option == "yes" else 0.0,
                              known={(USER, DSM.has, entity("dog"))})  # pruned by stage (a): not asked
    assert meter.total().llm_calls == 2 and all("dog" not in m[0].content for m in llm.requests)


def test_prompted_conflict_check_is_skipped_when_it_cannot_prune(nlp):
    from core.methods.dsmart.config import DSMConfig
    from core.methods.dsmart.memory import DynamicStructuredMemory

    llm = ScriptedLLM(["```turtle\n```"])
    memory = DynamicStructuredMemory(llm, strong=True, config=DSMConfig(statements="text", extractor="spacy", llm_conflicts="on"), nlp=nlp)
    memory.observe_round("I have a dog.", "")
    assert memory.observe_round("Thanks, bye.", "").cost == {}  # no new fact: no call
    assert memory.observe_round("Paris is big.", "").cost == {}  # nothing old about Paris: no call
    assert memory.observe_round("I have a cat.", "").cost["detect_llm"]["llm_calls"] == 1


def test_server_requests_are_counted_per_stage_and_summed():
    """What llama.cpp reports per request (prompt tokens run, reused from the KV cache, generated,
    wall time) adds up per stage beside the call counts, and merges and totals keep it."""
    with cost.measure() as meter:
        with cost.stage("value"):
            cost.record_requests(processed=40, cached=200, generated=1, seconds=0.25, prefill_s=0.2, decode_s=0.03)
            cost.record_requests(processed=2, cached=238, generated=1, seconds=0.05, prefill_s=0.01, decode_s=0.03)
        with cost.stage("generate"):
            cost.record(1, 300, 20)
    rows = meter.as_dict()
    assert rows["value"] == {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "requests": 2,
                             "processed_tokens": 42, "cached_tokens": 438, "generated_tokens": 2, "request_s": 0.3,
                             "prefill_s": 0.21, "decode_s": 0.06}
    assert rows["generate"] == {"llm_calls": 1, "prompt_tokens": 300, "completion_tokens": 20}
    both = cost.merge(rows, rows)
    assert both["value"]["cached_tokens"] == 876 and both["value"]["request_s"] == 0.6
    assert cost.totals(rows) == {"llm_calls": 1, "prompt_tokens": 300, "completion_tokens": 20, "requests": 2,
                                 "processed_tokens": 42, "cached_tokens": 438, "generated_tokens": 2, "request_s": 0.3,
                                 "prefill_s": 0.21, "decode_s": 0.06}
