"""The verifiers of FactScore and `make_verifier`, which builds one by name.

- `NLIVerifier` (offline): `fact_signals` (NLI over selected evidence windows and the history,
  lexical checks, claim cues) read by the calibrated classifier of `fact_classifier`, trained on
  the HybriDialogue dev split by `python -m core train-factcheck`.
- `LLMVerifier`: the paper's Table 8 prompt. A strong model answers in text (true / false / no
  enough information), parsed; a weak model (the embedded one) is not asked to write: the three
  answers are scored by likelihood and normalised into probabilities. An unparseable answer from a
  strong model falls back to scoring where the backend can, else it is Not Enough Info, flagged.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from core.metrics.fact_evidence import rank_windows, windows_of
from core.metrics.fact_types import LABELS, NEI, FactItem, UsedEvidence, Verdict, normalise_label
from core.metrics.verifier import VERIFIERS, Verifier, verdict_from_probs

# The answers the paper's prompt asks for, in LABELS order.
ANSWERS = ("true", "false", "no enough information")


class NLIVerifier(Verifier):
    name = "nli"

    def __init__(self, model, extractor) -> None:
        self.model, self.extractor = model, extractor

    @classmethod
    def load(cls, model_dir: str | Path = "", nli_model: str = "", resources=None) -> "NLIVerifier":
        """The stored classifier (default assets/models/factcheck) with the models its signals need;
        `resources` = (nli scorer, spacy pipeline, embedder or None) to share already loaded ones."""
        from core.metrics.fact_classifier import FactCheckModel
        from core.metrics.fact_signals import SignalExtractor

        model = FactCheckModel.load(model_dir)
        if resources is None:
            from core.metrics.nli import load_nli
            from core.resources import load_embedder, load_spacy

            resources = (load_nli(nli_model or model.nli_model), load_spacy(),
                         load_embedder() if model.signal_settings.use_embedder else None)
        nli, nlp, embedder = resources
        return cls(model, SignalExtractor(nli, nlp, embedder, model.signal_settings))

    def _verify(self, items: Sequence[FactItem]) -> list[Verdict]:
        signals = self.extractor.extract(items)
        probs = self.model.predict_proba([s.values for s in signals])
        return [verdict_from_probs(p, self.name, evidence=s.used, signals=s.values) for p, s in zip(probs, signals)]


def evidence_block(item: FactItem, k: int, embedder=None, max_chars: int = 400) -> tuple[str, tuple[UsedEvidence, ...]]:
    """The `k` evidence windows closest to the fact, as the prompt's evidence text."""
    windows = windows_of(item.evidence)
    if not windows:
        return "(none)", ()
    scores = rank_windows(item.fact, windows, embedder)
    chosen = sorted(range(len(windows)), key=lambda i: -scores[i])[:k]
    used = tuple(UsedEvidence(windows[i].text[:max_chars], windows[i].title, windows[i].source, round(float(scores[i]), 4))
                 for i in chosen)
    return "\n".join(f"- {u.text}" for u in used), used


def dialogue_block(item: FactItem, max_turns: int = 6, max_chars: int = 300) -> str:
    turns = item.history[:-1][-max_turns:] if item.history else ()
    if not turns:
        return "(none)"
    return "\n".join(f"{'A' if who == 'user' else 'B'}: {text[:max_chars]}" for who, text in turns)


class LLMVerifier(Verifier):
    """The Table 8 prompt with the dialogue history. `strong`: parse the written answer; else score
    the three answers by likelihood."""

    def __init__(self, llm, strong: bool, name: str = "llm", evidence_k: int | None = None, embedder=None) -> None:
        self.llm, self.strong, self.name, self.embedder = llm, strong, name, embedder
        self.evidence_k = evidence_k or (5 if strong else 3)  # a small model reads a short prompt better
        self.failures = 0  # strong answers that named no label

    def prompt(self, item: FactItem) -> tuple[str, tuple[UsedEvidence, ...]]:
        from core.llm.prompts import render_prompt

        evidence, used = evidence_block(item, self.evidence_k, self.embedder, 600 if self.strong else 300)
        text = render_prompt("factscore_verify", evidence=evidence, dialogue=dialogue_block(item),
                             speaker=item.query or "(none)", fact=item.fact)
        return text, used

    def _verify(self, items: Sequence[FactItem]) -> list[Verdict]:
        prompts = [self.prompt(item) for item in items]
        if not self.strong:
            return self._scored(prompts)
        replies = self.llm.chat_batch([p for p, _ in prompts], temperature=0.0, max_tokens=16)
        out: list[Verdict | None] = []
        retry = []
        for i, ((_, used), reply) in enumerate(zip(prompts, replies)):
            label = parse_answer(reply.text)
            if label is None:
                self.failures += 1
                retry.append(i)
                out.append(None)
            else:
                probs = tuple(1.0 if x == label else 0.0 for x in LABELS)
                out.append(Verdict(label, 1.0, probs, used, self.name, note=f"answer: {reply.text[:60]!r}"))
        if retry:
            fixed = self._scored([prompts[i] for i in retry]) if self.llm.supports_scoring else [
                Verdict(NEI, 0.0, (0.0, 0.0, 1.0), prompts[i][1], self.name, note="unparseable answer") for i in retry]
            for i, verdict in zip(retry, fixed):
                out[i] = verdict
        return out  # type: ignore[return-value]

    def _scored(self, prompts) -> list[Verdict]:
        scores = self.llm.score_batch([(p, list(ANSWERS)) for p, _ in prompts])
        out = []
        for (_, used), s in zip(prompts, scores):
            top = max(s)
            weights = [math.exp(x - top) for x in s]
            out.append(verdict_from_probs(weights, self.name, evidence=used, note="scored by likelihood"))
        return out


def parse_answer(text: str) -> str | None:
    """The label a written answer names: the first of true / false / (no|not) enough information."""
    lowered = text.strip().lower()
    positions = {}
    for key, label in (("enough info", NEI), ("true", LABELS[0]), ("false", LABELS[1]),
                       ("supports", LABELS[0]), ("refutes", LABELS[1])):
        at = lowered.find(key)
        if at >= 0:
            positions[label] = min(at, positions.get(label, at))
    if not positions:
        try:
            return normalise_label(lowered)
        except ValueError:
            return None
    return min(positions, key=positions.get)


def make_verifier(name: str, *, llm=None, strong: bool = False, judge_llm=None, model_dir: str = "",
                  nli_model: str = "", resources=None) -> Verifier:
    """A verifier by name: `nli` (offline: NLI + lexical checks + the calibrated classifier in
    assets/models/factcheck), `llm` (the paper's Table 8 prompt; a weak model scores the three
    labels by likelihood), `judge` (an OpenAI-compatible endpoint as external judge)."""
    if name == "nli":
        return NLIVerifier.load(model_dir, nli_model=nli_model, resources=resources)
    if name == "llm":
        if llm is None:
            raise ValueError("the llm verifier needs an LLM (the configured backend)")
        return LLMVerifier(llm, strong=strong)
    if name == "judge":
        if judge_llm is None:
            raise ValueError("the judge verifier needs an OpenAI-compatible endpoint: set WORKBENCH_LLM_BASE_URL "
                             "(or --base-url) to a capable model")
        return LLMVerifier(judge_llm, strong=True, name="judge")
    raise ValueError(f"unknown verifier {name!r}; known: {', '.join(VERIFIERS)}")
