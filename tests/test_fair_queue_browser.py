"""The fair queue in headless Chromium (issue 54): one person's Compare holds both of the model's
slots (a stub endpoint that answers two requests at once, 10 s each); a second person's Chat
message sent meanwhile shows its place in line, then is answered; the Compare finishes too."""

from __future__ import annotations

import re

import pytest

from tests.app_process import AppProcess
from tests.llm_stub import LLMStub

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANSWER_S = 10.0


@pytest.fixture(scope="module")
def busy_app(tmp_path_factory):
    with LLMStub(delay_s=ANSWER_S, slots=2) as stub:
        folder = tmp_path_factory.mktemp("fair-queue")
        env = {"WORKBENCH_LLM_BASE_URL": stub.url, "WORKBENCH_LLM_MODEL": "stub",
               # the endpoint's two slots, and an owner may take both: the Compare fills the model
               "WORKBENCH_LLM_QUEUE_SLOTS": "2", "WORKBENCH_LLM_QUEUE_PER_OWNER": "2"}
        with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", env) as app:
            yield app


def test_a_message_sent_during_anothers_compare_shows_its_place_and_is_answered(browser, busy_app):
    from playwright.sync_api import expect

    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        marta, bob = (c.new_page() for c in contexts)
        marta.goto(busy_app.url + "/Compare")
        bob.goto(busy_app.url + "/Chat")
        for page in (marta, bob):
            page.get_by_test_id("stChatInputTextArea").wait_for(timeout=90_000)
        marta.get_by_test_id("stChatInputTextArea").fill("Hi! I'm Marta and my puppy is called Biscuit.")
        marta.get_by_test_id("stChatInputTextArea").press("Enter")
        marta.get_by_text(re.compile("working…")).first.wait_for(timeout=30_000)  # both replies are with the model
        bob.get_by_test_id("stChatInputTextArea").fill("Hello, I am Bob.")
        bob.get_by_test_id("stChatInputTextArea").press("Enter")
        try:
            expect(bob.get_by_text(re.compile(r"Waiting for the model: next in line \(1 waiting\)"))).to_be_visible(
                timeout=int(ANSWER_S * 1000))
        except AssertionError:
            pytest.fail(f"no place shown; the page says {bob.get_by_test_id('stMain').inner_text()[-1500:]!r}; "
                        f"the app's log ends {busy_app.log()[-3000:]!r}")
        expect(bob.get_by_text("You said: Hello, I am Bob.").first).to_be_visible(timeout=int(4 * ANSWER_S * 1000))
        expect(bob.get_by_text(re.compile("Waiting for the model"))).to_have_count(0)  # the line goes once it starts
        expect(marta.get_by_role("button", name="A is better")).to_be_visible(timeout=int(4 * ANSWER_S * 1000))
    finally:
        for c in contexts:
            c.close()
