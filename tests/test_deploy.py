"""deploy/ cannot drift from what the tests start: the compose file's app environment has exactly
the variables ops/cluster.py gives its replicas, nginx gets every variable the shared template
uses, and the template (filled in as ops/nginx.py does it) passes `nginx -t`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from ops.cluster import app_env
from ops.nginx import MAIN, TEMPLATE, find_nginx, render, servers

REPO = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((REPO / "deploy" / "compose.yaml").read_text())


def test_the_compose_app_environment_is_the_one_the_load_test_starts():
    keys = set(app_env("postgresql://x@h/db", "s", "http://h/v1", "m"))
    assert set(COMPOSE["x-app-env"]) == keys
    for name in ("app", "migrate"):
        assert COMPOSE["services"][name]["environment"] == COMPOSE["x-app-env"]
    assert COMPOSE["x-app-env"]["WORKBENCH_DB"].startswith("postgresql://")


def test_nginx_gets_every_template_variable():
    wanted = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", TEMPLATE.read_text()))
    assert wanted == {"APP_LISTEN", "APP_SERVERS", "LLM_LISTEN", "LLM_SERVERS", "LLM_ACCESS_LOG"}
    nginx = COMPOSE["services"]["nginx"]
    assert set(nginx["environment"]) == wanted
    assert any("deploy" not in v and v.startswith("./nginx/workbench.conf.template:") for v in nginx["volumes"])
    for service in ("db", "app", "llm", "vllm", "nginx"):
        assert "healthcheck" in COMPOSE["services"][service], service


def test_the_filled_in_template_passes_nginx_t(tmp_path):
    if find_nginx() is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light; .ci/run installs it)")
    conf = render(TEMPLATE.read_text(), {"APP_LISTEN": "127.0.0.1:18080", "APP_SERVERS": servers([18501, 18502], 5),
                                         "LLM_LISTEN": "127.0.0.1:18000", "LLM_SERVERS": servers([18081], 10),
                                         "LLM_ACCESS_LOG": "off"})
    assert not re.findall(r"\$\{[A-Z_]+\}", conf) and "$cookie_workbench_owner" in conf and "least_conn" in conf
    (tmp_path / "workbench.conf").write_text(conf)
    (tmp_path / "nginx.conf").write_text(MAIN.format(prefix=tmp_path))
    check = subprocess.run([find_nginx(), "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
