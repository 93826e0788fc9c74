"""Moved to ops/llm_stub.py (the load test runs it as LLM server processes); kept here for the tests' imports."""

from ops.llm_stub import LLMStub, last_user_text  # noqa: F401
