"""The running app in headless Chromium with the `mcts` method over a 30-sentence GenericsKB-format
file (tests/mcts_helpers.py; built with the real MiniLM embedder and spaCy in seconds): a Chat reply
from the real local model with its knowledge evidence and search trees, and the Retrieval comparison
page's knowledge tab with an mcts column beside dense and sgmem (reasoner off there, for time)."""

from __future__ import annotations

import pytest

from tests.browser_helpers import CS_BADGE
from tests.mcts_helpers import write_kb

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MCTS_OPTION = "mcts — MCTS knowledge retrieval"


@pytest.fixture(scope="module")
def kb_file(tmp_path_factory):
    return str(write_kb(tmp_path_factory.mktemp("kb")))


def _set_text(page, label: str, value: str) -> None:
    box = page.get_by_role("textbox", name=label, exact=True)
    box.wait_for(timeout=60_000)
    box.fill(value)
    box.press("Enter")  # a Streamlit text_input commits on Enter


def _tree_nodes(page, timeout_s: float = 60) -> int:
    """Nodes of the first vis-network drawn in any frame of the page (pyvis's global `network`)."""
    import time

    from playwright.sync_api import Error

    deadline = time.time() + timeout_s
    while time.time() < deadline:
        for frame in page.frames:
            try:
                n = frame.evaluate("() => typeof network === 'undefined' ? 0 : network.body.data.nodes.length")
            except Error:  # a frame navigating or gone
                continue
            if n:
                return n
        time.sleep(0.5)
    return 0


def test_mcts_chat_reply_shows_knowledge_and_trees(app_server, page, kb_file):
    from playwright.sync_api import expect

    page.goto(app_server + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text(MCTS_OPTION).click()
    _set_text(page.get_by_test_id("stSidebar"), "Knowledge base (GenericsKB format)", kb_file)
    expect(page.get_by_test_id("stSidebar")).not_to_contain_text("No file at", timeout=30_000)
    tokens = page.get_by_role("spinbutton", name="Max reply tokens")
    tokens.fill("16")  # the shortest reply: the reasoner and the search are what this test is about
    tokens.press("Enter")
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("My dog runs in the park every day.")
    box.press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(1)
    # KB build (30 sentences), the reasoner's 11 completions and the answer, all on 2 cores
    expect(reply).to_contain_text("mcts ·", timeout=480_000)
    reply.get_by_text(CS_BADGE).first.wait_for(timeout=120_000)
    reply = page.get_by_test_id("stChatMessage").nth(1)
    assert reply.get_by_test_id("stMarkdownContainer").first.inner_text().strip()
    reply.get_by_text("Evidence, timings and trace").click()
    expect(reply).to_contain_text("knowledge", timeout=30_000)  # evidence rows of kind "knowledge"
    reply.get_by_role("tab", name="Trace").click()
    expect(reply).to_contain_text("COMET is not available offline", timeout=30_000)
    expect(reply).to_contain_text("Context concepts N_C:")
    assert _tree_nodes(page) >= 3  # the context root and the bridging and retrieval trees, drawn by vis-network


def test_comparison_page_shows_an_mcts_row(app_server, page, kb_file):
    from playwright.sync_api import expect

    page.goto(app_server + "/Retrieval_comparison")
    page.get_by_role("tab", name="Commonsense knowledge (MCTS)").click()
    panel = page.get_by_role("tabpanel", name="Commonsense knowledge (MCTS)")
    panel.get_by_text("Type a context").click()
    _set_text(panel, "Knowledge base (GenericsKB format)", kb_file)
    # The reasoner is exercised by the Chat test; here mcts searches with the context alone (short).
    panel.get_by_text("Run the reasoner (the configured LLM)").click()
    panel.get_by_role("button", name="Retrieve knowledge").click()
    # default methods: dense, sgmem, mcts
    expect(panel.get_by_role("heading", name="mcts", exact=True)).to_be_visible(timeout=480_000)
    expect(panel.get_by_role("heading", name="dense", exact=True)).to_be_visible()
    expect(panel).to_contain_text("Context concepts N_C:", timeout=30_000)
    expect(panel.get_by_role("heading", name="sgmem", exact=True)).to_be_visible()
    assert _tree_nodes(page) >= 3
    # the mcts column lists knowledge sentences from the KB file with their scores
    assert panel.get_by_text("score ").count() >= 3
