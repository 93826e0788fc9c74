"""Moved to ops/llm_stub.py (the load test runs it as LLM server processes); kept here for the tests' imports,
with the stub reply the D-SMART app tests share."""

import re

from ops.llm_stub import LLMStub, last_user_text  # noqa: F401

_DISTIL = re.compile(r'### Now process:\s*Question: "(.*?)"\s*Answer:', re.S)


def statement_or_echo(body: dict, keep: int) -> str:
    """A stub reply for D-SMART in the app: its distillation prompt (the request's last message) gets
    the question back as the statement, so the spaCy extractor builds a graph of the user's words;
    any other request "You said: " and the last `keep` characters of the user's last message (not
    of the prompt's last message: a second try ends in a note)."""
    found = _DISTIL.search(body["messages"][-1]["content"])
    return found.group(1) if found else f"You said: {last_user_text(body)[-keep:]}"
