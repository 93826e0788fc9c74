"""Users kept apart in the pages (AppTest, with an OpenAI-compatible stub endpoint on 127.0.0.1):
each owner's lists hold only its own conversations, a guessed id opens nothing, shared demo rows
are read-only, and settings (never the key) follow the owner across sessions."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Turn
from core.db.legacy import STORE_SCRIPTS as MIGRATIONS  # the old code's schema scripts, kept verbatim
from core.store import Store
from tests.llm_stub import LLMStub
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parent.parent
HOME = str(REPO / "streamlit_app.py")
CHAT = str(REPO / "pages" / "1_Chat.py")
GRAPH = str(REPO / "pages" / "2_Memory_graph.py")
RETRIEVAL = str(REPO / "pages" / "3_Retrieval_comparison.py")
ALICE, BOB = "anon:alice-test", "anon:bob-test"


def page(path: str, owner: str, timeout: int = 120, **state) -> AppTest:
    at = AppTest.from_file(path, default_timeout=timeout)
    at.session_state["owner_id"] = owner  # what the owner cookie restores in a browser
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def every_text(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "info", "error", "warning", "success", "title", "code"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    for box in at.selectbox:
        parts += [str(o) for o in box.options]
    parts += [df.value.to_string() for df in at.dataframe]
    parts += [f.proto.srcdoc for f in at.get("iframe")]
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", "\n".join(parts))  # Markdown escapes (ui.safe.literal) undone


def test_two_owners_chat_and_neither_sees_the_other(stub):
    alice = page(CHAT, ALICE)
    alice.chat_input[0].set_value("Hi, my name is Alice Secretname.").run()
    assert not alice.exception
    assert "You said: Hi, my name is Alice Secretname." in every_text(alice)
    bob = page(CHAT, BOB)
    assert "Secretname" not in every_text(bob)
    assert bob.sidebar.selectbox[1].options == ["— new —"]
    bob.chat_input[0].set_value("I am Bob.").run()
    assert "Secretname" not in every_text(bob)
    assert [o for o in bob.sidebar.selectbox[1].options if "Bob" in o] and len(bob.sidebar.selectbox[1].options) == 2

    store = Store(Path(stub_db()))
    [alice_conv] = store.list_conversations(owner=ALICE)
    # Bob guesses Alice's id: the Chat page opens nothing of it
    guess = page(CHAT, BOB, conversation_id=alice_conv.id)
    assert not guess.exception and "Secretname" not in every_text(guess)
    assert guess.session_state["conversation_id"] != alice_conv.id
    # the Memory graph page lists Bob's conversation only, whatever id is in his session
    graph = page(GRAPH, BOB, conversation_id=alice_conv.id, memory_graph_conversation=alice_conv.id)
    assert not graph.exception and "Secretname" not in every_text(graph)
    # Retrieval comparison, "My chats": Bob's only
    retrieval = page(RETRIEVAL, BOB)
    retrieval.radio[0].set_value("My chats").run()
    assert not retrieval.exception and "Secretname" not in every_text(retrieval)
    assert [o.split(" · ")[0] for o in retrieval.selectbox[0].options] == ["I am Bob."]


def stub_db() -> str:
    import os

    return os.environ["WORKBENCH_DB"]


def test_shared_demo_conversations_are_read_only_and_can_be_copied(stub):
    path = stub_db()
    db = sqlite3.connect(path)  # a database from before owners existed
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version=1")
    db.execute("INSERT INTO conversations VALUES ('demo1', 'Demo chat', 'base', '{}', 1.0, 2.0)")
    db.execute("INSERT INTO turns VALUES ('demo1', 0, 'user', 'A demo question', 'S0:0', 0, '', '', NULL, 1.0)")
    db.commit()
    db.close()
    at = page(CHAT, ALICE)
    options = at.sidebar.selectbox[1].options
    assert any("[shared demo, read-only] Demo chat" in o for o in options)
    at.sidebar.selectbox[1].select_index(1).run()
    assert "read-only" in at.info[0].value
    assert at.chat_input[0].proto.disabled
    next(b for b in at.button if b.label == "Make my own copy").click().run()
    assert not at.exception
    store = Store(path)
    mine = [c for c in store.list_conversations(owner=ALICE) if not c.read_only]
    assert len(mine) == 1 and at.session_state["conversation_id"] == mine[0].id
    at.chat_input[0].set_value("And a follow-up").run()
    assert [t.turn.text for t in store.turns(mine[0].id, owner=ALICE)][:2] == ["A demo question", "And a follow-up"]
    assert len(store.turns("demo1", owner=BOB)) == 1  # the demo itself is unchanged


def test_settings_follow_the_owner_and_the_key_is_never_stored(app_env):
    home = page(HOME, ALICE, timeout=60)
    home.radio[0].set_value("openai")
    home.text_input[0].set_value("alice-model")
    home.text_input[1].set_value("http://127.0.0.1:9/v1")
    home.text_input[2].set_value("sk-alice-planted-key")
    home.button[1].click().run()
    assert not home.exception
    again = page(HOME, ALICE, timeout=60)  # a new session of the same owner (a reload, a restart)
    settings = again.session_state["llm_settings"]
    assert (settings.backend, settings.model, settings.base_url, settings.api_key) == (
        "openai", "alice-model", "http://127.0.0.1:9/v1", "")
    other = page(HOME, BOB, timeout=60)
    assert other.session_state["llm_settings"].model != "alice-model"
    raw = Path(stub_db()).read_bytes() + b"".join(p.read_bytes() for p in Path(stub_db()).parent.glob("*-wal"))
    assert b"sk-alice-planted-key" not in raw


def test_a_fresh_session_gets_a_private_random_owner(app_env):
    a = AppTest.from_file(HOME, default_timeout=60).run()
    b = AppTest.from_file(HOME, default_timeout=60).run()
    owner_a, owner_b = a.session_state["owner_id"], b.session_state["owner_id"]
    assert owner_a.startswith("anon:") and owner_b.startswith("anon:") and owner_a != owner_b
    assert len(owner_a) >= 5 + 20  # 128 random bits, url-safe
    assert any("private to this browser" in c.value for c in a.sidebar.caption)


def test_named_workspaces_sign_in(app_env, monkeypatch):
    monkeypatch.setenv("WORKBENCH_AUTH", "named")
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert at.title[0].value == "Sign in to a workspace" and "owner_id" not in at.session_state
    at.text_input[0].set_value("  Lab   A ")
    at.button[0].click().run()
    assert not at.exception
    assert at.session_state["owner_id"] == "ws:lab a"
    assert at.title[0].value == "Dialogue memory workbench"
    store = Store(stub_db())
    cid = store.create_conversation("lab notes", owner="ws:lab a")
    store.add_turns(cid, [(Turn(USER, "q"), None)], owner="ws:lab a")
    store.add_turns(cid, [(Turn(ASSISTANT, "a"), None)], owner="ws:lab a")
    chat = page(CHAT, "ws:lab a")
    assert any("lab notes" in o for o in chat.sidebar.selectbox[1].options)


def test_owner_tokens_are_signed(app_env):
    from ui import owner

    token = owner.sign("ws:alice")
    assert owner.verify(token) == "ws:alice"
    body, mac = token.split(".")
    forged = owner.sign("ws:bob").split(".")[0] + "." + mac
    assert owner.verify(forged) is None
    assert owner.verify("garbage") is None and owner.verify(None) is None
    assert owner.verify(owner.sign("shared/demo")) is None  # nobody becomes the shared owner


def test_sessions_that_first_sign_at_once_share_one_whole_secret(tmp_path):
    """Two browsers opening pages of a fresh app made the secret file at once: one page died on
    FileExistsError (the CI's browser test). Every caller must get the same complete secret."""
    from concurrent.futures import ThreadPoolExecutor

    from ui import owner

    path = tmp_path / "local" / "owner_secret"
    barrier = __import__("threading").Barrier(8)

    def first_use(_):
        barrier.wait()  # all at once, before any has the file
        return owner._file_secret.__wrapped__(str(path))  # past the per-process cache, as separate processes

    with ThreadPoolExecutor(8) as pool:
        secrets_seen = set(pool.map(first_use, range(8)))
    assert len(secrets_seen) == 1 and len(next(iter(secrets_seen))) == 64
    assert [p.name for p in path.parent.iterdir()] == ["owner_secret"]  # no candidate left behind
    assert path.stat().st_mode & 0o777 == 0o600
