"""The running app in headless Chromium, against a stub OpenAI-compatible endpoint:

- two browsers at once (two Playwright contexts: separate cookies, as two people) each chat with
  the `dsm` method, and neither sees the other's conversation titles, turns, memory graph or
  retrieval chats; a reload keeps each one's own;
- HTML, <script> and Markdown-image payloads show as text in messages, titles and the memory
  graph, run nothing and fetch nothing; a planted API key is in no page, export or log."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.methods import method_class
from core.methods.dsmart.vocab import DSM, entity
from core.methods.dsmart.vocab import USER as USER_NODE
from tests.app_process import AppProcess
from tests.llm_stub import LLMStub, statement_or_echo

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ALICE = ("My name is Alice Secretname. My cat is Whiskers.", ("Secretname", "Whiskers"))
BOB = ("My name is Bob Hiddenname. My dog is Rexford.", ("Hiddenname", "Rexford"))
DSM_OPTION = f"dsm — {method_class('dsm').label}"


def stub_reply(body: dict) -> str:
    return statement_or_echo(body, keep=120)


PLANTED = "sk-PLANTED-browser-5e1f0a9d77c3"
EVIL_LABEL = '<img src=x onerror="window.__pwned = 4"><script>window.__pwned = 5</script>'


@pytest.fixture(scope="module")
def stub_server():
    with LLMStub(reply=stub_reply) as stub:
        yield stub


@pytest.fixture(scope="module")
def owners_app(tmp_path_factory, stub_server):
    folder = tmp_path_factory.mktemp("owners")
    env = {"WORKBENCH_LLM_BASE_URL": stub_server.url, "WORKBENCH_LLM_MODEL": "stub", "WORKBENCH_LLM_API_KEY": PLANTED}
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


def wait_graph(page) -> None:
    """The Memory graph page's network iframe has loaded its document."""
    page.wait_for_function("() => { const f = document.querySelector('iframe'); const d = f && f.contentDocument;"
                           " return !!(d && d.body && d.body.innerHTML.length > 1000); }", timeout=30_000)


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
    wait_graph(page)
    text = everything(page)
    assert own_words[1] in text  # the pet's name is a node of the own graph
    assert not any(w in text for w in other_words), [w for w in other_words if w in text]
    assert len(options_of(page, 0)) == 1
    # Retrieval comparison, "My chats"
    page.goto(url + "/Retrieval_comparison")
    page.get_by_text("My chats").first.click()
    main = page.get_by_test_id("stMain")
    main.get_by_text("Chat", exact=True).first.wait_for(timeout=30_000)  # the chat picker's label (the nav's is in the sidebar)
    # the LoCoMo picker it replaces can linger until the rerun ends: read the picker once it is gone
    main.get_by_text("Conversation", exact=True).wait_for(state="detached", timeout=30_000)
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
        alice.goto(url + "/Chat")
        alice.reload()  # a new Streamlit session: the cookie brings Alice's conversations back
        alice.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
        options = options_of(alice, 1)
        assert len(options) == 2 and ALICE[0][:40] in options[1], options
    finally:
        for c in contexts:
            c.close()


def test_payloads_show_as_text_run_nothing_and_the_key_shows_nowhere(browser, owners_app, stub_server):
    url = owners_app.url
    pixel = stub_server.url.replace("/v1", "/pixel.png")
    payload = (f"My cat is <b>Tom</b> & <script>window.__pwned = 1</script>. "
               f"<img src=x onerror=\"window.__pwned = 2\"> ![pixel]({pixel}) [link](javascript:window.__pwned=3)")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        send(page, url, payload)
        wait_saved(page, payload)
        message = page.get_by_test_id("stChatMessage").first.get_by_test_id("stMarkdownContainer").first
        assert " ".join(message.inner_text().split()) == " ".join(payload.split())  # exactly the typed text
        assert message.locator("img, script, b, iframe").count() == 0, message.inner_html()
        # the one thing Markdown still does to text: a bare http(s) URL becomes a link to itself (never fetched)
        links = message.locator("a")
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == [pixel]
        assert payload[:40] in " ".join(options_of(page, 1))  # the title, as text
        html = page.content()
        page.goto(url + "/Memory_graph")
        page.get_by_text("Source:").first.wait_for(timeout=60_000)
        wait_graph(page)
        # an imported file whose labels carry the payloads: KG node labels, tooltips and the triples table
        page.get_by_text("Export / import").click()
        quoted = EVIL_LABEL.replace('"', '\\"')
        pet = entity("evil_pet")  # a fact about a node whose label carries the payloads
        evil = (f'<{pet}> <http://www.w3.org/2000/01/rdf-schema#label> "{quoted}" .\n'
                f'<{USER_NODE}> <{DSM.has}> <{pet}> .\n')
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
            files=[{"name": "evil.nt", "mimeType": "application/n-triples", "buffer": evil.encode()}])
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Imported 1 facts").wait_for(timeout=30_000)
        page.reload()  # draw the graph with the imported node
        wait_graph(page)
        page.wait_for_timeout(1500)  # let vis-network draw and the scripts run, if any would
        graph_page = page.frames[1].content()
        assert "window.__pwned" in graph_page and "<script>window.__pwned" not in graph_page  # JSON-encoded text
        for frame in page.frames:  # the page and the graph's iframe: nothing ran
            assert frame.evaluate("() => window.__pwned") is None
        with page.expect_download() as download:
            page.get_by_text("Export / import").click()
            page.get_by_role("button", name="Turtle").click()
        export = Path(download.value.path()).read_text()
        assert "user's cat" in export and quoted in export
        page.goto(url)
        page.get_by_text("Dialogue memory workbench").first.wait_for(timeout=60_000)
        page.get_by_text("API key set").first.wait_for(timeout=30_000)  # the key is there ...
        for text in (html, everything(page), export, owners_app.log()):
            assert PLANTED not in text and PLANTED[3:18] not in text  # ... and shown, exported, logged nowhere
        assert not [g for g in stub_server.gets if "pixel" in g]  # the Markdown image was never fetched
        assert any(h.get("authorization") == f"Bearer {PLANTED}" for h in stub_server.headers)
    finally:
        context.close()
