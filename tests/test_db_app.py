"""A wrong or unreachable WORKBENCH_DB stops the app at its first page with one line naming the
variable (and never the password), on the home page and on the Chat page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ops.procs import free_port

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("page", ["streamlit_app.py", "pages/1_Chat.py"])
@pytest.mark.parametrize("url, reason", [
    (f"postgresql://lab:hunter2@127.0.0.1:{free_port()}/workbench", "connection refused"),
    ("mysql://root@localhost/workbench", "unsupported database 'mysql'"),
])
def test_a_bad_database_url_stops_the_app_with_one_line(app_env, monkeypatch, page, url, reason):
    monkeypatch.setenv("WORKBENCH_DB", url)
    at = AppTest.from_file(str(REPO / page), default_timeout=60)
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    line = at.error[0].value
    assert line.startswith("WORKBENCH_DB=") and reason in line.lower() and "hunter2" not in line
    assert "\n" not in line
    assert not at.chat_input  # nothing after the error ran
