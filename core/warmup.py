"""Warm start: load the shared read-only models in a background thread when the app starts, so the
first query does not pay for them.

The loaders are the cached ones of `core.resources` (and `core.metrics.nli`), which load once even
when a user's query asks for a model the warm-up is still loading: the query then waits for that
one load instead of starting a second. Loads, and the warm-up's first passes, never run beside
each other (`core.resources.loading`): importing torch/transformers from two threads at once fails.
(The lock is taken after a load returns, never around one: the loaders take it themselves.) Each step also runs the model once, because the first
forward pass of a torch model pays for lazy initialisation (about as much as the load itself).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class StepResult:
    name: str
    seconds: float
    error: str = ""  # "" when the step succeeded


class WarmUp:
    """Runs named steps one after another in a daemon thread; records what each took or why it
    failed. A failed step is reported, not retried: the model's real use raises the same error
    with its message where the user asked for it."""

    def __init__(self, steps: Sequence[tuple[str, Callable[[], object]]]) -> None:
        self.steps = list(steps)
        self.results: list[StepResult] = []
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> "WarmUp":
        with self._lock:
            if self._thread is None:
                self.started_at = time.perf_counter()
                self._thread = threading.Thread(target=self._run, name="warm-up", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        try:
            for name, step in self.steps:
                t0 = time.perf_counter()
                try:
                    step()
                    error = ""
                # A warm-up step may fail for any reason a model load can (missing package, bad
                # path, out of memory); it is recorded and shown, and the real call raises it again.
                except Exception as err:  # noqa: BLE001
                    error = f"{type(err).__name__}: {err}"
                self.results.append(StepResult(name, time.perf_counter() - t0, error))
        finally:
            self.finished_at = time.perf_counter()
            self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once every step has run (within `timeout` seconds, if given)."""
        return self._done.wait(timeout)

    @property
    def seconds(self) -> float | None:
        """Wall time from start to the last step's end, once done."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


def embedder_step(name_or_path: str = "") -> Callable[[], object]:
    def run():
        from core.resources import load_embedder, loading

        embedder = load_embedder(name_or_path)
        with loading():  # the first forward pass imports too: never beside another model's load
            return embedder.encode(["Warm up the sentence embedder.", "A second sentence."])

    return run


def spacy_step() -> Callable[[], object]:
    def run():
        from core.resources import load_spacy, loading

        nlp = load_spacy()
        with loading():
            return nlp("My dog Rex lives in Paris.")

    return run


def splitter_step() -> Callable[[], object]:
    def run():
        from core.text import split_sentences

        return split_sentences("Warm up the splitter. It loads its rules once.")

    return run


def language_step() -> Callable[[], object]:
    def run():
        from core.language import language_of

        return language_of("Warm up the language identifier: it loads its compressed model once.")

    return run


def nli_step(name_or_path: str = "") -> Callable[[], object]:
    def run():
        from core.metrics.nli import load_nli
        from core.resources import loading

        scorer = load_nli(name_or_path)
        with loading():
            return scorer.judge(["User: My dog is called Rex."], "Your dog is Rex.")

    return run


def mcts_kb_step(kb_path: str = "", embedder: str = "") -> Callable[[], object]:
    """Prepare the MCTS knowledge index (a first build takes minutes; later starts load it in about
    a second) through the process-wide preparation the Chat page shows and the `mcts` method uses."""

    def run():
        from core.methods.mcts.config import KBSettings
        from core.methods.mcts.prepare import prepare_kb
        from core.resources import load_embedder

        settings = KBSettings(path=kb_path) if kb_path else KBSettings()
        return prepare_kb(settings.path, load_embedder(embedder), settings).result()

    return run


def default_steps(embedder: str = "", nli_model: str = "") -> list[tuple[str, Callable[[], object]]]:
    """The shared models a first query or reply needs, most urgent first: the sentence embedder
    (retrieval), the sentence splitter (SGMem, the reply check), the language identifier (the reply
    check), spaCy (D-SMART memory), the NLI model (each reply's consistency), the D-SMART recall
    ranker's embedder. The LLM is not among them: it is chosen per user."""
    from core.embedders import RECALL_EMBEDDER

    return [("sentence embedder", embedder_step(embedder)), ("sentence splitter", splitter_step()),
            ("language identifier", language_step()),
            ("spaCy", spacy_step()), ("NLI model", nli_step(nli_model)),
            ("recall embedder", embedder_step(RECALL_EMBEDDER))]
