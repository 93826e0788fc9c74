"""The Compare page in headless Chromium on a fresh database, with the embedded small model (as the
issue's bar): the sidebar lists Compare; the page opens with two methods; one message gives two
replies; the headers show A and B and no method name before the vote; after "A is better" both
names show and the ranking lists both; `votes export` writes the one vote and `votes report`
prints a strength for each method."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest

from tests.app_process import REPO, AppProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def compare_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    env = {"WORKBENCH_LLM_MODEL": "small", "WORKBENCH_WARMUP_KB": "0"}
    with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", env) as app:
        yield app, folder / "app.sqlite3"


def test_two_methods_one_message_blind_vote_names_revealed_ranking_updated(browser, compare_app, tmp_path):
    from playwright.sync_api import expect

    app, db = compare_app
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(app.url + "/Compare")
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Compare", exact=True).first).to_be_visible(timeout=60_000)
    box = page.get_by_test_id("stChatInputTextArea")
    box.wait_for(timeout=60_000)
    box.fill("Hi! I'm Marta and my puppy is called Biscuit.")
    t0 = time.time()
    box.press("Enter")
    a_better = page.get_by_role("button", name="A is better")
    try:  # both replies stored: the rerun draws the turn with its vote buttons (the bar's 60 s is for an idle machine)
        a_better.wait_for(timeout=400_000)
    except Exception:
        pytest.fail(f"no vote buttons; the page says {page.get_by_test_id('stMainBlockContainer').inner_text()[-1500:]!r}; "
                    f"the app's log ends {app.log()[-3000:]!r}")
    seconds = time.time() - t0
    expect(page.get_by_role("button", name="B is better")).to_be_visible()
    main = page.get_by_test_id("stMainBlockContainer")

    def headers() -> list[str]:
        texts = [t.strip() for t in main.get_by_test_id("stMarkdownContainer").all_inner_texts()]
        return [t for t in texts if re.fullmatch(r"[A-D]( · \S+)?", t)]

    assert headers() == ["A", "B"]  # no method name in the reply headers before the vote
    a_better.click()
    deadline = time.time() + 60
    while not all(re.fullmatch(r"[AB] · (base|rag)", h) for h in headers() or ["-"]):
        assert time.time() < deadline, headers()
        page.wait_for_timeout(250)
    assert {h.split(" · ")[1] for h in headers()} == {"base", "rag"}  # both names after the vote
    expect(main.get_by_text("Your vote:").first).to_be_visible()
    expect(main.get_by_text("1 votes").first).to_be_visible(timeout=30_000)  # the ranking now counts the vote
    expect(main.get_by_text("No votes yet")).to_have_count(0)
    print(f"two replies stored and drawn {seconds:.1f} s after the message")  # noqa: T201 (the test's one figure)

    out = tmp_path / "votes.jsonl"
    proc = subprocess.run([sys.executable, "-m", "core", "votes", "export", "--db", str(db), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [line] = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["winner"] in ("base", "rag") and len(line["methods"]) == 2 and line["winner"] == line["methods"][0]
    proc = subprocess.run([sys.executable, "-m", "core", "votes", "report", "--db", str(db), "--bootstrap", "100"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and re.search(r"^  base\s+[+-]\d", proc.stdout, re.M) and re.search(r"^  rag\s+[+-]\d", proc.stdout, re.M)
