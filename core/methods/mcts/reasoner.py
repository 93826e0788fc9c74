"""The Diversity-Preserving Reasoner (section III-B), with the configured LLM in place of COMET.

COMET (BART fine-tuned on ATOMIC-2020) is not available offline. For each Table I relation the
LLM completes "last event + relation statement" after seeing the conversation (one greedy
completion per relation, all in one batch); each candidate r gets the paper's confidence

    tau_r = (1 / |d|) * sum_t log P(y_t | y_<t, rel, C)

the mean token log-likelihood of the completion. Where the backend reports the log-probabilities
of the tokens it generated (llama.cpp does) and the cleaned inference is what the model wrote first,
tau_r is read from them: the same quantity, without a second pass. Otherwise (an echo of the prompt
was cut off the front, or the backend does not report them) the same LLM scores the inference
(`LLM.score_batch`).
A greedy DPP then picks a diverse subset: kernel L = diag(q) S diag(q) with q = exp(tau_r) (the
geometric-mean token probability: relevance on the diagonal) and S the cosine similarity of the
inferences' embeddings (redundancy off it).

A backend that cannot score continuations (ScoringUnsupported) still generates: every candidate
then has q = 1, the DPP selects for diversity alone, and the result says so in `notes`.
Completions are cached on disk by (model, prompt) when decoding is greedy, so a benchmark asks the
model once per context whatever method or rerun needs it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from core.llm import cancel as stopping
from core.llm.base import LLM, Message, ScoringUnsupported, TokenLogprob
from core.llm.prompts import render_prompt
from core.methods.mcts.config import RELATIONS, ReasonerSettings
from core.methods.mcts.dpp import greedy_dpp, quality_diversity_kernel
from core.paths import DEFAULT_CACHE_DIR
from core.resources import Embedder
from core.text import approx_tokens, words

COMET_NOTE = ("Reasoner: COMET is not available offline; the configured LLM completes each Table I relation "
              "statement instead, scored by its mean token log-probability (tau_r).")


@dataclass(frozen=True)
class Inference:
    relation: str
    statement: str  # the relation's natural-language statement, as rendered in the prompt
    text: str  # the completion (the inference tail)
    tau: float | None  # mean token log-probability; None when the backend cannot score
    tokens: int
    selected: bool = False
    rank: int | None = None  # DPP selection order

    @property
    def sentence(self) -> str:
        """The inference as one statement, e.g. "as a result, the speaker feels relieved"."""
        return f"{self.statement} {self.text}"


@dataclass(frozen=True)
class Reasoning:
    candidates: tuple[Inference, ...]
    selected: tuple[Inference, ...]
    scored: bool  # False: tau unavailable, diversity-only DPP
    logdet: float
    seconds: float
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"scored": self.scored, "logdet": self.logdet, "seconds": round(self.seconds, 3), "notes": list(self.notes),
                "candidates": [{"relation": c.relation, "statement": c.statement, "text": c.text, "tau": c.tau,
                                "tokens": c.tokens, "selected": c.selected, "rank": c.rank} for c in self.candidates]}


def render_statement(statement: str) -> str:
    """Table I writes the agent as x / X (PersonX in ATOMIC): here, the speaker of the last turn."""
    return re.sub(r"\b[xX]\b", "the speaker", statement)


def generated_logprob(pieces: Sequence[TokenLogprob] | None, text: str, after_echo: bool = False) -> tuple[float, int] | None:
    """(total log-probability, tokens) of the generated tokens that spell `text`, when `text` is the
    start of the generation (after leading whitespace) and ends on a token boundary: what the model
    wrote after it (a full stop, words past the cut) does not change those tokens' probabilities.
    None otherwise: an echo was cut off the front, the text was rewritten, or a cut falls inside a
    token. `after_echo`: also read `text` where it comes after an echo of the prompt (its last
    occurrence, starting and ending on token boundaries); those tokens were conditioned on the echo
    too, so this approximates tau_r rather than equalling it (a scoring pass would be exact)."""
    if not pieces or not text:
        return None
    raw = b"".join(t.piece for t in pieces)
    target = text.encode("utf-8")
    lead = len(raw) - len(raw.lstrip())
    if raw[lead:].startswith(target):
        start, end = 0, lead + len(target)
    elif after_echo and (found := raw.rfind(target)) >= 0:
        start, end = found, found + len(target)
        while start > 0 and raw[start - 1:start].isspace():  # a token's leading space belongs to the text
            start -= 1
    else:
        return None
    at, total, n = 0, 0.0, 0
    for token in pieces:
        if at >= end:
            break
        if at >= start:
            total, n = total + token.logprob, n + 1
        elif at + len(token.piece) > start:
            return None  # the text starts inside a token
        at += len(token.piece)
    return (total, n) if at == end and n else None


def last_words(turn: str, limit: int) -> str:
    """`turn` ("Speaker: text") with its text cut to the last `limit` words (0 = whole), marked "...":
    the end of a long turn is what the next event follows."""
    speaker, sep, text = turn.partition(":") if ":" in turn[:40] else ("", "", turn)
    kept = text.split()
    if limit <= 0 or len(kept) <= limit:
        return turn
    return f"{speaker}{sep} ... " + " ".join(kept[-limit:]) if sep else "... " + " ".join(kept[-limit:])


def clean_completion(raw: str, prefix: str, statement: str = "", max_words: int = 12) -> str:
    """The inference tail of a completion: first line, without an echo of the prompt (small models
    often repeat "..., because the speaker wanted" before completing it), quotes or a speaker tag."""
    text = raw.strip().splitlines()[0] if raw.strip() else ""
    text = re.sub(r"^(complete the sentence:|answer:|completion:)\s*", "", text, flags=re.I).strip()
    if text.lower().startswith(prefix.lower()):
        text = text[len(prefix):]
    elif statement and statement.lower() in text.lower():
        text = text[text.lower().rindex(statement.lower()) + len(statement):]
    text = re.sub(r"^[A-Z][\w ]{0,20}:\s+", "", text.strip())  # "A: ..." speaker tag
    text = text.strip(" \"'`*.…,").removeprefix("...").strip()
    return " ".join(text.split()[:max_words])


class _DiskCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT)")

    def get(self, key: str):
        with sqlite3.connect(self.path) as db:
            row = db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value) -> None:
        with sqlite3.connect(self.path) as db:
            db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, json.dumps(value)))


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


class Reasoner:
    def __init__(self, llm: LLM, embedder: Embedder, settings: ReasonerSettings = ReasonerSettings(),
                 cache_dir: str | Path | None = None) -> None:
        self.llm, self.embedder, self.settings = llm, embedder, settings
        cacheable = settings.cache and settings.temperature == 0.0
        self.cache = _DiskCache(Path(cache_dir or DEFAULT_CACHE_DIR) / "mcts-reasoner.sqlite3") if cacheable else None

    def prompts(self, turns: Sequence[str]) -> list[tuple[str, str, str, list[Message]]]:
        """(relation, rendered statement, sentence prefix to complete, messages) per relation."""
        recent = [t for t in turns if t.strip()][-self.settings.context_turns:]
        head = recent[-1].split(":", 1)[-1].strip().rstrip(".!?") if recent else ""
        recent = [last_words(t, self.settings.turn_words) for t in recent[:-1]] + recent[-1:]
        system = render_prompt("mcts_reasoner_system")
        out = []
        for rel in self.settings.relations:
            statement = render_statement(RELATIONS[rel])
            prefix = f"{head}, {statement}"
            user = render_prompt("mcts_reasoner", context="\n".join(recent), prefix=prefix)
            out.append((rel, statement, prefix, [Message("system", system), Message("user", user)]))
        return out

    def infer(self, turns: Sequence[str]) -> Reasoning:
        t0 = time.perf_counter()
        if not [t for t in turns if t.strip()]:
            return Reasoning((), (), False, 0.0, 0.0, ("empty context: no inferences",))
        prompts = self.prompts(turns)
        texts, tokens, pieces, late = self._generate([m for *_, m in prompts])
        notes = [COMET_NOTE]
        kept = []  # (relation, statement, messages, inference, |d|, (total, tokens) read from the generation or None)
        for (rel, st, prefix, m), raw, n, p in zip(prompts, texts, tokens, pieces):
            text = clean_completion(raw, prefix, st)
            if not words(text):
                continue
            generated = generated_logprob(p, text, after_echo=not self.settings.rescore_echoes)
            count = generated[1] if generated else n if text == raw.strip() and n else max(1, approx_tokens(text))
            kept.append((rel, st, m, text, count, generated))
        if late:
            notes.append(f"{late} relation(s) not generated within the reasoner's {self.settings.budget_s:g} s budget")
        dropped = len(prompts) - len(kept) - late
        if dropped:
            notes.append(f"{dropped} relation(s) gave an empty completion and were dropped")
        taus, scored = self._taus([(m, text, g) for _, _, m, text, _, g in kept], [n for *_, n, _ in kept])
        if not scored:
            notes.append(f"{self.llm.name} cannot score continuations: tau_r unavailable, the DPP selects for diversity only")
        candidates = [Inference(rel, st, text, tau, n) for (rel, st, _, text, n, _), tau in zip(kept, taus)]
        chosen, logdet = self._select(candidates, scored)
        ranked = {i: r for r, i in enumerate(chosen)}
        candidates = [Inference(c.relation, c.statement, c.text, c.tau, c.tokens, i in ranked, ranked.get(i))
                      for i, c in enumerate(candidates)]
        selected = tuple(candidates[i] for i in chosen)
        return Reasoning(tuple(candidates), selected, scored, logdet, time.perf_counter() - t0, tuple(notes))

    # -- steps -------------------------------------------------------------------------------
    def _generate(self, batch: list[list[Message]]) -> tuple[list[str], list[int], list[tuple[TokenLogprob, ...] | None], int]:
        """(text, generated tokens, their log-probabilities or None) per prompt, from the cache or the
        LLM, and how many prompts the budget left unsent (their text is empty)."""
        s = self.settings
        keys = [_key(self.llm.name, "gen", [(m.role, m.content) for m in msgs], s.max_tokens, s.temperature, *s.stop)
                for msgs in batch]  # no stop strings: the key of earlier caches
        found = [self.cache.get(k) if self.cache else None for k in keys]
        todo = [i for i, f in enumerate(found) if f is None]
        size = max(1, s.round_size)
        with stopping.deadline(s.budget_s):
            for start in range(0, len(todo), size):
                chunk = todo[start : start + size]
                try:
                    outs = self.llm.chat_batch([batch[i] for i in chunk], temperature=s.temperature, max_tokens=s.max_tokens,
                                               stop=list(s.stop) or None, logprobs=True)
                except stopping.DeadlinePassed:
                    break  # the rest are not sent: their relations are dropped
                for i, c in zip(chunk, outs):
                    lps = None if c.token_logprobs is None else [[t.piece.hex(), t.logprob] for t in c.token_logprobs]
                    found[i] = {"text": c.text, "tokens": c.completion_tokens, "logprobs": lps}
                    if self.cache:
                        self.cache.put(keys[i], found[i])
        late = sum(f is None for f in found)
        found = [f if f is not None else {"text": "", "tokens": 0, "logprobs": None} for f in found]
        pieces = [None if f.get("logprobs") is None else tuple(TokenLogprob(bytes.fromhex(h), float(lp)) for h, lp in f["logprobs"])
                  for f in found]
        return [f["text"] for f in found], [int(f.get("tokens") or 0) for f in found], pieces, late

    def _taus(self, requests: list[tuple[list[Message], str, tuple[float, int] | None]],
              tokens: list[int]) -> tuple[list[float | None], bool]:
        """tau_r per candidate: from its generation where given, else scored by the LLM."""
        if not requests:
            return [], True
        keys = [_key(self.llm.name, "score", [(m.role, m.content) for m in msgs], text) for msgs, text, _ in requests]
        found = [g[0] if g else self.cache.get(k) if self.cache else None for k, (_, _, g) in zip(keys, requests)]
        todo = [i for i, f in enumerate(found) if f is None]
        if todo:
            try:
                scores = self.llm.score_batch([(requests[i][0], [requests[i][1]]) for i in todo])
            except ScoringUnsupported:
                return [None] * len(requests), False
            for i, row in zip(todo, scores):
                found[i] = float(row[0])
                if self.cache:
                    self.cache.put(keys[i], found[i])
        return [float(f) / max(1, n) for f, n in zip(found, tokens)], True

    def _select(self, candidates: list[Inference], scored: bool) -> tuple[list[int], float]:
        if not candidates:
            return [], 0.0
        quality = np.array([np.exp(c.tau) if scored and c.tau is not None else 1.0 for c in candidates])
        vectors = self.embedder.encode([c.text for c in candidates])
        return greedy_dpp(quality_diversity_kernel(quality, vectors), self.settings.outcomes)
