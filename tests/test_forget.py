"""Forgetting (core/forget.py) with the scripted LLM, for every memory method: tell, forget, ask
(no request to the LLM holds the forgotten value, kept facts still reach the prompt), the store
searched decoded (`store grep`) and the database file and its WAL searched byte by byte; owners
kept apart; a forget while a reply is written; the audit entry; the chat script's forget step."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from core.chat import ChatSession, ScriptError, read_script, run_script
from core.conversation import ConversationService, MemorySaved, ReplyStored, memory_key
from core.db.grep import grep
from core.forget import FORGOTTEN, file_holds, forget_terms, matching_turns
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.resources import HashingEmbedder
from core.store import Store

ME, OTHER = "anon:forget-me", "anon:someone-else"
CODE = "QZ4471"  # letters too: a bare number's digits may turn up inside a stored float (docs/forget.md)
TELL = ["I live in Lisbon.", f"My door code is {CODE}.", "What is my door code?", "I have two cats named Miso and Tofu."]


MEM0_FACTS = {CODE: f"User's door code is {CODE}", "Lisbon": "User lives in Lisbon", "Miso": "User has cats Miso and Tofu"}


def rule(messages) -> str:
    """Repeat the code when asked for it and a prompt holds it (a reply that must be redacted too);
    mem0's extraction prompt gets the facts its new messages name."""
    everything = " ".join(m.content for m in messages)
    if "## New Messages" in messages[-1].content:
        new = messages[-1].content.split("## New Messages", 1)[1].split("\n## ", 1)[0]
        return json.dumps({"memory": [{"id": str(i), "text": fact} for i, (key, fact) in enumerate(MEM0_FACTS.items())
                                      if key in new]})
    if CODE in everything and "door code" in messages[-1].content.lower():
        return f"Your door code is {CODE}."
    return "Noted."


def config_for(name: str, tmp_path: Path):
    if name != "mcts":
        return None
    from core.methods.mcts.config import KBSettings, MCTSConfig
    from tests.mcts_helpers import write_kb

    return MCTSConfig(kb=KBSettings(path=str(write_kb(tmp_path)), concepts_per_group=4, cache_dir=str(tmp_path / "c")),
                      use_reasoner=False)


def make_service(store: Store, llm, tmp_path: Path, owner: str = ME, instances=None) -> ConversationService:
    tools = Toolkit(llm=llm, embedder=HashingEmbedder(256))
    return ConversationService(store, owner, lambda name: create_method(name, tools, config_for(name, tmp_path)),
                               instances=instances, today=lambda: "2026-11-28")


def say(service: ConversationService, cid, method: str, message: str):
    with service.start(cid, method, message) as round_:
        events = list(round_.events(tick_s=0.05))
    return round_.conversation_id, events


def raw_holds(store: Store, text: str) -> bool:
    files = [store.path, Path(f"{store.path}-wal")]
    return any(f.exists() and file_holds(f, [text]) for f in files)


METHODS = ["rag", "sgmem", "sgmem-h", "dsm", "dsmart", "mcts", "mem0"]


@pytest.mark.parametrize("method", METHODS)
def test_a_forgotten_value_leaves_every_memory_every_reply_and_the_file(method, tmp_path):
    if method == "mem0":
        pytest.importorskip("mem0")
    store = Store(tmp_path / "db.sqlite3")
    llm = ScriptedLLM(rule)
    service = make_service(store, llm, tmp_path)
    cid = None
    for message in TELL:
        cid, _ = say(service, cid, method, message)
    turns = store.turns(cid, owner=ME)
    assert CODE in turns[5].turn.text  # the reply that repeated the code
    assert grep(store.db, CODE) and raw_holds(store, CODE)
    if method in ("dsm", "dsmart", "mem0"):  # the saved memory held it too (decoded by store grep)
        assert any(p.table == "artifacts" for p in grep(store.db, CODE))

    matches = service.matching_turns(cid, CODE)
    assert [m.index for m in matches] == [2] and matches[0].round == 2
    report = service.forget(cid, [m.index for m in matches], phrase=CODE)

    assert report.user_turns == (2,) and {2, 3, 5} <= set(report.redacted) and 2 in report.rounds
    texts = [s.turn.text for s in store.turns(cid, owner=ME)]
    assert texts[2] == texts[3] == texts[5] == FORGOTTEN and texts[0] == TELL[0] and texts[6] == TELL[3]
    assert CODE not in report.summary() and "door" not in report.summary()
    assert grep(store.db, CODE) == [] and not raw_holds(store, CODE)
    assert not any(service.instance_key(cid, method) == k for k in service.instances)  # the cached instance is gone
    if method in ("dsm", "dsmart", "mem0"):
        assert report.memories[method].startswith("rebuilt") and store.get_artifact(cid, memory_key(method), owner=ME)
    else:
        assert report.memories[method].startswith("dropped")

    asked_from = len(llm.requests)
    cid, events = say(service, cid, method, "What is my door code?")
    stored = next(e for e in events if isinstance(e, ReplyStored))
    assert all(CODE not in m.content for request in llm.requests[asked_from:] for m in request)
    assert CODE not in stored.reply.text and all(CODE not in e.text for e in stored.reply.evidence)
    kept_from = len(llm.requests)
    say(service, cid, method, "What are my cats called?")
    assert any("Miso" in m.content for request in llm.requests[kept_from:] for m in request)
    assert grep(store.db, CODE) == [] and not raw_holds(store, CODE)  # the later rounds brought nothing back


def test_the_audit_entry_says_who_when_and_which_turns_never_what(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    service = make_service(store, ScriptedLLM(rule), tmp_path)
    cid = None
    for message in TELL[:2]:
        cid, _ = say(service, cid, "rag", message)
    before = time.time()
    service.forget(cid, [2])
    rows = sqlite3.connect(store.path).execute("SELECT owner, conversation, turns, memories, created_at FROM forget_audit").fetchall()
    assert len(rows) == 1
    owner, conversation, turns, memories, created = rows[0]
    assert (owner, conversation, json.loads(turns)) == (ME, cid, [2]) and created >= before
    assert CODE not in memories and "door" not in memories and "rag" in json.loads(memories)
    assert store.forget_epoch(cid, owner=ME) == 1


def test_owners_are_kept_apart_and_only_user_turns_are_forgotten(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    mine = make_service(store, ScriptedLLM(rule), tmp_path)
    cid = None
    for message in TELL[:2]:
        cid, _ = say(mine, cid, "rag", message)
    theirs = make_service(store, ScriptedLLM(rule), tmp_path, owner=OTHER)
    with pytest.raises(KeyError):
        theirs.forget(cid, [2])
    with pytest.raises(KeyError):
        theirs.matching_turns(cid, CODE)
    with pytest.raises(KeyError):
        mine.forget(cid, [3])  # a reply, not a user turn
    with pytest.raises(KeyError):
        mine.forget(cid, [40])
    assert store.turns(cid, owner=ME)[2].turn.text == TELL[1] and store.forget_epoch(cid, owner=ME) == 0


def test_terms_are_numbers_and_content_words_and_matching_is_case_insensitive(tmp_path):
    assert forget_terms(["My blood pressure is 130/85."], "Blood Pressure") == ("130", "85", "blood", "blood pressure",
                                                                              "pressure")
    store = Store(tmp_path / "db.sqlite3")
    service = make_service(store, ScriptedLLM(["Noted."]), tmp_path)
    cid, _ = say(service, None, "rag", "My Blood Pressure was 130/85 today.")
    cid, _ = say(service, cid, "rag", "I like tea.")
    assert [m.index for m in matching_turns(store, cid, "blood pressure", owner=ME)] == [0]
    assert matching_turns(store, cid, "  ", owner=ME) == []
    report = service.forget(cid, [0])
    assert report.redacted == (0, 1)
    assert store.conversation(cid, owner=ME).title == FORGOTTEN  # the title was the first message
    assert grep(store.db, "130/85") == [] and matching_turns(store, cid, "blood", owner=ME) == []


class Gate:
    """An LLM rule that holds the answer of the round asking `held` until released."""

    def __init__(self, held: str) -> None:
        self.held, self.waiting, self.release = held, threading.Event(), threading.Event()

    def __call__(self, messages) -> str:
        if self.held in messages[-1].content:
            self.waiting.set()
            assert self.release.wait(30)
        return rule(messages)


def test_a_forget_waits_for_the_reply_being_written_and_then_takes_it_too(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    gate = Gate("What is my door code?")
    service = make_service(store, ScriptedLLM(gate), tmp_path)
    cid = None
    for message in TELL[:2]:
        cid, _ = say(service, cid, "dsm", message)
    results: dict = {}
    writer = threading.Thread(target=lambda: results.setdefault("round", say(service, cid, "dsm", TELL[2])))
    writer.start()
    assert gate.waiting.wait(30)
    forgetter = threading.Thread(target=lambda: results.setdefault("forget", service.forget(cid, [2], phrase=CODE)))
    forgetter.start()
    time.sleep(0.5)
    assert "forget" not in results and forgetter.is_alive()  # it waits for the round
    gate.release.set()
    writer.join(30)
    forgetter.join(60)
    report = results["forget"]
    assert 5 in report.redacted  # the round's reply repeated the code: redacted with the rest
    assert grep(store.db, CODE) == [] and not raw_holds(store, CODE)


def test_a_reply_written_across_another_process_forget_saves_no_memory(tmp_path):
    """Another process's forget is seen only in the store (its audit entry): the round's memory,
    built before it, is not saved and its instance is dropped."""
    from sqlalchemy import insert

    from core.db.schema import forget_audit

    store = Store(tmp_path / "db.sqlite3")
    gate = Gate("Anything new?")
    service = make_service(store, ScriptedLLM(gate), tmp_path)
    cid, _ = say(service, None, "dsm", TELL[0])
    saved_before = store.get_artifact(cid, memory_key("dsm"), owner=ME)
    results: dict = {}
    writer = threading.Thread(target=lambda: results.setdefault("round", say(service, cid, "dsm", "Anything new?")))
    writer.start()
    assert gate.waiting.wait(30)
    store.write_owned(cid, lambda c: c.execute(insert(forget_audit).values(
        owner=ME, conversation=cid, turns="[]", memories="{}", created_at=time.time())), owner=ME)
    gate.release.set()
    writer.join(30)
    saved = next(e for e in results["round"][1] if isinstance(e, MemorySaved))
    assert not saved.saved and store.get_artifact(cid, memory_key("dsm"), owner=ME) == saved_before
    assert service.instance_key(cid, "dsm") not in service.instances


def test_secure_delete_is_on_for_every_connection(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    assert store.db.read(lambda c: c.exec_driver_sql("PRAGMA secure_delete").scalar()) == 1


def test_the_chat_script_forget_step_and_db_option(tmp_path, capsys):
    script = tmp_path / "s.jsonl"
    script.write_text("\n".join(json.dumps(x) for x in [
        {"user": TELL[0]}, {"user": TELL[1]}, {"forget": CODE}, {"user": "What is my door code?"},
        {"user": "Where do I live?", "expect": ["Lisbon"]}]) + "\n")
    steps = read_script(script)
    assert steps[2].forget == CODE and not steps[2].user
    db = tmp_path / "kept.sqlite3"
    llm = ScriptedLLM(lambda m: "You live in Lisbon." if "live" in m[-1].content else rule(m))
    session = ChatSession("rag", Toolkit(llm=llm, embedder=HashingEmbedder(64)), store=Store(db))
    records = list(run_script(session, steps))
    forgot = records[2]["forgot"]
    assert forgot["user_turns"] == [2] and forgot["redacted"] == [2, 3] and CODE not in json.dumps(forgot)
    assert CODE not in records[3]["reply"] and records[4]["correct"]
    assert grep(Store(db).db, CODE) == []
    from core.cli import main

    assert main(["store", "grep", "--db", str(db), CODE]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "0"
    assert main(["store", "grep", "--db", str(db), "Lisbon"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert int(lines[-1]) == len(lines) - 1 >= 2 and all(line.startswith("turns\t") for line in lines[:-1])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"forget": ""}\n')
    with pytest.raises(ScriptError, match="forget"):
        read_script(bad)


# -- an interrupted forget: SIGKILL inside its transaction, and after its commit -------------------------
KILLED_CHILD = r"""
import sys, time
from pathlib import Path
from core.conversation import ConversationService
from core.db.engine import Database
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.resources import HashingEmbedder
from core.store import Store

url, cid, owner, phase, marker = sys.argv[1:6]


def hold() -> None:
    Path(marker).write_text("holding")
    time.sleep(120)


if phase == "in_transaction":
    write_owned = Store.write_owned

    def holding(self, cid, fn, *, owner):
        return write_owned(self, cid, lambda c: (fn(c), hold()), owner=owner)

    Store.write_owned = holding
else:
    Database.scrub = lambda self, tables, timeout_s=60.0: hold()
tools = Toolkit(llm=ScriptedLLM(["Noted."]), embedder=HashingEmbedder(64))
service = ConversationService(Store(url), owner, lambda name: create_method(name, tools))
service.forget(cid, [2])
"""


@pytest.mark.parametrize("phase", ["in_transaction", "after_commit"])
def test_a_forget_killed_leaves_the_old_state_or_the_new_never_half(phase, db_url, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    store = Store(db_url)
    service = make_service(store, ScriptedLLM(rule), tmp_path)
    cid = None
    for message in TELL[:3]:
        cid, _ = say(service, cid, "rag", message)
    store.put_artifact(cid, memory_key("rag"), f"an old memory holding {CODE}".encode(), owner=ME)
    before = [(s.turn.text, s.reply) for s in store.turns(cid, owner=ME)]
    marker = tmp_path / "marker"
    url = store.url.render_as_string(hide_password=False)
    repo = Path(__file__).resolve().parent.parent
    child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, url, cid, ME, phase, str(marker)], cwd=repo,
                             env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None and time.monotonic() < deadline, "the forget never reached the kill point"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    after = Store(db_url)
    assert after.integrity_check() == "ok"
    now = [(s.turn.text, s.reply) for s in after.turns(cid, owner=ME)]
    artifact = after.get_artifact(cid, memory_key("rag"), owner=ME)
    if phase == "in_transaction":  # nothing of it: the turns, the memory and the audit as before
        assert now == before and CODE.encode() in artifact and after.forget_epoch(cid, owner=ME) == 0
    else:  # all of it, even if the file was not scrubbed yet
        assert [t for t, _ in now] == [TELL[0], "Noted.", FORGOTTEN, FORGOTTEN, TELL[2], FORGOTTEN]
        assert artifact is None and after.forget_epoch(cid, owner=ME) == 1 and grep(after.db, CODE) == []


def test_on_postgresql_the_table_files_keep_no_copy_after_the_forget(postgres_server, tmp_path):
    """The rows are updated, then VACUUM FULL rewrites the touched tables: after a CHECKPOINT (pages
    flushed to the files) no file of the database under base/ holds the value (the server's WAL
    segments may, until recycled: docs/forget.md)."""
    url = postgres_server.create_database(f"forget_{int(time.time() * 1000) % 10**9}")
    store = Store(url)
    service = make_service(store, ScriptedLLM(rule), tmp_path)
    cid = None
    for message in TELL:
        cid, _ = say(service, cid, "dsm", message)
    oid = store.db.read(lambda c: c.exec_driver_sql("SELECT oid FROM pg_database WHERE datname = current_database()").scalar())
    folder = postgres_server.data / "base" / str(oid)

    def files_hold() -> bool:
        with store.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("CHECKPOINT")
        return any(f.is_file() and CODE.encode() in f.read_bytes() for f in folder.iterdir())

    assert files_hold()  # the check can see it
    report = service.forget(cid, [2], phrase=CODE)
    assert any(step.startswith("vacuum full turns") for step in report.file)
    assert grep(store.db, CODE) == [] and not files_hold()


def test_forget_check_counts_raw_hits_and_those_inside_float_digits(tmp_path):
    from core.tools.forget_check import raw_hits

    path = tmp_path / "f.bin"
    path.write_bytes(b'{"s": 0.34471, "t": 12.004471} my code 4471. \x00\x01')
    assert raw_hits(path, "4471") == {"hits": 3, "in_floats": 2}
    assert raw_hits(tmp_path / "missing", "4471") == {"hits": 0, "in_floats": 0}


def test_interactive_chat_forgets_with_a_slash_command(tmp_path, monkeypatch, capsys):
    from core.cli import _interactive

    session = ChatSession("rag", Toolkit(llm=ScriptedLLM(rule), embedder=HashingEmbedder(64)), store=Store(tmp_path / "i.db"))
    typed = iter([TELL[1], f"/forget {CODE}", "/quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    assert _interactive(session) == 0
    out = capsys.readouterr().out
    assert "(forgot 1 message(s) of yours and 1 repl(ies); memory: rag: dropped" in out
    assert [t.turn.text for t in session.store.turns(session.conversation_id, owner=session.OWNER)] == [FORGOTTEN] * 2


def test_a_stored_replys_floats_keep_three_significant_digits_so_no_code_hides_in_them(tmp_path):
    from core.dialogue import Evidence, Reply, Trace, TraceNode, Turn
    from core.store import stored_json

    assert json.loads(stored_json({"a": [0.39628154471761656, 1.5, 12.004471, 3], "b": "0.4471"})) == \
        {"a": [0.396, 1.5, 12.0, 3], "b": "0.4471"}
    store = Store(tmp_path / "db.sqlite3")
    cid = store.create_conversation("t", owner=ME)
    # the digits past the third significant one are long and odd enough that no id or timestamp of
    # the file holds them by chance (a four-digit tail did, now and then)
    score, seconds = 0.39628158371946257, 2.0483719265
    reply = Reply("Hi.", "sgmem-h", "m", evidence=(Evidence("x", score, "S0:0"),),
                  trace=Trace("steps", nodes=(TraceNode("s1", "seed", value=score),)), timings={"generate": seconds})
    store.add_turns(cid, [(Turn("user", "Hello"), None), (Turn("assistant", "Hi."), reply)], owner=ME)
    store.db.scrub(["turns"])
    assert not raw_holds(store, "8158371946") and not raw_holds(store, "83719265")
    stored = store.turns(cid, owner=ME)[1]
    assert stored.reply.evidence[0].score == 0.396 and stored.reply.timings == {"generate": 2.05}
