"""`bench replies`: every method chats through the script's dialogues and each reply is scored."""

import json

from core import eval as bench
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


def test_bench_replies_chats_and_scores_every_reply(tmp_path):
    replies = ["Nice to meet you, Marta.", "I live in Porto.", "This response is in markdown.", "Your sister is a nurse."]
    tools = Toolkit(llm=ScriptedLLM(replies))
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=tmp_path / "out", methods=["base"], limit=None,
                             seed=0, make_tools=lambda: tools)
    summary = bench.run_benchmark(ctx)
    r = summary["results"]["base"]
    assert (r["replies"], r["questions"], r["correct"], r["voice"], r["meta"], r["defective"]) == (4, 2, 2, 1, 1, 2)
    items = bench.read_items(tmp_path / "out" / "items.jsonl")
    assert [i["voice"] for i in items][1] == ["I live in Porto"]
    assert summary["examples"]["base"]["meta"][0]["reply"] == "This response is in markdown."
    assert [i["repeat"] for i in items] == [False, False, False, False]


def test_bench_replies_scores_chat_transcripts_and_keeps_the_first_dialogues(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    rows = [{"dialogue": 0, "turn": 0, "user": SCRIPT[1]["user"], "reply": "Hello Marta.", "seconds": 1.0},
            {"dialogue": 0, "turn": 1, "user": SCRIPT[2]["user"], "reply": "You live in Porto.", "seconds": 3.0},
            {"dialogue": 1, "turn": 0, "user": SCRIPT[4]["user"], "reply": "OK", "seconds": 1.0}]
    (folder / "rag.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = bench.BenchContext(name="replies", data=_script(tmp_path), out=tmp_path / "out", methods=["rag"], limit=1,
                             seed=0, options={"records": folder})
    r = bench.run_benchmark(ctx)["results"]["rag"]
    assert (r["replies"], r["accuracy"], r["defective"], r["median_s"]) == (2, 1.0, 0, 2.0)
