"""Two browsers at once (two Playwright contexts: separate cookies, as two people): each chats with
the `dsm` method against a stub OpenAI-compatible endpoint, and neither sees the other's
conversation titles, turns, memory graph or retrieval chats; a reload keeps each one's own."""

from __future__ import annotations

import re
import time

import pytest

from core.methods import method_class
from tests.app_process import AppProcess
from tests.llm_stub import LLMStub

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ALICE = ("My name is Alice Secretname. My cat is Whiskers.", ("Secretname", "Whiskers"))
BOB = ("My name is Bob Hiddenname. My dog is Rexford.", ("Hiddenname", "Rexford"))
DSM_OPTION = f"dsm — {method_class('dsm').label}"


def stub_reply(body: dict) -> str:
    """The chat reply echoes; D-SMART's distillation prompt gets the question back as the
    statement, so the spaCy extractor builds a graph of the user's words."""
    text = body["messages"][-1]["content"]
    found = re.search(r'### Now process:\s*Question: "(.*?)"\s*Answer:', text, re.S)
    return found.group(1) if found else f"You said: {text[-120:]}"


@pytest.fixture(scope="module")
def owners_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("owners")
    with LLMStub(reply=stub_reply) as stub:
        env = {"WORKBENCH_LLM_BASE_URL": stub.url, "WORKBENCH_LLM_MODEL": "stub"}
        with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", env) as app:
            yield app


def send(page, url: str, message: str) -> None:
    page.goto(url + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text(DSM_OPTION).click()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(message)
    box.press("Enter")


def wait_saved(page, message: str) -> None:
    """The reply is on screen and the rerun after saving the memory has picked the conversation."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stChatMessage").nth(1)).to_contain_text("You said", timeout=120_000)
    picker = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").nth(1)
    deadline = time.time() + 120
    while message[:20] not in picker.aria_snapshot():  # the chosen option is the combobox's value
        assert time.time() < deadline, picker.aria_snapshot()
        page.wait_for_timeout(250)


def options_of(page, index: int, where="stSidebar") -> list[str]:
    page.get_by_test_id(where).get_by_test_id("stSelectbox").nth(index).click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=10_000)
    texts = options.all_inner_texts()
    page.keyboard.press("Escape")
    return texts


def everything(page) -> str:
    """The page's text plus every frame's HTML (the graph's iframe)."""
    return page.inner_text("body") + "\n".join(f.content() for f in page.frames[1:])


def check_sees_only_own(page, url: str, own, other) -> None:
    own_message, own_words = own
    _, other_words = other
    # Chat: the conversation menu and the page
    page.goto(url + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    options = options_of(page, 1)
    assert len(options) == 2 and own_message[:40] in options[1], options
    assert not any(w in everything(page) for w in other_words)
    # Memory graph: the own graph, nothing of the other's
    page.goto(url + "/Memory_graph")
    page.get_by_text("Source:").first.wait_for(timeout=60_000)
    page.locator("iframe").first.wait_for(timeout=30_000)
    page.wait_for_function("() => document.querySelector('iframe') && document.querySelector('iframe').contentDocument"
                           " && document.querySelector('iframe').contentDocument.body.innerHTML.length > 1000",
                           timeout=30_000)
    text = everything(page)
    assert own_words[1] in text  # the pet's name is a node of the own graph
    assert not any(w in text for w in other_words), [w for w in other_words if w in text]
    assert len(options_of(page, 0)) == 1
    # Retrieval comparison, "My chats"
    page.goto(url + "/Retrieval_comparison")
    page.get_by_text("My chats").first.click()
    page.get_by_text("Chat", exact=True).first.wait_for(timeout=30_000)
    chats = options_of(page, 0, where="stMain")
    assert len(chats) == 1 and own_message[:40] in chats[0], chats


def test_two_browsers_chat_at_once_and_neither_sees_the_other(browser, owners_app):
    url = owners_app.url
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        alice, bob = (c.new_page() for c in contexts)
        send(alice, url, ALICE[0])
        send(bob, url, BOB[0])  # while Alice's reply may still be on its way
        wait_saved(alice, ALICE[0])
        wait_saved(bob, BOB[0])
        cookies = [{c["name"]: c["value"] for c in ctx.cookies()}.get("workbench_owner") for ctx in contexts]
        assert all(cookies) and cookies[0] != cookies[1]
        check_sees_only_own(alice, url, ALICE, BOB)
        check_sees_only_own(bob, url, BOB, ALICE)
        alice.reload()  # a new Streamlit session: the cookie brings Alice's conversations back
        alice.get_by_test_id("stSidebar").wait_for(timeout=60_000)
        check_sees_only_own(alice, url, ALICE, BOB)
    finally:
        for c in contexts:
            c.close()
