"""Everything the load test runs, started in temporary folders and stopped afterwards: a
PostgreSQL server, a pool of LLM servers (stub or llama.cpp, each its own process), N Streamlit
replicas on that database, and nginx in front of both (deploy/nginx/workbench.conf.template)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from ops.app_process import AppProcess
from ops.nginx import Nginx
from ops.postgres import TempPostgres
from ops.procs import free_port, stop, wait_port

REPO = Path(__file__).resolve().parent.parent


def app_env(db_url: str, secret: str, llm_url: str, model: str, extra: dict | None = None) -> dict:
    """What each replica is started with; deploy/compose.yaml sets the same variables
    (tests/test_deploy.py checks that they do not drift apart)."""
    return {"WORKBENCH_DB": db_url, "WORKBENCH_SECRET": secret, "WORKBENCH_LLM_BACKEND": "openai",
            "WORKBENCH_LLM_BASE_URL": llm_url, "WORKBENCH_LLM_MODEL": model,
            # the models load before a replica opens its port (ui/serve.py); the MCTS index is not used here
            "WORKBENCH_WARMUP": "1", "WORKBENCH_WARMUP_KB": "0", "WORKBENCH_TORCH_THREADS": "1", **(extra or {})}


class LLMPool:
    """K OpenAI-compatible servers, each a process killable by PID: the stub (ops/llm_stub.py,
    echoes at once) or llama.cpp (ops/llm_server.py with the SmolLM2-135M model, 4,096 tokens a slot:
    a heavy owner's long pasted messages and their history exceeded 2,048)."""

    def __init__(self, kind: str, count: int, folder: Path, slots: int = 2, stub_args: list[str] | None = None) -> None:
        self.kind, self.folder, self.slots = kind, folder, slots
        self.stub_args = stub_args or []  # e.g. a delay and slots, so the stub queues like a model
        self.ports = [free_port() for _ in range(count)]
        self.procs: list[subprocess.Popen] = []

    def start(self) -> "LLMPool":
        for k, port in enumerate(self.ports):
            module = ["ops.llm_stub", "--port", str(port), *self.stub_args] if self.kind == "stub" else \
                ["ops.llm_server", "--port", str(port), "--slots", str(self.slots), "--threads", "1", "--ctx", "4096"]
            log = open(self.folder / f"llm{k}.log", "w")
            self.procs.append(subprocess.Popen([sys.executable, "-m", *module], cwd=REPO, stdin=subprocess.PIPE,
                                               stdout=log, stderr=subprocess.STDOUT))
            log.close()
        for proc, port in zip(self.procs, self.ports):
            wait_port(port, 180, proc, f"LLM server ({self.kind})")
        return self

    def kill(self, k: int) -> None:
        if self.procs[k].poll() is None:
            os.kill(self.procs[k].pid, signal.SIGKILL)
            self.procs[k].wait(10)

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)


class Cluster:
    def __init__(self, replicas: int, llm: str, llm_servers: int, secret: str | None = None,
                 extra_env: dict | None = None, stub_args: list[str] | None = None, llm_routing: str = "app") -> None:
        self.extra_env = extra_env or {}
        # "app": the replicas are given every LLM server and place each request themselves
        # (core.llm.endpoint_pool); "nginx": one URL, nginx's least_conn picks the server
        self.llm_routing = llm_routing
        self.folder = Path(tempfile.mkdtemp(prefix="loadtest-"))
        self.folder.chmod(0o755)  # nginx workers (nobody) read below it
        self.secret = secret or secrets.token_hex(16)  # every replica must verify every owner cookie
        self.pg = TempPostgres()  # durable (fsync on): the faults test what a real server keeps
        self.llm = LLMPool(llm, llm_servers, self.folder, stub_args=stub_args)
        self.replica_count = replicas
        self.apps: list[AppProcess] = []
        self.nginx: Nginx | None = None
        self.db_url = ""

    def app_env(self) -> dict:
        llm_url = ",".join(self.nginx.llm_urls) if self.llm_routing == "app" else self.nginx.llm_url
        return app_env(self.db_url, self.secret, llm_url, "stub" if self.llm.kind == "stub" else "smollm2-135m",
                       self.extra_env)

    def start(self) -> "Cluster":
        self.pg.start()
        self.db_url = self.pg.create_database("workbench")
        from core.db import Database
        from core.db.migrate import upgrade

        upgrade(Database(self.db_url))  # once, before the replicas (they would race to it harmlessly)
        self.llm.start()
        ports = [free_port() for _ in range(self.replica_count)]
        self.nginx = Nginx(ports, self.llm.ports, self.folder / "nginx").start()
        env = self.app_env()
        self.apps = [AppProcess(self.db_url, self.folder / f"app{k}.log", env, port=port) for k, port in enumerate(ports)]
        starting = [threading.Thread(target=app.start) for app in self.apps]  # in parallel: each takes seconds
        for t in starting:
            t.start()
        for t in starting:
            t.join()
        if len(self.replica_pids()) != len(self.apps):
            raise RuntimeError(f"not every replica started; logs in {self.folder}")
        self._wait_proxy()
        return self

    def _wait_proxy(self, timeout_s: float = 60) -> None:
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(self.nginx.url + "/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("nginx did not reach a healthy replica")

    def replica_pids(self) -> list[int]:
        return [a.pid for a in self.apps if a.proc and a.proc.poll() is None]

    def stop(self) -> None:
        for app in self.apps:
            app.stop()
        if self.nginx:
            self.nginx.cleanup()
        self.llm.stop()
        self.pg.cleanup()

    def cleanup(self, keep: bool = False) -> None:
        self.stop()
        if not keep:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        try:
            return self.start()
        except BaseException:
            self.cleanup(keep=True)
            raise

    def __exit__(self, *exc) -> None:
        self.cleanup(keep=exc[0] is not None)
