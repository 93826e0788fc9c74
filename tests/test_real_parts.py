"""The end-of-run note on skipped real-part suites (tests/real_parts.py): what it names, what it
leaves out, and that a real run prints it without changing the exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.real_parts import skipped_parts, summary_lines

REPO = Path(__file__).resolve().parent.parent


def _skip(nodeid: str, reason: str):
    return SimpleNamespace(nodeid=nodeid, longrepr=(nodeid.split("::")[0], 1, f"Skipped: {reason}"))


def test_parts_are_named_with_their_files_and_one_install_line():
    reports = [
        _skip("tests/test_db.py::test_a[postgresql]", "PostgreSQL is not installed (Debian: apt-get install postgresql)"),
        _skip("tests/test_store.py::test_b[postgresql]", "PostgreSQL is not installed"),
        _skip("tests/test_loadtest.py::test_c", "PostgreSQL and nginx are needed (Debian: apt-get install postgresql nginx-light)"),
        _skip("tests/test_data.py::test_d", "shared benchmark data not found at /x"),  # not a real part
    ]
    found = skipped_parts(reports)
    assert set(found) == {"PostgreSQL", "nginx"}
    lines = summary_lines(found)
    assert lines[0] == "PostgreSQL is not installed: 3 tests skipped in tests/test_db.py, tests/test_loadtest.py, tests/test_store.py"
    assert lines[1] == "nginx is not installed: 1 test skipped in tests/test_loadtest.py"
    assert lines[-1].startswith("to run them: sudo apt-get install -y postgresql nginx-light ")
    assert summary_lines(skipped_parts(reports[3:])) == []


def test_a_run_prints_the_note_and_keeps_its_exit_code(tmp_path):
    """A real pytest run over a test that skips as the nginx suite does (nginx absent)."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\ndef test_needs_nginx():\n    pytest.skip('nginx is not installed (Debian: apt-get install nginx-light)')\n\n"
        "def test_fails():\n    assert False\n")
    (tmp_path / "conftest.py").write_text(
        "import sys\nsys.path.insert(0, %r)\nfrom tests.conftest import pytest_terminal_summary  # noqa: F401\n" % str(REPO))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "real-part suites skipped" in run.stdout
    assert "nginx is not installed: 1 test skipped in test_x.py" in run.stdout
    assert "sudo apt-get install -y nginx-light" in run.stdout
    assert run.returncode == 1  # the failing test still fails the run
