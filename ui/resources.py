"""Shared read-only models, cached once per process with st.cache_resource.

Only models live here. Each user's dialogue, memory and indexes live in st.session_state or in
the database, so no user ever sees another's memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from core import resources
from core.config import LLMSettings
from core.paths import REPO_ROOT
from core.store import Store


@st.cache_resource(show_spinner="Loading the embedded LLM (the first start joins and verifies the model file)…")
def embedded_llm(settings: LLMSettings):
    """The one in-process model (llama.cpp or transformers) that every session shares; `settings`
    carries no key for these backends, so equal settings share one instance."""
    return resources.load_shared_llm(settings)


@st.cache_resource(show_spinner="Loading the sentence embedder…")
def embedder(name_or_path: str = ""):
    return resources.load_embedder(name_or_path)


@st.cache_resource(show_spinner="Loading the NLI model…")
def nli_scorer(name_or_path: str = ""):
    """The shared NLI scorer (default: the project's trained model in assets/models)."""
    from core.metrics.nli import load_nli

    return load_nli(name_or_path)


@st.cache_resource(show_spinner=False)
def store(path: str) -> Store:
    # The Store object holds only the path; every call opens its own connection.
    return Store(path)


def database_path() -> str:
    """WORKBENCH_DB, else .workbench/workbench.sqlite3 in the repository."""
    return os.environ.get("WORKBENCH_DB") or str(Path(REPO_ROOT) / ".workbench" / "workbench.sqlite3")


def default_store() -> Store:
    return store(database_path())
