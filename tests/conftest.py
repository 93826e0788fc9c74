"""Shared fixtures. Real models load once per session; unit tests use fakes."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# No background warm-up of real models in AppTests (tests/test_warmup.py starts it where it is the point).
os.environ.setdefault("WORKBENCH_WARMUP", "0")
os.environ.setdefault("WORKBENCH_WARMUP_KB", "0")  # nor a build of the 50k MCTS knowledge index (minutes)

# Property-based fuzzing (tests/test_fuzz_*.py). "ci": a bounded, reproducible run (same examples
# every time, so CI never flakes on a newly drawn case); "deep": many random examples, to hunt for
# bugs by hand: HYPOTHESIS_PROFILE=deep .venv/bin/python -m pytest tests/test_fuzz_*.py
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _restore_main_module():
    """Streamlit's script runner (AppTest) installs each page as sys.modules["__main__"] and leaves
    it there. A later "spawn" child process re-runs __main__ from its path on start, so it would run
    that page (outside Streamlit) before its own target; CI failed that way once. Put pytest's back."""
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def embedder():
    from core.resources import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def local_llm():
    from core.resources import load_local_llm

    return load_local_llm()


@pytest.fixture()
def hashing_embedder():
    from core.resources import HashingEmbedder

    return HashingEmbedder(dim=256)


@pytest.fixture()
def app_env(tmp_path, monkeypatch):
    """A fresh database for an AppTest run, and no LLM settings leaking in from the environment."""
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "app.sqlite3"))
    for key in ("WORKBENCH_LLM_BACKEND", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_API_KEY",
                "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path


# -- the running app, for browser tests -----------------------------------------------------------
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """`streamlit run streamlit_app.py` on a free loopback port with a fresh database; yields the
    base URL once /_stcore/health answers."""
    import subprocess
    import sys
    import time
    import urllib.request

    port = _free_port()
    db = tmp_path_factory.mktemp("app") / "app.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_LLM", "OPENAI_"))}
    env["WORKBENCH_DB"] = str(db)
    env["WORKBENCH_WARMUP"] = "1"  # the real app warms up in the background, as under `make run`
    env["WORKBENCH_WARMUP_KB"] = "0"  # but does not build the 50k MCTS index (minutes) beside the tests
    # The browser tests drive the pages: the same embedded llama.cpp runtime serves them, with the
    # 135M model so that a reply (and a D-SMART tree) takes seconds on 2 cores. The 0.5B default is
    # tested by tests/test_llamacpp.py and the `chat` command's tests.
    env["WORKBENCH_LLM_MODEL"] = "small"
    log = open(tmp_path_factory.mktemp("applog") / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "streamlit_app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"the app did not become healthy within 120 s; log: {log.name}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium); .ci/run installs it")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


# -- a real OpenAI-compatible server ----------------------------------------------------------------
@pytest.fixture(scope="session")
def llama_server():
    """A real llama.cpp HTTP server (xllamacpp, in-process) on a free loopback port: the 135M
    SmolLM2 GGUF, 2 slots, an API key. Stopped at the end of the session by dropping its handle."""
    import secrets

    pytest.importorskip("xllamacpp")
    from tests.llama_server import start_server

    server = start_server(key="sk-" + secrets.token_hex(4), slots=2)
    yield server
    handle, server.handle = server.handle, None
    del handle  # the server stops when its object is freed


@pytest.fixture
def register_benchmark(monkeypatch):
    """`register(name, run)`: for one test, a throwaway module whose `run` is the benchmark `name`
    in core.benchmarks.runner.BENCHMARKS, loaded by the runner as a real benchmark is."""
    from core.benchmarks import runner as bench

    def register(name: str, run) -> None:
        module = types.ModuleType(f"test_benchmark_{name.replace('-', '_')}")
        module.run = run
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(bench.BENCHMARKS, name, module.__name__)

    return register


# -- databases: the store suites run on SQLite and on a real PostgreSQL --------------------------
@pytest.fixture(scope="session")
def postgres_server():
    """One throw-away PostgreSQL (Debian's binaries) for the session, on a free port, removed after."""
    from ops.postgres import TempPostgres, find_bin

    if find_bin() is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)")
    server = TempPostgres(durable=False)  # its own folder under /tmp: `nobody` must reach it when run as root
    server.start()
    yield server
    server.cleanup()


_DATABASES = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A fresh, empty database on each back-end: an SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "db.sqlite3")
    server = request.getfixturevalue("postgres_server")
    return server.create_database(f"t{next(_DATABASES)}_{os.getpid()}")


# -- the end of a run: which real-part suites were skipped, and how to enable them ------------
def pytest_terminal_summary(terminalreporter):
    from tests.real_parts import skipped_parts, summary_lines

    lines = summary_lines(skipped_parts(terminalreporter.stats.get("skipped", [])))
    if lines:
        terminalreporter.section("real-part suites skipped", sep="-", yellow=True)
        for line in lines:
            terminalreporter.write_line(line)
