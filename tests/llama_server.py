"""Real llama.cpp HTTP servers for tests, from the `xllamacpp` wheel and the 135M SmolLM2 GGUF.

- `start_server(key)`: an in-process `xllamacpp.Server` listening on a free loopback port (the
  session fixture `llama_server` in conftest.py); it stops when its handle is dropped (`stop`).
- `SubprocessServer(key)`: the same server in a child process, so that a test can pause it
  (SIGSTOP) and see the client's timeout fire.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL_NAME = "smollm2-135m"  # llama.cpp serves whatever model it holds under any name


@dataclass
class RunningServer:
    url: str  # OpenAI-compatible base URL (…/v1)
    root: str  # llama.cpp's native endpoints
    key: str
    handle: object  # the xllamacpp.Server; dropping it stops the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small_gguf() -> Path:
    from core.llm.gguf_models import resolve_gguf

    return Path(resolve_gguf("small", "")[0])


def server_params(key: str, port: int, slots: int = 2, n_ctx: int = 2048, threads: int = 2):
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(small_gguf())
    params.n_parallel = slots
    params.n_ctx = n_ctx * slots  # llama.cpp splits the context between slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    params.api_keys = [key] if key else []
    params.port = port
    return params


def start_server(key: str, slots: int = 2) -> RunningServer:
    import xllamacpp

    server = xllamacpp.Server(server_params(key, free_port(), slots))
    root = server.listening_address.rstrip("/")
    wait_healthy(root)
    return RunningServer(url=root + "/v1", root=root, key=key, handle=server)


def wait_healthy(root: str, seconds: float = 120.0) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if json.loads(urllib.request.urlopen(root + "/health", timeout=2).read()).get("status") == "ok":
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the llama.cpp server at {root} did not become healthy in {seconds:g} s")


_CHILD = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.llama_server import server_params
import xllamacpp
server = xllamacpp.Server(server_params({key!r}, {port}, slots=1, threads=1))
print(server.listening_address, flush=True)
sys.stdin.read()  # until the parent closes our stdin
"""


class SubprocessServer:
    """A llama.cpp server in a child process (one slot, one thread): `pause()` sends SIGSTOP."""

    def __init__(self, key: str = "") -> None:
        self.key = key
        port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD.format(repo=str(REPO), key=key, port=port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.root = f"http://127.0.0.1:{port}"
        self.url = self.root + "/v1"
        wait_healthy(self.root)

    def pause(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        self.resume()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "SubprocessServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
