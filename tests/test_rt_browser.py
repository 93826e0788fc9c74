"""The running app in headless Chromium: a `dsmart` reply from the real local model, with its
reasoning tree drawn in the reply's Trace tab."""

from __future__ import annotations

import pytest

from browser_helpers import chat_once

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_dsmart_reply_draws_its_reasoning_tree(app_server, page):
    from playwright.sync_api import expect

    reply = chat_once(page, app_server, "dsmart — D-SMART (memory graph + reasoning tree)",
                      "My dog Rex is three years old. How old is Rex?")
    reply.get_by_text("Evidence, timings and trace").click()
    reply.get_by_role("tab", name="Trace").click()
    reply.frame_locator("iframe").first.locator("#mynetwork canvas").wait_for(timeout=60_000)  # vis-network drew the tree
    expect(reply).to_contain_text("ROOT")
