"""ui.serve, the replica launcher: the port opens only after the shared models are loaded (so a
proxy and a health check see the replica only when it answers at full speed), the loading ran at
a lower CPU priority, and the server then runs at the priority it was started with."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from nli_helpers import write_tiny_nli_model

from ops.app_process import free_port

REPO = Path(__file__).resolve().parent.parent


def _niceness(pid: int) -> set[int]:
    return {int((t / "stat").read_text().rsplit(")", 1)[1].split()[16]) for t in Path(f"/proc/{pid}/task").iterdir()}


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread priorities from /proc (Linux)")
def test_the_port_opens_after_the_models_load_and_priority_comes_back(tmp_path):
    port = free_port()
    env = {**os.environ, "WORKBENCH_WARMUP": "1", "WORKBENCH_WARMUP_KB": "0", "WORKBENCH_TORCH_THREADS": "1",
           "WORKBENCH_DB": str(tmp_path / "app.sqlite3"), "WORKBENCH_NLI_MODEL": str(write_tiny_nli_model(tmp_path / "nli"))}
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address", "127.0.0.1",
                                 "--server.headless", "true", "--server.fileWatcherType", "none"],
                                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        loading = set()  # the threads' niceness at the last look before the models were loaded
        deadline = time.time() + 180
        while time.time() < deadline:
            assert proc.poll() is None, log.read_text()
            if "shared models loaded" not in log.read_text():
                loading = _niceness(proc.pid)
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("the server never answered: " + log.read_text()[-2000:])
        text = log.read_text()
        assert "shared models loaded" in text and "could not load" not in text  # before the port answered
        assert loading == {10}  # every thread at the loading priority while loading
        assert _niceness(proc.pid) == {os.getpriority(os.PRIO_PROCESS, 0)}  # then back for serving
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_page_address_gets_the_index_page_with_the_servers_root(tmp_path):
    """ui.page_index (issue 57): the page served at /Chat names the root, so the browser asks no
    /Chat/_stcore/... first; the root address keeps Streamlit's own file."""
    from starlette.testclient import TestClient

    from streamlit.web.server.starlette import starlette_static_routes as routes
    from ui import page_index

    html = "<!DOCTYPE html><html><head><title>x</title></head><body></body></html>"
    assert page_index.page_with_root(html, None).startswith(
        '<!DOCTYPE html><html><head><script>window.__streamlit = Object.assign(window.__streamlit || {}, '
        '{BACKEND_BASE_URL: window.location.origin + "/"});</script><title>')
    assert 'window.location.origin + "/wb"' in page_index.page_with_root(html, "wb/")

    original = routes.create_streamlit_static_handler
    try:
        assert page_index.install().startswith("page addresses name the server's root")
        assert page_index.install() == "page addresses already name the server's root"
        (tmp_path / "index.html").write_text(html, encoding="utf-8")
        client = TestClient(routes.create_streamlit_static_handler(directory=str(tmp_path), base_url=None))
        assert "BACKEND_BASE_URL" in client.get("/Chat").text  # a page's address: the single-page fallback
        assert client.get("/").text == html  # the root: Streamlit's own page
    finally:
        routes.create_streamlit_static_handler = original
