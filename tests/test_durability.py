"""Durability: SIGKILL the app in the middle of a reply and in the middle of a memory update
(`streamlit run` as a subprocess, killed by its PID, restarted on the same database): every saved
turn, the memory graph and the owner's settings are there after the restart, the database passes
PRAGMA integrity_check, and the conversation continues. Plus the store alone under SIGKILL during
a stream of writes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.conversation import unpack_memory
from core.methods import method_class
from core.store import Store
from tests.app_process import AppProcess
from tests.llm_stub import LLMStub, statement_or_echo
from tests.page_fixtures import tiny_nli_folder  # noqa: F401 (fixture)
from tests.st_client import StreamlitClient
from ui import conversations

REPO = Path(__file__).resolve().parent.parent
SECRET = "durability-test-secret"
OWNER = "anon:durability"
DSM_OPTION = f"dsm — {method_class('dsm').label}"


def owner_cookie() -> dict:
    """The signed owner cookie a browser would send (ui.owner.sign with the app's secret)."""
    import base64
    import hashlib
    import hmac

    body = base64.urlsafe_b64encode(OWNER.encode()).decode().rstrip("=")
    mac = hmac.new(SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()[:32]
    return {"workbench_owner": f"{body}.{mac}"}


def is_memory_prompt(body: dict) -> bool:
    """D-SMART's memory maintenance (distil, then extract), as opposed to the chat reply."""
    text = body["messages"][-1]["content"]
    return "### Task: Combine" in text or "knowledge-graph triples" in text


def statement_reply(body: dict) -> str:
    return statement_or_echo(body, keep=100)


def send_and_kill_when_hanging(app: AppProcess, stub: LLMStub, client: StreamlitClient, text: str) -> None:
    """Send `text`; SIGKILL the app once the stub holds a request (mid-reply or mid-memory-update)."""
    stub.hanging.clear()
    errors: list[BaseException] = []

    def send() -> None:
        try:
            client.chat(text)
        except Exception as err:  # the connection dies with the app: expected
            errors.append(err)

    worker = threading.Thread(target=send, daemon=True)
    worker.start()
    assert stub.hanging.wait(120), "the app never reached the hanging request"
    time.sleep(0.3)
    app.kill()
    worker.join(30)
    assert errors, "the run finished although the app was killed"


def saved(db: Path) -> tuple[list[str], bytes | None, dict]:
    store = Store(db)
    [conv] = store.list_conversations(owner=OWNER)
    return ([t.turn.text for t in store.turns(conv.id, owner=OWNER)], store.get_artifact(conv.id, "method:dsm", owner=OWNER),
            store.get_settings(owner=OWNER))


@pytest.mark.slow
def test_sigkill_mid_reply_and_mid_memory_update_loses_nothing_saved(tmp_path, tiny_nli_folder):
    from core.methods.dsmart.dsm_method import memory_from_state

    db = tmp_path / "app.sqlite3"
    with LLMStub(reply=statement_reply, hang_s=600) as stub:
        env = {"WORKBENCH_LLM_BASE_URL": stub.url, "WORKBENCH_LLM_MODEL": "stub", "WORKBENCH_SECRET": SECRET,
               "WORKBENCH_NLI_MODEL": str(tiny_nli_folder)}
        app = AppProcess(db, tmp_path / "streamlit.log", env)
        try:
            app.start()
            client = StreamlitClient(app.url, cookies=owner_cookie())
            client.open("")
            home = client.submit("Apply", Model="durable-model", **{"Timeout per request (s)": 7.0})
            assert not home.errors
            client.open("Chat")
            client.pick("Method", DSM_OPTION)  # the D-SMART memory method
            first = client.chat("My dog is called Rex.")
            assert not first.errors and "You said" in first.text()
            turns, artifact, settings = saved(db)
            assert turns == ["My dog is called Rex.", "You said: My dog is called Rex."] and artifact is not None
            # 1. killed while D-SMART maintains its memory: the reply is saved, the memory is the last round's
            stub.hang_if = is_memory_prompt
            send_and_kill_when_hanging(app, stub, client, "I live in Paris.")
            stub.hang_if = lambda body: False
            assert Store(db).integrity_check() == "ok"
            turns, after_kill, settings = saved(db)
            assert turns[2:] == ["I live in Paris.", "You said: I live in Paris."]
            assert after_kill == artifact  # round 1's graph, whole
            assert settings["llm"]["model"] == "durable-model" and settings["llm"]["timeout_s"] == 7.0
            # 2. after a restart the conversation continues: the memory catches up with round 2
            app.start()
            client = StreamlitClient(app.url, cookies=owner_cookie())
            client.open("Chat")
            client.pick("Method", DSM_OPTION)
            [conv] = Store(db).list_conversations(owner=OWNER)
            client.pick("Conversation", conversations.label(conv))  # the cookie brought the owner back
            assert "I live in Paris" in client.last.text().replace("\\", "")
            again = client.chat("I have a cat too.")
            assert not again.errors
            turns, memory, settings = saved(db)
            assert turns[4:] == ["I have a cat too.", "You said: I have a cat too."]
            assert unpack_memory(memory).observed == 6  # the graph now covers all six turns
            graph = memory_from_state(unpack_memory(memory).state).to_turtle()
            assert "paris" in graph.lower() and "rex" in graph.lower()
            # 3. killed while the endpoint is still answering: nothing of that round is saved, nothing else lost
            stub.mode = "hang"
            send_and_kill_when_hanging(app, stub, client, "What is my dog called?")
            assert Store(db).integrity_check() == "ok"
            assert saved(db) == (turns, memory, settings)
            client.close()
        finally:
            stub.release()
            app.stop()
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


WRITER = """
import sys
from core.store import Store
from core.dialogue import Turn, Reply, Evidence
store = Store(sys.argv[1])
cid = sys.argv[2]
i = 0
while True:
    store.add_turns(cid, [(Turn("user", f"turn {i} " + "x" * 2000), None),
                          (Turn("assistant", f"reply {i}"), Reply(f"reply {i}", "base", "m",
                                                               evidence=(Evidence("e" * 500, 0.5, "S0:0"),)))],
                    owner="anon:w")
    store.put_artifact(cid, "method:x", bytes(200_000), owner="anon:w")
    print(i, flush=True)
    i += 1
"""


def test_the_store_survives_sigkill_during_writes(db_url):
    """On both back-ends: a writer process SIGKILLed five times leaves whole rows only."""
    db = db_url
    store = Store(db)
    cid = store.create_conversation("writes", owner="anon:w")
    kills = 0
    for delay in (0.4, 0.7, 0.55, 0.9, 0.45):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, db, cid], cwd=REPO, stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # writing has begun
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        kills += 1
        assert store.integrity_check() == "ok"
        turns = store.turns(cid, owner="anon:w")
        assert [t.index for t in turns] == list(range(len(turns)))  # no gap, no torn row
        assert all(t.reply is not None for t in turns if t.turn.role == "assistant")  # every reply JSON parses
        assert store.get_artifact(cid, "method:x", owner="anon:w") == bytes(200_000)
    assert kills == 5 and len(turns) > 10
