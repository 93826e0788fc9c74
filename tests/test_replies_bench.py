"""`bench replies`: every method chats through the script's dialogues and each reply is scored."""

import json

import pytest

from core.benchmarks import runner as bench
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit

SCRIPT = [
    {"new_dialogue": True},
    {"user": "Hi, I'm Marta. I live in Porto and I have a dog called Rex."},
    {"user": "Where do I live?", "expect": ["Porto"]},
    {"new_dialogue": True},
    {"user": "My sister Ana works as a nurse."},
    {"user": "What does my sister do?", "expect": ["nurse"]},
]


def _script(tmp_path):
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in SCRIPT))
    return path


def _run(tmp_path, reply_check: bool):
    replies = ["Nice to meet you, Marta.", "I live in Porto.", "This response is in markdown.", "Your sister is a nurse."]
    tools = Toolkit(llm=ScriptedLLM(replies))
    out = tmp_path / f"out-{reply_check}"
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=out, methods=["base"], limit=None,
                             seed=0, make_tools=lambda: tools, options={"reply_check": reply_check, "off_turn_embedder": "hashing"})
    return bench.run_benchmark(ctx), bench.read_items(out / "items.jsonl")


def test_bench_replies_chats_and_scores_every_reply(tmp_path):
    summary, items = _run(tmp_path, reply_check=False)
    r = summary["results"]["base"]
    assert (r["replies"], r["questions"], r["correct"], r["voice"], r["meta"], r["defective"]) == (4, 2, 2, 1, 1, 2)
    assert (r["changed_by_check"], r["draft_defective"]) == (0, 2)
    assert [i["voice"] for i in items][1] == ["I live in Porto"]
    assert summary["examples"]["base"]["meta"][0]["reply"] == "This response is in markdown."
    assert [i["repeat"] for i in items] == [False, False, False, False]


def test_bench_replies_scores_the_checked_reply_and_the_methods_own_text(tmp_path):
    summary, items = _run(tmp_path, reply_check=True)
    r = summary["results"]["base"]
    assert (r["correct"], r["voice"], r["meta"], r["defective"]) == (2, 0, 1, 1)  # "You live in Porto."
    assert (r["changed_by_check"], r["draft_defective"]) == (1, 2)  # the method's own text had the voice defect
    assert items[1]["reply"] == "You live in Porto." and items[1]["draft"] == "I live in Porto."
    assert items[1]["draft_defective"] and not items[1]["defective"]


def test_bench_replies_scores_chat_transcripts_and_keeps_the_first_dialogues(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    rows = [{"dialogue": 0, "turn": 0, "user": SCRIPT[1]["user"], "reply": "Hello Marta.", "seconds": 1.0},
            {"dialogue": 0, "turn": 1, "user": SCRIPT[2]["user"], "reply": "You live in Porto.", "seconds": 3.0},
            {"dialogue": 1, "turn": 0, "user": SCRIPT[4]["user"], "reply": "OK", "seconds": 1.0}]
    (folder / "rag.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=tmp_path / "out", methods=["rag"], limit=1,
                             seed=0, options={"records": folder, "off_turn_embedder": "hashing"})
    r = bench.run_benchmark(ctx)["results"]["rag"]
    assert (r["replies"], r["accuracy"], r["defective"], r["median_s"]) == (2, 1.0, 0, 2.0)


def test_bench_replies_reports_where_the_time_went_over_the_replies_after_the_first(tmp_path):
    """Issue 53: each item carries its first words' time and prompt work; the summary the medians
    over the replies after the run's first (which waits for the model's load)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    speed = [(9.0, 900, 0), (1.0, 80, 500), (3.0, 120, 560), (2.0, 100, 0)]  # first_text_s, computed, reused
    users = [SCRIPT[1]["user"], SCRIPT[2]["user"], SCRIPT[4]["user"], SCRIPT[5]["user"]]
    rows = [{"dialogue": i // 2, "turn": i % 2, "user": u, "reply": "OK.", "seconds": s + 1, "first_text_s": s,
             "prompt_computed": c, "prompt_reused": r, "prefill_s": c / 70, "decode_s": 0.5}
            for i, (u, (s, c, r)) in enumerate(zip(users, speed))]
    (folder / "base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=tmp_path / "out", methods=["base"], limit=None,
                             seed=0, options={"records": folder, "off_turn_embedder": "hashing"})
    r = bench.run_benchmark(ctx)["results"]["base"]
    assert (r["median_first_text_s"], r["median_prompt_computed"], r["median_prompt_reused"]) == (2.0, 100, 500)
    assert r["median_decode_s"] == 0.5 and r["median_prefill_s"] == round(100 / 70, 3)
    # the interval resamples whole dialogues: d0 [1.0] twice -> 1.0; d1 [3.0, 2.0] twice -> 2.5; both -> 2.0
    assert r["median_first_text_s_ci95"] == [1.0, 2.5]
    assert [i["prompt_computed"] for i in bench.read_items(tmp_path / "out" / "items.jsonl")] == [900, 80, 120, 100]


def test_bench_replies_counts_a_reply_to_the_previous_message_as_off_turn(tmp_path):
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in [
        {"user": "What colour should I paint the kitchen walls?"},
        {"user": "How long should I boil an egg?"}]))
    folder = tmp_path / "runs"
    folder.mkdir()
    rows = [{"dialogue": 0, "turn": 0, "user": "What colour should I paint the kitchen walls?",
             "reply": "Paint the kitchen walls a warm white.", "seconds": 1.0},
            {"dialogue": 0, "turn": 1, "user": "How long should I boil an egg?",
             "reply": "Paint the kitchen walls a warm white colour.", "seconds": 1.0}]
    (folder / "base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = bench.BenchContext(name="replies", data=script, out=tmp_path / "out", methods=["base"], limit=None,
                             seed=0, options={"records": folder, "off_turn_embedder": "hashing"})
    summary = bench.run_benchmark(ctx)
    r = summary["results"]["base"]
    assert (r["off_turn"], r["off_turn_rate"]) == (1, 1.0)  # the first reply has no previous message
    assert [i["off_turn"] for i in bench.read_items(tmp_path / "out" / "items.jsonl")] == [False, True]
    assert summary["examples"]["base"]["off_turn"][0]["turn"] == 1


def test_bench_replies_scores_an_earlier_runs_items_again_alike(tmp_path):
    """`--records` also reads an earlier run's items.jsonl: the same replies score the same."""
    first, _ = _run(tmp_path, reply_check=True)
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=tmp_path / "again", methods=["base"],
                             limit=None, seed=0,
                             options={"records": tmp_path / "out-True" / "items.jsonl", "off_turn_embedder": "hashing"})
    again = bench.run_benchmark(ctx)["results"]["base"]
    keep = ("replies", "correct", "voice", "meta", "defective", "draft_defective", "changed_by_check", "off_turn")
    assert {k: again[k] for k in keep} == {k: first["results"]["base"][k] for k in keep}
    ctx.options["records"], ctx.methods = tmp_path / "out-True" / "items.jsonl", ["rag"]
    with pytest.raises(ValueError, match="no replies of method 'rag'"):
        bench.run_benchmark(ctx)


def test_bench_replies_counts_restatement_recital_unsupported_and_declines_for_reply_and_draft(tmp_path):
    """Hand-computed: the reply said back (t0), the method's own text reciting it (t1's draft), a
    claim the user never made (t2, t4), a told question answered (t3) and two never-told ones,
    one declined (t5; t4's draft declined too)."""
    turns = [{"user": "Hi, I'm Ingrid. I work as a midwife at the hospital in Bergen."},
             {"user": "We have a daughter who just turned six."},
             {"user": "My husband Sindre is a carpenter."},
             {"user": "What do I do for work?", "expect": ["midwife"]},
             {"user": "What's my daughter's name?", "never_told": True},
             {"user": "Where was I born?", "never_told": True}]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in turns))
    said_back = "You said your name is Ingrid and you work as a midwife in Bergen."
    replies = [(said_back, ""), ("Six is a lovely age; school must be exciting for her.", said_back),
               ("You run a bakery.", ""), ("You're a midwife in Bergen.", ""),
               ("Your daughter's name is Emma.", "You haven't told me her name."),
               ("You haven't told me where you were born.", "")]
    rows = [{"dialogue": 0, "turn": t, "user": turns[t]["user"], "reply": r, "seconds": 1.0, **({"draft": d} if d else {})}
            for t, (r, d) in enumerate(replies)]
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = bench.BenchContext(name="replies", data=script, out=tmp_path / "out", methods=["base"], limit=None,
                             seed=0, options={"records": tmp_path, "off_turn_embedder": "hashing"})
    summary = bench.run_benchmark(ctx)
    r = summary["results"]["base"]
    assert (r["statements"], r["restatement"], r["recital"], r["said_back"], r["said_back_rate"]) == (3, 1, 0, 1, 0.333)
    assert (r["unsupported"], r["never_told"], r["declined"], r["declined_rate"], r["declined_told"]) == (2, 2, 1, 0.5, 0)
    assert (r["bare"], r["bare_rate"], r["draft_bare"]) == (1, 0.333, 1)  # "You run a bakery.": two content words
    assert (r["draft_restatement"], r["draft_recital_on_statements"], r["draft_said_back"], r["draft_said_back_rate"]) == (
        1, 1, 2, 0.667)
    assert (r["draft_unsupported"], r["draft_declined"], r["draft_declined_rate"]) == (1, 2, 1.0)
    items = bench.read_items(tmp_path / "out" / "items.jsonl")
    assert [i["restatement"] for i in items] == [True, False, False, False, False, False]
    assert [i["bare"] for i in items] == [False, False, True, False, False, False]
    assert [i["draft_recital"] for i in items] == [False, True, False, False, False, False]
    assert items[2]["unsupported"] == ["You run a bakery"] and items[3]["correct"]
    assert [i.get("declined") for i in items] == [None, None, None, False, False, True]
    assert [i["invented"] for i in items] == [False, False, False, False, True, False]
    assert summary["examples"]["base"]["invented"][0]["turn"] == 4
