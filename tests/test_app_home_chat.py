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

    # A new session (as after an app restart) finds the conversation in the database.
    again = AppTest.from_file(CHAT, default_timeout=180)
    again.session_state["owner_id"] = "anon:ana"
    again.run()
    options = again.sidebar.selectbox[1].options
    assert len(options) == 2 and "Hello! My name is Ana." in options[1]
    again.sidebar.selectbox[1].select_index(1).run()
    assert [m.markdown[0].value for m in again.chat_message][0] == literal("Hello! My name is Ana.")


@pytest.mark.slow
def test_chat_with_rag_shows_evidence(app_env):
    at = AppTest.from_file(CHAT, default_timeout=180).run()
    at.sidebar.selectbox[0].set_value("rag").run()
    # Retrieval searches turns older than the two most recent (those are in the prompt anyway).
    for text in ("My sister lives in Toronto.", "I had pasta for lunch.", "Where does my sister live?"):
        at.chat_input[0].set_value(text).run()
    assert not at.exception
    assert len(at.chat_message) == 6
    evidence = at.chat_message[5].dataframe[0].value
    assert "Toronto" in " ".join(evidence["text"])
