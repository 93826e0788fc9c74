"""Take the README's screenshot: the running app in headless Chromium after a short `dsm` chat,
showing the Memory graph page.

Needs Debian's Chromium (`apt-get install chromium`; never `playwright install`).
Usage: .venv/bin/python scripts/screenshot.py [--out docs/screenshot.png]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
MESSAGES = ("My dog is called Rex and I live in Paris.", "I work at the Louvre as a guide. My sister Anna lives in Lyon.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(port: int, db: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         "--client.toolbarMode", "viewer"],
        cwd=REPO, env={"WORKBENCH_DB": str(db), "PATH": "/usr/bin:/bin", "HOME": str(Path.home()),
                       "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def wait_healthy(url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"the app was not healthy after {seconds} s")


def chat(page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url + "/Chat")
    page.get_by_test_id("stChatInputTextArea").wait_for(timeout=60_000)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
    page.get_by_text("dsm — D-SMART memory (w/o RT)").click()
    for n, message in enumerate(MESSAGES):
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(message)
        box.press("Enter")
        reply = page.get_by_test_id("stChatMessage").nth(2 * n + 1)
        expect(reply).to_contain_text("dsm ·", timeout=600_000)
        reply.get_by_text("CS ").first.wait_for(timeout=120_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "screenshot.png"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_app(port, Path(tempfile.mkdtemp()) / "db.sqlite3")
    try:
        wait_healthy(url)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            chat(page, url)
            page.goto(url + "/Memory_graph")
            page.get_by_text("Round").first.wait_for(timeout=60_000)
            page.wait_for_timeout(4000)  # let vis-network settle the layout
            page.mouse.move(800, 300)
            page.mouse.wheel(0, 260)  # the graph, not the page's header
            page.wait_for_timeout(500)
            page.screenshot(path=args.out)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
