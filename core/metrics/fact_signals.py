"""The signals the offline `nli` verifier classifies: NLI over the selected evidence windows and over
the dialogue history, lexical checks against both, and cues that a statement is not a factual
claim at all (the paper labels those Not Enough Info: opinions, questions, "I can't find ...").

`SignalExtractor.extract(items)` runs all NLI pairs of a batch of items through the model together
and returns, per item, a flat dict of named floats (the classifier's input, stable names listed in
FEATURES) and the evidence windows it looked at with their NLI probabilities.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.metrics.fact_evidence import check_lexical, passage_sentences, rank_windows, windows_of
from core.metrics.fact_types import FactItem, Passage, UsedEvidence

FIRST_PERSON = {"i", "me", "my", "mine", "we", "us", "our", "i'm", "i've", "i'd", "i'll", "let's"}
SECOND_PERSON = {"you", "your", "yours", "you're", "you've"}
HEDGES = {"may", "might", "could", "can", "would", "should", "perhaps", "possibly", "likely", "probably", "suggest",
          "recommend", "seems", "appears", "think", "believe", "approximately", "around", "about", "some", "several",
          "various", "many", "often"}
META = {"information", "dialogue", "conversation", "context", "mentioned", "mention", "provided", "provide", "aware",
        "sorry", "unfortunately", "help", "find", "found", "specify", "specified", "details", "question", "answer",
        "list", "following", "here", "note", "however", "clarify", "assist", "sure", "happy", "glad", "hello", "hi"}
SUBJECTIVE = {"great", "popular", "famous", "notable", "significant", "important", "best", "beautiful", "rich",
              "diverse", "unique", "impressive", "memorable", "successful", "well", "known", "renowned", "iconic",
              "interesting", "strong", "major", "largest", "most", "top", "key", "vibrant", "amazing", "good"}
PRONOUN_START = {"it", "he", "she", "they", "this", "these", "those", "that", "its", "his", "her", "their", "there"}

FEATURES = (
    # NLI against the selected evidence windows
    "ev_entail_max", "ev_contra_max", "ev_entail_top", "ev_contra_top", "ev_margin", "ev_entail_mean3",
    # NLI against the dialogue history (with the query)
    "hist_entail", "hist_contra",
    # selection
    "sel_score_top", "sel_score_gap", "n_windows",
    # lexical checks against the evidence
    "coverage_anchor", "coverage_all", "n_names", "names_found", "names_anchor", "n_numbers", "numbers_found",
    "numbers_anchor", "number_conflict", "year_conflict", "month_conflict", "title_match",
    # lexical checks against the history
    "hist_coverage", "hist_names_found",
    # is it a factual claim?
    "n_words", "n_content", "first_person", "second_person", "hedge", "meta", "negation", "question",
    "subjective", "pronoun_start", "list_item", "has_verb", "n_propn",
    # the response the fact came from: its sentence, and whether the response declines to answer
    "src_match", "src_first_person", "src_hedge", "src_meta", "resp_declines",
)


@dataclass(frozen=True)
class SignalSettings:
    top_windows: int = 4  # evidence windows read by the NLI model per fact
    history_windows: int = 2  # history sentences read by the NLI model per fact
    window_sentences: int = 1
    passage_weight: float = 0.5  # weight of the passage's own BM25 in a window's rank
    # Ranking windows by embedding too costs a forward pass per window (~100 per fact): seconds
    # per fact on 2 cores, against the 1 s budget. BM25 alone by default.
    use_embedder: bool = False


@dataclass(frozen=True)
class Signals:
    values: dict[str, float]
    used: tuple[UsedEvidence, ...]


def claim_cues(doc) -> dict[str, float]:
    """Cues that a statement is not a checkable factual claim."""
    tokens = [t.text.lower() for t in doc if not t.is_punct]
    first = tokens[0] if tokens else ""
    return {
        "n_words": float(len(tokens)),
        "first_person": float(any(t in FIRST_PERSON for t in tokens)),
        "second_person": float(any(t in SECOND_PERSON for t in tokens)),
        "hedge": float(sum(t in HEDGES for t in tokens)),
        "meta": float(sum(t in META for t in tokens)),
        "negation": float(any(t.dep_ == "neg" for t in doc) or any(t in ("no", "not", "never", "n't") for t in tokens)),
        "question": float(doc.text.strip().endswith("?")),
        "subjective": float(sum(t in SUBJECTIVE for t in tokens)),
        "pronoun_start": float(first in PRONOUN_START),
        "list_item": float(bool(doc.text.strip()[:1].isdigit() and "." in doc.text.strip()[:4])),
        "has_verb": float(any(t.pos_ in ("VERB", "AUX") for t in doc)),
        "n_propn": float(sum(t.pos_ == "PROPN" for t in doc)),
    }


def history_passages(item: FactItem) -> list[Passage]:
    """The dialogue before the response as passages, one per turn (the query included)."""
    return [Passage(text, kind="history", source=f"turn {i}") for i, (_, text) in enumerate(item.history) if text.strip()]


_DECLINES = re.compile(
    r"\b(i (?:could ?n[o']t|can ?n[o']t|was unable to|am unable to|do ?n[o']t have|don't have|'m not (?:sure|aware|able))"
    r"|i'm not (?:sure|aware|able)|unfortunately|no (?:information|data|record)|not (?:mentioned|provided|specified)"
    r"|does ?n[o']t (?:mention|provide|specify|say)|there is no)", re.I)


def response_cues(fact: str, response: str) -> dict[str, float]:
    """Where the fact sits in its response: the best-matching sentence's cues, and whether the
    response as a whole declines ("I couldn't find any information on ..."): facts restated from a
    declining answer are rarely claims the annotators could check."""
    from rapidfuzz import fuzz

    sentences = passage_sentences(response[:5000]) if response.strip() else ()
    if not sentences:
        return {"src_match": 0.0, "src_first_person": 0.0, "src_hedge": 0.0, "src_meta": 0.0, "resp_declines": 0.0}
    scores = [fuzz.token_set_ratio(fact, s) for s in sentences]
    best = int(np.argmax(scores))
    tokens = [t.lower() for t in re.findall(r"[\w']+", sentences[best])]
    return {
        "src_match": scores[best] / 100.0,
        "src_first_person": float(any(t in FIRST_PERSON for t in tokens)),
        "src_hedge": float(sum(t in HEDGES for t in tokens)),
        "src_meta": float(sum(t in META for t in tokens)),
        "resp_declines": float(bool(_DECLINES.search(response[:2000]))),
    }


class SignalExtractor:
    """Needs an NLI scorer (core.metrics.nli.NLIScorer or anything with `predict` and
    `judge_many`), a spaCy pipeline, and optionally an embedder for window ranking."""

    def __init__(self, nli, nlp, embedder=None, settings: SignalSettings = SignalSettings()) -> None:
        self.nli, self.nlp, self.settings = nli, nlp, settings
        self.embedder = embedder if settings.use_embedder else None

    def extract(self, items: Sequence[FactItem]) -> list[Signals]:
        docs = list(self.nlp.pipe([item.fact for item in items]))
        plans = [self._select(item.fact, item.evidence, self.settings.top_windows, self.embedder) for item in items]
        history_plans = [self._select(item.fact, history_passages(item), self.settings.history_windows) for item in items]
        pairs = [(w.text, item.fact) for item, (chosen, _) in zip(items, plans) for w, _ in chosen]
        pairs += [(w.text, item.fact) for item, (chosen, _) in zip(items, history_plans) for w, _ in chosen]
        probs = list(self.nli.predict(pairs)) if pairs else []
        out, pos = [], 0
        for item, doc, (chosen, n_windows) in zip(items, docs, plans):
            out.append((item, doc, chosen, n_windows, probs[pos : pos + len(chosen)]))
            pos += len(chosen)
        signals = []
        for (item, doc, chosen, n_windows, mine), (hist_chosen, _) in zip(out, history_plans):
            hist = probs[pos : pos + len(hist_chosen)]
            pos += len(hist_chosen)
            signals.append(self._signals(item, doc, chosen, n_windows, mine, hist))
        return signals

    def _select(self, fact: str, passages, k: int, embedder=None):
        windows = windows_of(passages, self.settings.window_sentences)
        scores = rank_windows(fact, windows, embedder, passages, self.settings.passage_weight)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(windows[i], float(scores[i])) for i in order], len(windows)

    def _signals(self, item: FactItem, doc, chosen, n_windows: int, probs, hist) -> Signals:
        v: dict[str, float] = {}
        entail = [p.entailment for p in probs] or [0.0]
        contra = [p.contradiction for p in probs] or [0.0]
        v["ev_entail_max"], v["ev_contra_max"] = max(entail), max(contra)
        v["ev_entail_top"], v["ev_contra_top"] = entail[0], contra[0]
        v["ev_margin"] = max(entail) - max(contra)
        v["ev_entail_mean3"] = float(np.mean(sorted(entail, reverse=True)[:3]))
        v["hist_entail"] = max((p.entailment for p in hist), default=0.0)
        v["hist_contra"] = max((p.contradiction for p in hist), default=0.0)
        scores = [s for _, s in chosen]
        v["sel_score_top"] = scores[0] if scores else 0.0
        v["sel_score_gap"] = scores[0] - scores[1] if len(scores) > 1 else v["sel_score_top"]
        v["n_windows"] = float(n_windows)

        lex = check_lexical(item.fact, doc, item.evidence)
        v.update(lex.as_dict())
        history = history_passages(item)
        hist = check_lexical(item.fact, doc, history) if history else None
        v["hist_coverage"] = hist.coverage_all if hist else 0.0
        v["hist_names_found"] = hist.names_found if hist and hist.n_names else 0.0
        v.update(claim_cues(doc))
        v.update(response_cues(item.fact, item.response))
        used = tuple(
            UsedEvidence(w.text, w.title, w.source, round(s, 4), round(p.entailment, 4), round(p.contradiction, 4))
            for (w, s), p in zip(chosen, probs)
        )
        missing = set(FEATURES) - v.keys()
        if missing:  # a programming error: the classifier would read zeros silently
            raise RuntimeError(f"signals not computed: {sorted(missing)}")
        return Signals({k: float(v[k]) for k in FEATURES}, used)

