"""The verifier interface of FactScore: a `Verifier` labels atomic facts Supports / Refutes / Not
Enough Info. The verifiers themselves and `make_verifier` are in core/metrics/fact_verifiers.py;
the scores in core/metrics/factscore.py."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np

from core.metrics.fact_types import LABELS, NEI, FactItem, Verdict

VERIFIERS = ("nli", "llm", "judge")


class Verifier(ABC):
    """Labels atomic facts. Subclasses implement `_verify` for items that have something to check
    against; `verify` handles the cases every verifier treats alike."""

    name: str = "verifier"

    def verify(self, items: Sequence[FactItem]) -> list[Verdict]:
        out: list[Verdict | None] = [None] * len(items)
        todo = []
        for i, item in enumerate(items):
            if not item.fact.strip():
                out[i] = Verdict(NEI, 1.0, (0.0, 0.0, 1.0), verifier=self.name, note="empty fact")
            elif not item.evidence and not any(text.strip() for _, text in item.history):
                out[i] = Verdict(NEI, 1.0, (0.0, 0.0, 1.0), verifier=self.name, note="no evidence and no history")
            else:
                todo.append(i)
        if todo:
            t0 = time.perf_counter()
            got = self._verify([items[i] for i in todo])
            share = (time.perf_counter() - t0) / len(todo)
            for i, verdict in zip(todo, got):
                out[i] = verdict if verdict.seconds else _with_seconds(verdict, share)
        return out  # type: ignore[return-value]

    @abstractmethod
    def _verify(self, items: Sequence[FactItem]) -> list[Verdict]:
        """One verdict per item, in order."""


def _with_seconds(verdict: Verdict, seconds: float) -> Verdict:
    from dataclasses import replace

    return replace(verdict, seconds=seconds)


def verify_facts(items: Sequence[FactItem], verifier: Verifier, batch_size: int = 32) -> list[Verdict]:
    """The verifier's verdict for each item, in order (batched, so a long list streams through)."""
    out: list[Verdict] = []
    for start in range(0, len(items), batch_size):
        out.extend(verifier.verify(items[start : start + batch_size]))
    return out


def verdict_from_probs(probs: Sequence[float], verifier: str, **extra) -> Verdict:
    """The verdict of a probability vector over LABELS (ties go to Not Enough Info: a verifier that
    cannot decide has not verified)."""
    p = np.asarray(probs, dtype=float)
    p = p / p.sum() if p.sum() > 0 else np.asarray([0.0, 0.0, 1.0])
    best = max(range(3), key=lambda i: (p[i], i == 2))
    return Verdict(LABELS[best], float(p[best]), tuple(float(x) for x in p), verifier=verifier, **extra)
