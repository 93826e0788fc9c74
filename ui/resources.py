"""Shared read-only models, cached once per process with st.cache_resource.

Only models live here. Each user's dialogue, memory and indexes live in st.session_state or in
the database, so no user ever sees another's memory.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import streamlit as st

from core import resources
from core.config import LLMSettings
from core.llm.queued import queued
from core.paths import REPO_ROOT
from core.store import Store


@functools.cache
def limit_torch_threads() -> int:
    """torch's intra-op threads for this server process: WORKBENCH_TORCH_THREADS, default 1. The app
    serves many sessions at once, each in its own thread; torch splitting every small NLI or
    embedder call over both cores waits on a core another session is using. Measured on the
    2-core machine while busy: one NLI judgement 0.44 s with 2 threads, 0.045 s with 1
    (docs/operations.md). Process-wide, so it is set once, before a model loads."""
    import torch

    threads = max(1, int(os.environ.get("WORKBENCH_TORCH_THREADS", "1")))
    torch.set_num_threads(threads)
    return threads


@st.cache_resource(show_spinner="Loading the embedded LLM (the first start joins and verifies the model file)…")
def embedded_llm(settings: LLMSettings):
    """The one in-process model (llama.cpp or transformers) that every session shares; `settings`
    carries no key for these backends, so equal settings share one instance."""
    llm = resources.load_shared_llm(settings)
    limit_torch_threads()  # after the load: a CPU llama.cpp server sets torch to 1 thread, the variable wins
    return queued(llm, settings)  # every session's requests take turns (core.llm.fair_queue)


@st.cache_resource(show_spinner="Loading the sentence embedder…")
def embedder(name_or_path: str = ""):
    limit_torch_threads()
    return resources.load_embedder(name_or_path)


@st.cache_resource
def recall_embedder():
    """The DSM's recall ranker (core.embedders.RECALL_EMBEDDER), loaded when a dsm or dsmart reply
    first ranks its memory: other methods never pay its load."""
    from core.embedders import RECALL_EMBEDDER

    return resources.LazyEmbedder(RECALL_EMBEDDER)


@st.cache_resource(show_spinner="Loading the NLI model…")
def nli_scorer(name_or_path: str = ""):
    """The shared NLI scorer: `name_or_path`, else WORKBENCH_NLI_MODEL, else the project's trained
    model in assets/models."""
    from core.metrics.nli import load_nli

    limit_torch_threads()
    return load_nli(name_or_path or os.environ.get("WORKBENCH_NLI_MODEL", ""))


DB_VARIABLE = "WORKBENCH_DB"


@st.cache_resource(show_spinner=False)
def store(target: str) -> Store:
    # The Store holds the engine (a small connection pool); every call runs its own transaction.
    return Store(target)


def database_path() -> str:
    """WORKBENCH_DB (a file path, sqlite:///path or postgresql://user@host/db), else
    .workbench/workbench.sqlite3 in the repository."""
    return os.environ.get(DB_VARIABLE) or str(Path(REPO_ROOT) / ".workbench" / "workbench.sqlite3")


def local_folder() -> Path:
    """Where this installation keeps its own small files (the owner-cookie key): beside the SQLite
    file, or .workbench when the database is a server (replicas then share WORKBENCH_SECRET)."""
    target = database_path()
    return Path(target).parent if "://" not in target else Path(REPO_ROOT) / ".workbench"


_CHECKED: set[str] = set()  # databases that answered once in this process


def default_store() -> Store:
    """The app's store; a wrong or unreachable WORKBENCH_DB stops the page with one line naming it."""
    from core.db import Database, DatabaseError, normalize_url, shown

    target = database_path()
    try:
        if target not in _CHECKED:
            Database(target).ping(timeout_s=5)  # fail in seconds, not after the store's retry window
            _CHECKED.add(target)
        return store(target)
    except DatabaseError as err:
        try:
            where = shown(normalize_url(target))
        except DatabaseError:
            where = "(unreadable)"
        line = f"{DB_VARIABLE}={where}: the database cannot be used: {err}"
        print(line, file=sys.stderr, flush=True)
        st.error(line)
        st.stop()
