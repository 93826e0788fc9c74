"""The running app in headless Chromium: chat with `dsm`, then see the Memory Graph canvas."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_memory_graph_page_draws_the_graph_canvas(app_server, page):
    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text("dsm — D-SMART memory (w/o RT)").click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("My dog is called Rex and I live in Paris.")
    box.press("Enter")
    from playwright.sync_api import expect

    messages = page.get_by_test_id("stChatMessage")
    # the local model answers; the box appears before its text streams in
    expect(messages.nth(1)).to_contain_text("dsm ·", timeout=180_000)
    # The consistency line is drawn by the rerun that follows saving the memory.
    messages.nth(1).get_by_text("CS ").first.wait_for(timeout=120_000)

    page.goto(app_server + "/Memory_graph")
    frame = page.frame_locator("iframe").first
    frame.locator("#mynetwork canvas").wait_for(timeout=60_000)  # vis-network drew the graph
    assert page.get_by_text("1 round(s)").count() >= 1
