"""Importing mem0 offline: telemetry off before its first import, its spaCy model from the
workbench's package; and the log the LLM adapter keeps of mem0's requests."""

from __future__ import annotations

import os
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

PROVIDER = "workbench"
COLLECTION = "mem0"
_LOCK = threading.RLock()
_loaded = False


@dataclass
class CallRecord:
    """One LLM request mem0 made: how it went (for the round's trace and the cost table)."""

    kind: str  # "json" | "text"
    prompt_tokens: int = 0
    invalid: str = ""  # why the reply could not be used ("" = it could)
    too_long: bool = False  # the prompt did not fit the model's window: not sent


@dataclass
class CallLog:
    """What the adapter saw, shared by the method (which reads and clears it per round)."""

    calls: list[CallRecord] = field(default_factory=list)
    lock: threading.Lock | None = None  # the method's store lock, let go during an LLM request
    holder: int = 0  # the thread that holds it for an `add`

    def take(self) -> list[CallRecord]:
        out, self.calls = self.calls, []
        return out

    @contextmanager
    def unlocked(self):
        """Let searches in while this `add` waits for the LLM (the stores are not touched then)."""
        if self.lock is None or self.holder != threading.get_ident():
            yield
            return
        self.holder = 0
        self.lock.release()
        try:
            yield
        finally:
            self.lock.acquire()
            self.holder = threading.get_ident()


def load_mem0():
    """Import mem0 with telemetry off and nothing to download (see `library`'s docstring)."""
    global _loaded
    with _LOCK:
        if _loaded:
            import mem0

            return mem0
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "workbench-mem0"))
        try:
            import mem0  # noqa: F401
            from mem0.memory import main as mem0_main, telemetry
        except ImportError as err:
            raise ImportError("the mem0 method needs the mem0ai library: pip install mem0ai==2.2.1") from err
        if telemetry.MEM0_TELEMETRY or mem0_main.MEM0_TELEMETRY:  # imported earlier with telemetry on
            telemetry.MEM0_TELEMETRY = False
            mem0_main.MEM0_TELEMETRY = False
        _give_spacy()
        _loaded = True
        return mem0


def _give_spacy() -> None:
    """mem0's spaCy pipelines from the packaged model (mem0 would download `en_core_web_sm`)."""
    from mem0.utils import spacy_models

    from core.resources import load_spacy

    if spacy_models._nlp_full is None:
        spacy_models._nlp_full = load_spacy()
    if spacy_models._nlp_lemma is None:
        spacy_models._nlp_lemma = spacy_models._nlp_full


def mem0_shape_problem(value) -> str:
    """Why a parsed extraction reply is not what mem0's `add` reads ("" when it is)."""
    if not isinstance(value, dict):
        return "not a JSON object"
    items = value.get("memory", [])
    if not isinstance(items, list):
        return "'memory' is not a list"
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text", ""), str):
            return "a memory item is not an object with a text"
    return ""


