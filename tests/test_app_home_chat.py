"""AppTest for the home and Chat pages."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.safe import literal

REPO = Path(__file__).resolve().parent.parent
HOME = str(REPO / "streamlit_app.py")
CHAT = str(REPO / "pages" / "1_Chat.py")


def _all_text(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "text_input", "success", "error", "info", "title", "subheader", "table", "code"):
        for el in getattr(at, kind):
            parts.append(str(getattr(el, "value", "")))
    return "\n".join(parts)


def test_home_shows_methods_and_active_backend(app_env):
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "Dialogue memory workbench"
    assert "embedded llama" in _all_text(at)
    assert "rag" in at.table[0].value.to_string()


def test_home_sets_endpoint_and_never_shows_the_key(app_env):
    at = AppTest.from_file(HOME, default_timeout=60).run()
    at.radio[0].set_value("openai")
    at.text_input[0].set_value("tiny")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    at.text_input[1].set_value(f"http://127.0.0.1:{port}/v1")
    at.text_input[2].set_value("sk-very-secret")
    at.button[1].click().run()  # the form's Apply
    assert not at.exception
    settings = at.session_state["llm_settings"]
    assert (settings.backend, settings.model, settings.api_key) == ("openai", "tiny", "sk-very-secret")
    assert "sk-very-secret" not in _all_text(at)
    assert at.text_input[2].value == ""  # the key field starts empty again
    at.button[0].click().run()  # check the backend: nothing listens there
    assert any("does not answer" in e.value and "cannot reach" in e.value for e in at.error)


@pytest.mark.slow
def test_chat_sends_a_message_gets_a_reply_and_persists(app_env):
    at = AppTest.from_file(CHAT, default_timeout=180)
    at.session_state["owner_id"] = "anon:ana"  # as the owner cookie would after a restart
    at.run()
    assert not at.exception
    at.chat_input[0].set_value("Hello! My name is Ana.").run()
    assert not at.exception
    messages = at.chat_message
    assert [m.name for m in messages] == ["user", "assistant"]
    assert messages[0].markdown[0].value == literal("Hello! My name is Ana.")  # shown as text, Markdown escaped
    assert messages[1].markdown[0].value.strip()
    assert "base ·" in messages[1].caption[0].value  # method, model, time, calls
    # the reply's consistency judgement is stored with it, so no later page run computes it again
    from core.store import Store

    turns = Store(app_env / "app.sqlite3").turns(at.session_state["conversation_id"], owner="anon:ana")
    assert [bool(t.checks.get("nli")) for t in turns] == [False, True]
    from core.metrics.nli import NLIJudgement

    assert f"CS {NLIJudgement.from_dict(turns[1].checks['nli']).consistency:.2f}" in " ".join(c.value for c in messages[1].caption)

    # A new session (as after an app restart) finds the conversation in the database.
    again = AppTest.from_file(CHAT, default_timeout=180)
    again.session_state["owner_id"] = "anon:ana"
    again.run()
    options = again.sidebar.selectbox[1].options
    assert len(options) == 2 and "Hello! My name is Ana." in options[1]
    again.sidebar.selectbox[1].select_index(1).run()
    assert [m.markdown[0].value for m in again.chat_message][0] == literal("Hello! My name is Ana.")


def test_a_reply_in_an_existing_conversation_is_drawn_in_one_run(app_env, monkeypatch):
    """After the first message (which reruns: the sidebar lists the new conversation), a reply is
    drawn by the run that wrote it: the same page a rerun would show (history, the reply with its
    details and consistency, no Stop button), each message once."""
    from core.store import Store

    runs = []  # each page run lists the owner's conversations once
    listed = Store.list_conversations
    monkeypatch.setattr(Store, "list_conversations", lambda self, **kw: runs.append(1) or listed(self, **kw))
    at = AppTest.from_file(CHAT, default_timeout=180)
    at.session_state["owner_id"] = "anon:one-run"
    at.run()
    at.chat_input[0].set_value("Hello! My name is Ana.").run()
    assert len(runs) == 3  # the first page, the message's run, its rerun
    at.chat_input[0].set_value("What is my name?").run()
    assert len(runs) == 4  # one run
    assert not at.exception
    messages = at.chat_message
    assert [m.name for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [m.markdown[0].value for m in messages if m.name == "user"] == [literal("Hello! My name is Ana."), literal("What is my name?")]
    assert not [b for b in at.button if b.label == "Stop"]
    for reply in (messages[1], messages[3]):
        captions = " ".join(c.value for c in reply.caption)
        assert "base ·" in captions and "Consistency vs. the conversation so far" in captions
    again = AppTest.from_file(CHAT, default_timeout=180)  # what a later run (or a reload) draws
    again.session_state["owner_id"] = "anon:one-run"
    again.run()
    assert [m.name for m in again.chat_message] == ["user", "assistant", "user", "assistant"]


@pytest.mark.slow
def test_chat_with_rag_shows_evidence(app_env):
    at = AppTest.from_file(CHAT, default_timeout=180).run()
    at.sidebar.selectbox[0].set_value("rag").run()
    # Retrieval searches the turns the conversation window no longer shows (core.methods.layout:
    # 6,000 characters by default): two long messages push the first one out of it.
    shed = "I spent the afternoon sorting the garden shed: old tools, paint tins and flower pots. " * 40
    for text in ("My sister lives in Toronto.", shed[:3500], shed[:3500], "Where does my sister live?"):
        at.chat_input[0].set_value(text).run()
    assert not at.exception
    assert len(at.chat_message) == 8
    evidence = at.chat_message[7].dataframe[0].value
    assert "Toronto" in " ".join(evidence["text"])


def _apply_endpoint(at: AppTest, url: str, model: str = "") -> AppTest:
    at.radio[0].set_value("openai")
    at.text_input[0].set_value(model)
    at.text_input[1].set_value(url)
    return at.button[1].click().run()  # the form's Apply


def test_endpoint_without_a_model_takes_the_one_the_server_lists(app_env):
    from tests.llm_stub import LLMStub

    with LLMStub() as stub:  # lists one model, "stub", at /v1/models
        at = _apply_endpoint(AppTest.from_file(HOME, default_timeout=60).run(), stub.url)
        assert not at.exception
        settings = at.session_state["llm_settings"]
        assert (settings.backend, settings.model) == ("openai", "stub")
        assert "/v1/models" in stub.gets
        assert any(literal("Model set to 'stub'") in s.value for s in at.success)  # shown after the rerun


def test_endpoint_without_a_model_is_refused_when_the_server_cannot_say(app_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    at = _apply_endpoint(AppTest.from_file(HOME, default_timeout=60).run(), f"http://127.0.0.1:{port}/v1")
    assert not at.exception
    assert at.session_state["llm_settings"].backend == "local"  # nothing saved
    [error] = at.error
    assert "Not saved" in error.value and "needs a model name" in error.value and "cannot reach" in error.value
    assert "?." not in error.value and "?" not in error.value.split("cannot reach")[1]


def test_endpoint_that_lists_no_model_is_refused(app_env):
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Empty(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = json.dumps({"object": "list", "data": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Empty)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        at = _apply_endpoint(AppTest.from_file(HOME, default_timeout=60).run(), f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()
    assert at.session_state["llm_settings"].backend == "local"
    assert "lists no model" in at.error[0].value
