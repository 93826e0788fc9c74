"""Checks made when a user saves an OpenAI-compatible endpoint, so that a setting that cannot work
is refused with its reason at once instead of failing the first chat message."""

from __future__ import annotations

from dataclasses import replace

from core.config import LLMSettings
from core.llm.base import LLMError

NEEDS_MODEL = "an OpenAI-compatible backend needs a model name"
LIST_TIMEOUT_S = 10.0  # asking for the model list must not hold the form for the chat timeout


def with_endpoint_model(settings: LLMSettings) -> tuple[LLMSettings, str]:
    """(settings to save, a note for the user). An endpoint with an empty Model takes the first
    model its server lists at /v1/models; when the server lists none or cannot be asked, LLMError
    says so and nothing should be saved. Other backends and named models pass unchanged (a named
    model is not checked: the server may be started later)."""
    if settings.backend != "openai" or settings.model.strip():
        return settings, ""
    from core.llm.openai_backend import OpenAICompatibleLLM

    probe = OpenAICompatibleLLM(replace(settings, model="(listing models)", max_retries=0,
                                        timeout_s=min(settings.timeout_s, LIST_TIMEOUT_S)), max_concurrency=1)
    try:
        listed = probe.models()
    except LLMError as err:
        raise LLMError(f"{NEEDS_MODEL}: type one, or start the server so that its list can be read ({err})") from err
    if not listed:
        raise LLMError(f"{NEEDS_MODEL}: {probe.settings.base_url or 'the server'} lists no model at /v1/models; type one")
    note = f"Model set to {listed[0]!r}, the " + ("model" if len(listed) == 1 else f"first of {len(listed)} models") + \
        " the server lists."
    return replace(settings, model=listed[0]), note
