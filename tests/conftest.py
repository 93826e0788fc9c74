"""Shared fixtures. Real models load once per session; unit tests use fakes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def embedder():
    from core.resources import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def local_llm():
    from core.resources import load_local_llm

    return load_local_llm()


@pytest.fixture()
def hashing_embedder():
    from core.resources import HashingEmbedder

    return HashingEmbedder(dim=256)


@pytest.fixture()
def app_env(tmp_path, monkeypatch):
    """A fresh database for an AppTest run, and no LLM settings leaking in from the environment."""
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "app.sqlite3"))
    for key in ("WORKBENCH_LLM_BACKEND", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_API_KEY",
                "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path
