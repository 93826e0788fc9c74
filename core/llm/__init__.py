"""LLM protocol and backends. `make_llm(settings)` builds the backend the settings name."""

from core.llm.base import LLM, Completion, LLMError, LLMOutputError, Message, ScoringUnsupported
from core.llm.prompts import load_prompt, render_prompt

__all__ = [
    "LLM",
    "Completion",
    "LLMError",
    "LLMOutputError",
    "Message",
    "ScoringUnsupported",
    "load_prompt",
    "render_prompt",
    "make_llm",
    "llamacpp_options",
]


def make_llm(settings, cache_dir: str = "", device: str = "cpu") -> LLM:
    """A fresh backend for `settings` (core.config.LLMSettings). Loading the local model is slow:
    callers that serve many requests keep the instance (the app caches it as a shared resource)."""
    if settings.backend == "openai":
        from core.llm.openai_backend import OpenAICompatibleLLM

        return OpenAICompatibleLLM(settings)
    if settings.backend == "local":
        from core.llm.llamacpp import LlamaCppLLM

        return LlamaCppLLM(llamacpp_options(settings, cache_dir))
    if settings.backend == "transformers":
        from core.llm.local import LocalLLM

        return LocalLLM(settings.model, cache_dir=cache_dir, device=device, dtype=settings.dtype)
    raise ValueError(f"unknown LLM backend {settings.backend!r}: use 'local', 'transformers' or 'openai'")


def llamacpp_options(settings, cache_dir: str = ""):
    from core.llm.llamacpp import LlamaCppOptions

    return LlamaCppOptions(model=settings.model, cache_dir=cache_dir, threads=settings.threads, n_ctx=settings.n_ctx,
                           slots=settings.slots, seed=settings.seed)
