"""Warm start, measured as a visitor meets it: `streamlit run`, wait for /_stcore/health, open the
Home page in headless Chromium, then go to Retrieval comparison (the default LoCoMo conversation
and retrievers), pick the first benchmark question after THINK seconds and press Retrieve.

Prints: seconds to healthy; seconds from healthy until Home says the shared models are ready; for
the first query, the wall time from the click to all results drawn, and each retriever's own
query time and index wait as the page reports them. `--no-warmup` runs the same with the warm
start off (WORKBENCH_WARMUP=0), for comparison.

Needs Debian's Chromium and ../shared/data/locomo/locomo_dev.json.
Usage: .venv/bin/python scripts/lab/time_warm_start.py [--no-warmup] [--think 5] [--fresh-cache]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(port: int, warm: bool, home: Path) -> subprocess.Popen:
    env = {"WORKBENCH_DB": str(Path(tempfile.mkdtemp()) / "db.sqlite3"), "PATH": "/usr/bin:/bin", "HOME": str(home),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "WORKBENCH_WARMUP": "1" if warm else "0"}
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def wait_healthy(url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"not healthy after {seconds} s")


def first_query(page, url: str, think: float) -> dict:
    """Open Retrieval comparison, wait `think` seconds, pick the first question, press Retrieve."""
    page.goto(url + "/Retrieval_comparison")
    button = page.get_by_role("button", name="Retrieve")
    button.wait_for(timeout=120_000)
    time.sleep(think)
    question = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").nth(1)
    question.click()
    page.get_by_role("option").nth(1).click()  # option 0 is "type my own"
    page.get_by_text("Gold evidence:").wait_for(timeout=120_000)
    t0 = time.perf_counter()
    button.click()
    captions = page.get_by_text(re.compile(r"^query [\d.]+ ms"))
    captions.nth(2).wait_for(timeout=600_000)  # the three default retrievers have answered
    clicked_to_results = time.perf_counter() - t0
    rows = []
    for text in captions.all_inner_texts():
        ms = float(re.search(r"query ([\d.]+) ms", text).group(1))
        wait = re.search(r"index ready after ([\d.]+) s", text)
        rows.append({"query_ms": ms, "index_wait_s": float(wait.group(1)) if wait else 0.0})
    return {"click_to_results_s": round(clicked_to_results, 3), "retrievers": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-warmup", action="store_true", help="warm start off (WORKBENCH_WARMUP=0)")
    parser.add_argument("--think", type=float, default=5.0,
                        help="seconds the visitor spends on the page before picking a question")
    parser.add_argument("--fresh-cache", action="store_true", help="empty embedding cache (a new HOME) instead of ~/.cache")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    home = Path(tempfile.mkdtemp()) if args.fresh_cache else Path(os.environ.get("HOME", str(Path.home())))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = start_app(port, not args.no_warmup, home)
    out: dict = {"warm_start": not args.no_warmup, "think_s": args.think, "fresh_cache": args.fresh_cache}
    try:
        wait_healthy(url)
        healthy = time.perf_counter()
        out["start_to_healthy_s"] = round(healthy - t0, 3)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            if not args.no_warmup:
                ready = page.get_by_text("Shared models ready")
                ready.wait_for(timeout=300_000)
                out["healthy_to_models_ready_s"] = round(time.perf_counter() - healthy, 3)
                out["home_says"] = ready.inner_text()
            else:
                page.get_by_text("warm start is off").wait_for(timeout=120_000)
            out["first_query"] = first_query(page, url, args.think)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
