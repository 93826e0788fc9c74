"""Shared steps of the browser tests: chat once with a chosen method in the running app."""

from __future__ import annotations

import re

# The consistency badge's "CS 0.91". Case-sensitive and with its digits: get_by_text("CS ") is a
# case-insensitive substring, so a reply saying "topics ..." in a collapsed expander matched first
# and was waited on as hidden for 240 s (CI, stop 37).
CS_BADGE = re.compile(r"\bCS \d\.\d\d\b")


def chat_once(page, app_server: str, method_option: str, message: str, new_conversation: bool = False):
    """Open Chat, pick `method_option` (the method picker's text, e.g. "dsm — ..."), send `message`
    and wait for the reply and for the rerun that follows saving the memory. Returns the reply.
    `new_conversation`: start one first (Chat reopens the latest, which may hold a kept stopped round)."""
    from playwright.sync_api import expect

    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    if new_conversation:
        page.get_by_test_id("stSidebar").get_by_role("button", name="New conversation").click()
        expect(page.get_by_test_id("stChatMessage")).to_have_count(0, timeout=30_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text(method_option).click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(message)
    box.press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(1)
    # the local model answers; the box appears before its text streams in
    expect(reply).to_contain_text(method_option.split(" — ")[0] + " ·", timeout=180_000)
    # The consistency line is drawn by the rerun that follows saving the memory.
    reply.get_by_text(CS_BADGE).first.wait_for(timeout=120_000)
    return page.get_by_test_id("stChatMessage").nth(1)
