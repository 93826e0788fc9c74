"""Moved to ops/st_client.py (the load test runner uses it too); kept here for the tests' imports."""

from ops.st_client import Run, StreamlitClient  # noqa: F401
