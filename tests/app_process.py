"""Moved to ops/app_process.py (the load test runner uses it too); kept here for the tests' imports."""

from ops.app_process import REPO, AppProcess, free_port  # noqa: F401
