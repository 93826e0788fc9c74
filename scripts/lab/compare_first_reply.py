"""Seconds from sending one message on the Compare page (as it opens: base and rag chosen) to both
replies stored and drawn with their vote buttons, in headless Chromium on a fresh database, with the
embedded model named by --model (issue 43's bar: the default model, within 60 s).

    .venv/bin/python scripts/lab/compare_first_reply.py --model default
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ops.app_process import AppProcess  # noqa: E402

MESSAGE = "Hi! I'm Marta and my puppy is called Biscuit."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default", help="embedded model key (small, default, large)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        env = {"WORKBENCH_LLM_MODEL": args.model, "WORKBENCH_WARMUP_KB": "0"}
        with AppProcess(Path(folder) / "app.sqlite3", Path(folder) / "streamlit.log", env) as app:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(app.url + "/Compare")
            box = page.get_by_test_id("stChatInputTextArea")
            box.wait_for(timeout=120_000)
            box.fill(MESSAGE)
            t0 = time.time()
            box.press("Enter")
            page.get_by_role("button", name="A is better").wait_for(timeout=600_000)
            seconds = time.time() - t0
            main_text = page.get_by_test_id("stMainBlockContainer").inner_text()
            headers = re.findall(r"^[A-D]( · \S+)?$", main_text, re.M)
            print(f"model={args.model} two replies stored and drawn {seconds:.1f} s after the message; "  # noqa: T201
                  f"method names in headers before the vote: {sum(bool(h) for h in headers)}")
            browser.close()


if __name__ == "__main__":
    main()
