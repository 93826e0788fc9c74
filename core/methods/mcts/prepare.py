"""The knowledge base's index, prepared once per process in a background thread, with progress
anyone can read: the Chat page draws "building the knowledge index: 41%" from it, the warm-up
starts it at app start, and the `mcts` method's first reply waits for the same build instead of
starting a second one.

A first build of the 50k GenericsKB sample parses and embeds every sentence and concept (minutes
on 2 cores; `python -m core models --prepare mcts-kb` does it ahead, e.g. at install); later
starts load the on-disk cache in about a second (`core.methods.mcts.kb`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from core.methods.mcts.config import KBSettings
from core.resources import Embedder

# Share of a first build's wall time per stage (the 50k sample on 2 cores: parse ~1/3, sentence
# embeddings ~1/3, concept embeddings ~1/4, node groups and saving the rest), so that one bar
# moves steadily from 0 to 100% over the stages.
STAGE_WEIGHTS = {"reading": 0.0, "loading": 0.0, "concepts": 0.33, "sentence embeddings": 0.35,
                 "concept embeddings": 0.27, "node groups": 0.05}
_ORDER = list(STAGE_WEIGHTS)


@dataclass(frozen=True)
class PrepareState:
    """A snapshot of one preparation: what it is doing and how far along it is."""

    stage: str  # "waiting" | "reading" | "loading" | "concepts" | ... | "ready" | "failed"
    fraction: float  # of the whole preparation, 0..1
    seconds: float  # since it started
    building: bool  # True when a new index is built (not loaded from the cache)
    error: str = ""

    @property
    def done(self) -> bool:
        return self.stage in ("ready", "failed")

    def describe(self) -> str:
        """One line for the page, e.g. "building the knowledge index: 41% (sentence embeddings, 95 s)"."""
        if self.stage == "failed":
            return f"the knowledge index could not be prepared: {self.error}"
        if self.stage == "ready":
            return f"knowledge index ready ({self.seconds:.1f} s)"
        if not self.building:
            return "loading the knowledge index…"
        return f"building the knowledge index: {self.fraction:.0%} ({self.stage}, {self.seconds:.0f} s)"


def overall_fraction(stage: str, fraction: float) -> float:
    """Progress of the whole build from a stage's own progress."""
    if stage not in STAGE_WEIGHTS:
        return 0.0
    before = sum(STAGE_WEIGHTS[s] for s in _ORDER[: _ORDER.index(stage)])
    return min(1.0, before + STAGE_WEIGHTS[stage] * max(0.0, min(1.0, fraction)))


class KBPreparation:
    """Loads or builds one KB (file, embedder, settings) in a daemon thread."""

    def __init__(self, path: str | Path, embedder: Embedder, settings: KBSettings = KBSettings()) -> None:
        self.path, self.embedder, self.settings = str(path), embedder, settings
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._stage, self._fraction, self._building = "waiting", 0.0, False
        self._started = time.perf_counter()
        self._kb = None
        self._seconds = 0.0
        self._error: BaseException | None = None

    def start(self) -> "KBPreparation":
        with self._lock:
            if self._thread is None:
                self._started = time.perf_counter()
                self._thread = threading.Thread(target=self._run, name="mcts-kb", daemon=True)
                self._thread.start()
        return self

    def _progress(self, stage: str, fraction: float) -> None:
        with self._lock:
            if stage not in ("loading", "reading"):
                self._building = True
            self._stage, self._fraction = stage, overall_fraction(stage, fraction)

    def _run(self) -> None:
        from core.methods.mcts.kb import load_or_build

        try:
            self._progress("reading", 0.0)
            kb = load_or_build(self.path, self.embedder, self.settings, cache_dir=self.settings.cache_dir or None,
                               progress=self._progress)
            with self._lock:
                self._kb, self._stage, self._fraction = kb, "ready", 1.0
        # Any failure of the build (a bad file, a missing model, out of memory) is kept and raised
        # again in `result()`, where a reply asked for the KB; the page shows it meanwhile.
        except BaseException as err:  # noqa: BLE001
            with self._lock:
                self._error, self._stage = err, "failed"
        finally:
            self._seconds = time.perf_counter() - self._started
            self._done.set()

    def state(self) -> PrepareState:
        with self._lock:
            seconds = self._seconds if self._done.is_set() else time.perf_counter() - self._started
            error = "" if self._error is None else f"{type(self._error).__name__}: {self._error}"
            return PrepareState(self._stage, self._fraction, seconds, self._building, error)

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def result(self):
        """The KnowledgeBase, once prepared (blocks until then); the build's error, if it failed."""
        self.start()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._kb


_registry: dict[tuple, KBPreparation] = {}
_registry_lock = threading.Lock()


def prepare_kb(path: str | Path, embedder: Embedder, settings: KBSettings = KBSettings(), start: bool = True) -> KBPreparation:
    """The process-wide preparation of this KB (one per file, embedder and settings), started
    unless `start` is False. A failed one is replaced by a fresh one on the next call."""
    key = (str(path), id(embedder), settings)
    with _registry_lock:
        prep = _registry.get(key)
        if prep is None or (prep.wait(0) and prep.state().stage == "failed"):
            prep = _registry[key] = KBPreparation(path, embedder, settings)
    return prep.start() if start else prep


def shared_kb(path: str | Path, embedder: Embedder, settings: KBSettings = KBSettings()):
    """The KB, prepared once per process (it is read-only once built)."""
    return prepare_kb(path, embedder, settings).result()
