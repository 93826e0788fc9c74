"""The paper methods answer in a real browser: `dsmart`, `rt` and `mcts` each show what they are
doing (the status line of the reply, the reasoning tree as it grows) and then their answer; a
stopped `dsmart` reply leaves the model free for the next reply."""

from __future__ import annotations

import pytest

from browser_helpers import chat_once

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OPTIONS = {
    "dsmart": "dsmart — D-SMART (memory graph + reasoning tree)",
    "rt": "rt — Reasoning tree only (w/o DSM)",
}


@pytest.mark.parametrize("method", ["dsmart", "rt", "mcts"])
def test_paper_method_shows_progress_then_answers(app_server, page, method):
    from playwright.sync_api import expect

    option = OPTIONS.get(method) or f"{method} — "
    reply = chat_once(page, app_server, option, "My dog Rex is three years old. What should I feed him?")
    status = reply.get_by_test_id("stExpander").first  # the reply's status: what the method did, then "done"
    expect(status).to_contain_text(f"{method}: done in")
    assert reply.get_by_test_id("stMarkdown").count() >= 1  # the answer's text


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
    reply = chat_once(page, app_server, "base — ", "What is two plus two?")
    expect(reply).to_contain_text("base ·")
