"""The running app in headless Chromium: chat with `dsm`, then see the Memory Graph canvas."""

from __future__ import annotations

import pytest

from browser_helpers import chat_once

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_memory_graph_page_draws_the_graph_canvas(app_server, page):
    chat_once(page, app_server, "dsm — D-SMART memory (w/o RT)", "My dog is called Rex and I live in Paris.")

    page.goto(app_server + "/Memory_graph")
    frame = page.frame_locator("iframe").first
    frame.locator("#mynetwork canvas").wait_for(timeout=60_000)  # vis-network drew the graph
    assert page.get_by_text("1 round(s)").count() >= 1
