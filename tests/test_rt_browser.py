"""The running app in headless Chromium: a `dsmart` reply from the real local model, with its
reasoning tree drawn in the reply's Trace tab."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_dsmart_reply_draws_its_reasoning_tree(app_server, page):
    from playwright.sync_api import expect

    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text("dsmart — D-SMART (memory graph + reasoning tree)").click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("My dog Rex is three years old. How old is Rex?")
    box.press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(1)
    expect(reply).to_contain_text("dsmart ·", timeout=180_000)
    reply.get_by_text("CS ").first.wait_for(timeout=120_000)  # drawn by the rerun after the memory is saved
    reply = page.get_by_test_id("stChatMessage").nth(1)
    reply.get_by_text("Evidence, timings and trace").click()
    reply.get_by_role("tab", name="Trace").click()
    reply.frame_locator("iframe").first.locator("#mynetwork canvas").wait_for(timeout=60_000)  # vis-network drew the tree
    expect(reply).to_contain_text("ROOT")
