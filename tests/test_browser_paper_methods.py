"""The paper methods answer in a real browser: `dsmart` and `rt` show what they are doing (the
reply's status box, the reasoning tree as it grows) before their answer, then answer; a stopped
`dsmart` reply leaves the model free for the next reply. (`mcts` answering, with a small knowledge
base, is tests/test_mcts_browser.py.)"""

from __future__ import annotations

import pytest

from browser_helpers import CS_BADGE, chat_once

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OPTIONS = {
    "dsmart": "dsmart — D-SMART (memory graph + reasoning tree)",
    "rt": "rt — Reasoning tree only (w/o DSM)",
}


@pytest.mark.parametrize("method", ["dsmart", "rt"])
def test_paper_method_shows_progress_then_answers(app_server, page, method):
    import re

    from playwright.sync_api import expect

    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text(OPTIONS[method]).click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("My dog Rex is three years old. What should I feed him?")
    box.press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(1)
    # the status box shows what the method does (working, then the tree) before any answer text
    expect(reply).to_contain_text(re.compile(r"is working|tree \d+%"), timeout=60_000)
    expect(reply).to_contain_text(f"{method} ·", timeout=180_000)  # the answer, with its details line
    reply.get_by_text(CS_BADGE).first.wait_for(timeout=120_000)  # saved, and redrawn from the store
    assert page.get_by_test_id("stChatMessage").nth(1).get_by_test_id("stMarkdownContainer").first.inner_text().strip()


def test_stop_frees_the_model_for_the_next_reply(app_server, page):
    from playwright.sync_api import expect

    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text(OPTIONS["dsmart"]).click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("Tell me a long story about my dog Rex and his friends.")
    box.press("Enter")
    page.get_by_role("button", name="Stop").click(timeout=60_000)
    expect(page.get_by_text("Reply stopped")).to_be_visible(timeout=30_000)
    # the stopped round is kept (message and partial reply, marked stopped); the next reply goes to a new conversation
    expect(page.get_by_test_id("stChatMessage").nth(1)).to_contain_text("stopped", timeout=30_000)
    reply = chat_once(page, app_server, "base — ", "What is two plus two?", new_conversation=True)
    expect(reply).to_contain_text("base ·")
