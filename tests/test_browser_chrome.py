"""Issue 57 in a real Chromium: every page, opened by its own address, loads with no console error
and no failed request (Streamlit's probes of /<page>/_stcore/... answered 404 before ui/page_index.py);
the sidebar's icons are Material icons (no emoji, which need an emoji font) and the tab's icon is
the app's own image; moving between pages after such a load keeps the addresses right."""

from __future__ import annotations

import re
import time

import pytest

from tests.app_process import AppProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ["", "Chat", "Memory_graph", "Retrieval_comparison", "Metrics", "Annotation", "Compare"]
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]")


@pytest.fixture()
def app(tmp_path):
    # no LLM call is made; the warm-up is off so that the pages open at once
    with AppProcess(tmp_path / "app.sqlite3", tmp_path / "app.log", env={"WORKBENCH_WARMUP": "0"}) as proc:
        yield proc


def test_every_page_opened_by_its_address_loads_without_errors_and_with_icons(app, page):
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text} ({m.location.get('url')})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status}: {r.url}"))
    # a request the next goto cancels (a chunk the last page was still loading) is ERR_ABORTED: no fault
    page.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "") and problems.append(f"failed: {r.url} ({r.failure})"))
    for path in PAGES:
        page.goto(f"{app.url}/{path}")
        nav = page.get_by_test_id("stSidebarNav")
        nav.wait_for(timeout=60_000)
        page.get_by_test_id("stHeading").first.wait_for(timeout=60_000)
        time.sleep(2)  # late requests (fonts, the favicon, a rerun) land
        assert problems == [], f"/{path}: {problems}"
        assert nav.get_by_test_id("stIconMaterial").count() == len(PAGES)  # one Material icon per page link
        assert not EMOJI.search(nav.inner_text())
        icon = page.locator("link[rel='shortcut icon']").first.get_attribute("href") or ""
        assert "gstatic" not in icon and not icon.startswith("http") or icon.startswith(app.url), icon

    page.goto(f"{app.url}/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=re.compile("Compare")).click()
    page.get_by_role("heading", name="Compare").wait_for(timeout=60_000)
    assert page.url.split("?")[0] == f"{app.url}/Compare"  # not /Chat/Compare: the root is the server's
    assert problems == []
