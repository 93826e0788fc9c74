"""The real-part suites a run skipped (PostgreSQL, nginx, Chromium not installed), said at the
end of the run with the one `apt-get install` line that enables them: `make test` on a machine
without the Debian packages otherwise passes with those suites silently skipped. Read by the
`pytest_terminal_summary` hook in tests/conftest.py; it changes no outcome and no exit code."""

from __future__ import annotations

from typing import Iterable

# part: (a word its skip reasons hold, the Debian package .ci/run installs)
PARTS = {"PostgreSQL": ("postgresql", "postgresql"), "nginx": ("nginx", "nginx-light"), "Chromium": ("chromium", "chromium")}
_MISSING = ("not installed", "are needed", "is needed")


def skip_reason(report) -> str:
    longrepr = report.longrepr
    return str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr or "")


def skipped_parts(reports: Iterable) -> dict[str, list[str]]:
    """{part: the node ids it skipped} over pytest's skipped reports (a reason may name several parts)."""
    found: dict[str, list[str]] = {}
    for report in reports:
        reason = skip_reason(report).lower()
        if not any(m in reason for m in _MISSING):
            continue
        for part, (word, _) in PARTS.items():
            if word in reason:
                found.setdefault(part, []).append(report.nodeid)
    return found


def summary_lines(found: dict[str, list[str]]) -> list[str]:
    if not found:
        return []
    lines = []
    for part, ids in found.items():
        files = sorted({i.split("::")[0] for i in ids})
        lines.append(f"{part} is not installed: {len(ids)} test{'s' * (len(ids) != 1)} skipped in {', '.join(files)}")
    packages = " ".join(PARTS[p][1] for p in PARTS if p in found)
    lines.append(f"to run them: sudo apt-get install -y {packages}   (.ci/run does this)")
    return lines
