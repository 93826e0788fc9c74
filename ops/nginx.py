"""nginx for the tests and the load test, from deploy/nginx/workbench.conf.template (the file the
compose deployment uses): the ${...} variables are filled in with local ports, wrapped in a small
main config with its own prefix folder, and `nginx -g 'daemon off;'` runs as a child process."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from ops.procs import free_port, stop, wait_port

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "deploy" / "nginx" / "workbench.conf.template"

MAIN = """worker_processes 2;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/workbench.conf;
}}
"""


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


def render(template: str, values: dict[str, str]) -> str:
    """envsubst as the nginx image does it: ${NAME} for the names given; nginx's $vars untouched."""
    def sub(m: re.Match) -> str:
        return values[m.group(1)] if m.group(1) in values else m.group(0)

    return re.sub(r"\$\{([A-Z_][A-Z0-9_]*)\}", sub, template)


# One LLM server behind one port, for an app that places its requests itself (core.llm.endpoint_pool):
# nginx only passes them through and logs them beside the pool's, so the load test counts them
# the same way. A dead server answers 502, which the app reads as "try the next server".
PASS_THROUGH = """
server {{
    listen 127.0.0.1:{listen};
    client_max_body_size 20m;
    access_log {log};
    location / {{
        proxy_pass http://127.0.0.1:{server};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_buffering off;
        proxy_read_timeout 600s;
        proxy_connect_timeout 2s;
    }}
}}
"""


def servers(ports: list[int], fail_timeout_s: int) -> str:
    return " ".join(f"server 127.0.0.1:{p} max_fails=1 fail_timeout={fail_timeout_s}s;" for p in ports)


class Nginx:
    def __init__(self, app_ports: list[int], llm_ports: list[int], folder: Path | None = None) -> None:
        self.binary = find_nginx()
        if self.binary is None:
            raise FileNotFoundError("nginx is not installed (Debian: apt-get install nginx-light)")
        self.prefix = Path(folder or tempfile.mkdtemp(prefix="nginx-"))
        self.prefix.mkdir(parents=True, exist_ok=True)
        self.prefix.chmod(0o755)  # workers run as nobody when the master is root
        self.app_port, self.llm_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.app_port}"
        self.llm_url = f"http://127.0.0.1:{self.llm_port}/v1"
        self.llm_log = self.prefix / "llm_access.log"
        conf = render(TEMPLATE.read_text(), {
            "APP_LISTEN": f"127.0.0.1:{self.app_port}", "APP_SERVERS": servers(app_ports, 5),
            "LLM_LISTEN": f"127.0.0.1:{self.llm_port}", "LLM_SERVERS": servers(llm_ports, 10),
            "LLM_ACCESS_LOG": str(self.llm_log),
        })
        # each LLM server also on its own port: `llm_urls`, for an app that addresses them itself
        self.llm_each_ports = [free_port() for _ in llm_ports]
        self.llm_urls = [f"http://127.0.0.1:{p}/v1" for p in self.llm_each_ports]
        conf += "".join(PASS_THROUGH.format(listen=p, server=q, log=self.llm_log)
                        for p, q in zip(self.llm_each_ports, llm_ports))
        (self.prefix / "workbench.conf").write_text(conf)
        (self.prefix / "nginx.conf").write_text(MAIN.format(prefix=self.prefix))
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Nginx":
        conf = str(self.prefix / "nginx.conf")
        check = subprocess.run([self.binary, "-t", "-p", str(self.prefix), "-c", conf], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx rejects the config: {check.stderr}")
        self.proc = subprocess.Popen([self.binary, "-p", str(self.prefix), "-c", conf, "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=open(self.prefix / "stderr.log", "w"))
        wait_port(self.app_port, 20, self.proc, "nginx")
        wait_port(self.llm_port, 20, self.proc, "nginx")
        for port in self.llm_each_ports:
            wait_port(port, 20, self.proc, "nginx")
        return self

    def llm_requests(self) -> int:
        return sum(1 for _ in open(self.llm_log)) if self.llm_log.exists() else 0

    def stop(self) -> None:
        stop(self.proc, signal.SIGQUIT)  # graceful: workers finish their requests

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self) -> "Nginx":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()
