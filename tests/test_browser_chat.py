"""The running app in headless Chromium: open the Chat page, send a message, see the reply."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_chat_round_trip_in_the_browser(app_server, page):
    page.goto(app_server + "/Chat")
    box = page.get_by_test_id("stChatInputTextArea")
    box.wait_for(timeout=60_000)
    box.fill("Hello! My dog is called Rex.")
    box.press("Enter")
    from playwright.sync_api import expect

    messages = page.get_by_test_id("stChatMessage")
    # The first reply loads the local model (seconds once converted) and generates (~10 s). The
    # message box appears before its text streams in, so wait for the content, not the box.
    expect(messages.nth(1)).to_contain_text("base ·", timeout=180_000)
    assert "Hello! My dog is called Rex." in messages.nth(0).inner_text()
    assert messages.nth(1).get_by_test_id("stMarkdownContainer").first.inner_text().strip()


def test_home_page_renders(app_server, page):
    page.goto(app_server)
    page.get_by_text("Dialogue memory workbench").first.wait_for(timeout=60_000)
    assert page.get_by_text("Methods available").count() >= 1
