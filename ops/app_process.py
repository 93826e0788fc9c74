"""`streamlit run streamlit_app.py` as a subprocess for tests that need the real server: browser
tests with their own settings, the SIGKILL durability test, the load test's replicas."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppProcess:
    """One app server. `env` is added to a copy of os.environ with the LLM variables removed."""

    def __init__(self, db: Path | str, log: Path, env: dict | None = None, port: int | None = None) -> None:
        self.db, self.log_path = db, Path(log)  # db: an SQLite path or a database URL (WORKBENCH_DB)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_LLM", "OPENAI_", "WORKBENCH_AUTH"))}
        self.env.update({"WORKBENCH_DB": str(self.db), **(env or {})})
        self.proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 120) -> "AppProcess":
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(self.port),  # models load before the port opens
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the app exited with {self.proc.returncode}; log: {self.log_path}")
            try:
                if urllib.request.urlopen(self.url + "/_stcore/health", timeout=2).read() == b"ok":
                    return self
            except OSError:
                time.sleep(0.3)
        self.kill()
        raise RuntimeError(f"the app did not become healthy within {timeout_s:.0f} s; log: {self.log_path}")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def kill(self) -> None:
        """SIGKILL by PID: no shutdown handlers, no flushing, as a crash or an OOM kill."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> "AppProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
