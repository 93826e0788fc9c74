"""Fixtures for the page tests of users, bad input and durability: an OpenAI-compatible stub
endpoint named by the environment, and a tiny NLI model standing in for the trained one (the
consistency badges still run, in milliseconds). Import the fixtures by name into a test module."""

from __future__ import annotations

import pytest

from tests.llm_stub import LLMStub


@pytest.fixture(scope="session")
def tiny_nli_folder(tmp_path_factory):
    from nli_helpers import write_tiny_nli_model

    return write_tiny_nli_model(tmp_path_factory.mktemp("tiny-nli") / "nli")


@pytest.fixture()
def tiny_nli(tiny_nli_folder, monkeypatch):
    from core.metrics import nli
    from ui import resources

    monkeypatch.setattr(nli, "DEFAULT_NLI_MODEL_DIR", tiny_nli_folder)
    nli.load_nli.cache_clear()
    resources.nli_scorer.clear()
    yield tiny_nli_folder
    nli.load_nli.cache_clear()
    resources.nli_scorer.clear()


@pytest.fixture()
def stub(app_env, tiny_nli, monkeypatch):
    """The stub endpoint as the app's default backend (WORKBENCH_LLM_BASE_URL), a fresh database."""
    with LLMStub() as s:
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", s.url)
        monkeypatch.setenv("WORKBENCH_LLM_MODEL", "stub")
        yield s


def open_page(path: str, owner: str, **state):
    """An AppTest of the page at `path` run once as `owner` (as the owner cookie gives), with
    `state` put in its session first."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=120)
    at.session_state["owner_id"] = owner
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()
