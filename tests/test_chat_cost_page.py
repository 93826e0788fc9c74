"""The Chat page shows each reply's cost (LLM calls and tokens per stage) and what the reply check
changed (AppTest, with the OpenAI-compatible stub on 127.0.0.1 as the backend)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)

CHAT = str(Path(__file__).resolve().parent.parent / "pages" / "1_Chat.py")


def test_chat_reply_shows_calls_and_tokens_per_stage(stub):
    reply = "Nice to meet you! What brings you here today?"  # says nothing back: written once (core.reply_check)
    stub.reply = lambda body: reply
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = "anon:cost-test"
    at.run()
    at.chat_input[0].set_value("Hello, I am Ana.").run()
    assert not at.exception
    caption = at.chat_message[1].caption[0].value
    assert "1 LLM call(s)" in caption and "prompt +" in caption and "completion tokens" in caption
    frame = at.chat_message[1].dataframe[-1].value.set_index("stage")
    assert list(frame.columns) == ["seconds", "llm_calls", "prompt_tokens", "completion_tokens"]
    generate = frame.loc["generate"]
    # The stub streams and its endpoint has no tokenizer: the counts are the 4-characters estimate.
    assert generate["llm_calls"] == 1 and generate["completion_tokens"] == (len(reply) + 3) // 4
    assert generate["prompt_tokens"] >= (len("Hello, I am Ana.") + 3) // 4
    assert frame.loc["build_prompt", "llm_calls"] == 0

    again = AppTest.from_file(CHAT, default_timeout=120)  # the stored reply keeps its counts
    again.session_state["owner_id"] = "anon:cost-test"
    again.run()
    again.sidebar.selectbox[1].select_index(1).run()
    assert again.chat_message[1].dataframe[-1].value.set_index("stage").loc["generate", "llm_calls"] == 1


def test_a_reply_the_check_changed_is_shown_as_stored_with_the_methods_text_in_its_details(stub):
    """The stub streams a reply that says the user's statement back as its own; the page shows the
    checked text (the sentence said back dropped, issue 52), says the check edited it, and gives the
    method's text."""
    stub.reply = lambda body: "Nice to meet you! I live in Porto with my dog Rex."
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = "anon:check-test"
    at.run()
    at.chat_input[0].set_value("Hi, I live in Porto with my dog Rex.").run()
    assert not at.exception
    reply = at.chat_message[1]
    shown = " ".join(m.value.replace("\\", "") for m in reply.markdown)  # Markdown escapes removed
    assert "Nice to meet you!" in shown and "Porto" not in shown
    assert "edited by the reply check" in reply.caption[0].value
    assert reply.text[0].value == "Nice to meet you! I live in Porto with my dog Rex."  # the method's own text, first in its details
