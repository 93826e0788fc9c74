"""The fair queue in headless Chromium (issue 54): one person's Compare holds both of the model's
slots (a stub endpoint that keeps Marta's two replies until the test lets them go); a second
person's Chat message sent meanwhile shows its place in line, never reaches the model while it
waits, and is answered once a slot frees."""

from __future__ import annotations

import re
import time

import pytest

from tests.app_process import AppProcess
from tests.llm_stub import LLMStub

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def busy_app(tmp_path_factory):
    with LLMStub(hang_s=600) as stub:
        stub.hang_if = lambda body: "Marta" in json_text(body)  # Marta's replies wait for stub.release()
        folder = tmp_path_factory.mktemp("fair-queue")
        env = {"WORKBENCH_LLM_BASE_URL": stub.url, "WORKBENCH_LLM_MODEL": "stub",
               # the endpoint's two slots, and an owner may take both: the Compare fills the model
               "WORKBENCH_LLM_QUEUE_SLOTS": "2", "WORKBENCH_LLM_QUEUE_PER_OWNER": "2"}
        with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", env) as app:
            yield app, stub


def json_text(body: dict) -> str:
    return " ".join(str(m.get("content", "")) for m in body.get("messages", []))


def test_a_message_sent_during_anothers_compare_shows_its_place_and_is_answered(browser, busy_app):
    from playwright.sync_api import expect

    app, stub = busy_app
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        marta, bob = (c.new_page() for c in contexts)
        marta.goto(app.url + "/Compare")
        bob.goto(app.url + "/Chat")
        for page in (marta, bob):
            page.get_by_test_id("stChatInputTextArea").wait_for(timeout=90_000)
        marta.get_by_test_id("stChatInputTextArea").fill("Hi! I'm Marta and my puppy is called Biscuit.")
        marta.get_by_test_id("stChatInputTextArea").press("Enter")
        deadline = time.time() + 240  # the embedder loads first
        while not stub.hanging.is_set() and time.time() < deadline:  # Marta's replies are with the model
            marta.wait_for_timeout(200)
        assert stub.hanging.is_set(), marta.get_by_test_id("stMainBlockContainer").inner_text()[-1500:]
        bob.get_by_test_id("stChatInputTextArea").fill("Hello, I am Bob.")
        bob.get_by_test_id("stChatInputTextArea").press("Enter")
        try:
            expect(bob.get_by_text(re.compile(r"Waiting for the model: next in line \(1 waiting\)"))).to_be_visible(
                timeout=240_000)
        except AssertionError:
            pytest.fail(f"no place shown; the page says {bob.get_by_test_id('stMainBlockContainer').inner_text()[-1500:]!r}; "
                        f"the app's log ends {app.log()[-3000:]!r}")
        assert not any("Bob" in json_text(body) for body in stub.requests)  # it waited in the app, not at the model
        stub.release()  # Marta's replies end: a slot frees
        expect(bob.get_by_text("You said: Hello, I am Bob.").first).to_be_visible(timeout=240_000)
        expect(bob.get_by_text(re.compile("Waiting for the model"))).to_have_count(0)  # the line goes once it starts
    finally:
        stub.release()
        for c in contexts:
            c.close()
