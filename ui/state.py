"""Per-user state: the LLM settings chosen on the home page, the toolkit built from them, and the
keys pages use in st.session_state."""

from __future__ import annotations

import os

import streamlit as st

from core.config import LLMSettings, llm_settings_from, llm_settings_public, llm_settings_with_saved
from core.embedders import DEFAULT_EMBEDDER
from core.llm import LLM, make_llm
from core.llm.queued import queued
from core.methods import Toolkit
from ui import owner, resources

LLM_SETTINGS = "llm_settings"
REMOTE_LLM = "remote_llm"  # (settings, client) of this user's endpoint, if any
CONVERSATION = "conversation_id"
METHOD = "method"
MAX_TOKENS = "max_reply_tokens"
EMBEDDER = "embedder_choice"  # minilm, mpnet, a folder or a Hugging Face id


def _secrets() -> dict:
    try:
        return {k: v for k, v in st.secrets.items() if isinstance(v, (str, int, float))}
    except FileNotFoundError:  # no secrets.toml: StreamlitSecretNotFoundError subclasses it
        return {}


def llm_settings() -> LLMSettings:
    """This user's settings; first visit in a session: secrets.toml, then the environment, then
    what this owner saved on an earlier visit (everything but the key), else local."""
    if LLM_SETTINGS not in st.session_state:
        base = llm_settings_from({**os.environ, **_secrets()})
        saved = resources.default_store().get_settings(owner=owner.current_owner()).get("llm", {})
        st.session_state[LLM_SETTINGS] = llm_settings_with_saved(base, saved)
    return st.session_state[LLM_SETTINGS]


def set_llm_settings(settings: LLMSettings) -> None:
    st.session_state[LLM_SETTINGS] = settings
    st.session_state.pop(REMOTE_LLM, None)
    store, who = resources.default_store(), owner.current_owner()
    store.put_settings({**store.get_settings(owner=who), "llm": llm_settings_public(settings)}, owner=who)


def current_llm() -> LLM:
    """The embedded model is shared (cached resource); an endpoint client is per user."""
    settings = llm_settings()
    if settings.backend in ("local", "transformers"):
        return resources.embedded_llm(LLMSettings(backend=settings.backend, model=settings.model, dtype=settings.dtype,
                                                  threads=settings.threads, n_ctx=settings.n_ctx, slots=settings.slots))
    cached = st.session_state.get(REMOTE_LLM)
    if cached is None or cached[0] != settings:
        cached = (settings, queued(make_llm(settings), settings))  # the endpoint's queue, shared by every session
        st.session_state[REMOTE_LLM] = cached
    return cached[1]


def embedder_choice() -> str:
    """This user's sentence embedder; first visit: WORKBENCH_EMBEDDER (env or secrets), else the default."""
    if EMBEDDER not in st.session_state:
        st.session_state[EMBEDDER] = str({**os.environ, **_secrets()}.get("WORKBENCH_EMBEDDER") or DEFAULT_EMBEDDER)
    return st.session_state[EMBEDDER]


def set_embedder_choice(choice: str) -> None:
    """Switch embedders; chat methods rebuild their memory with the new one (replaying the stored
    turns), and retrieval indexes are rebuilt on their next use."""
    st.session_state[EMBEDDER] = choice.strip() or DEFAULT_EMBEDDER
    for key in [k for k in st.session_state if str(k).startswith("method:")]:
        del st.session_state[key]


def toolkit() -> Toolkit:
    settings = llm_settings()
    return Toolkit(llm=current_llm(), embedder=resources.embedder(embedder_choice()), strong=settings.is_strong,
                   recall_embedder=resources.recall_embedder())
