"""NLI scorer: P(entailment), P(neutral), P(contradiction) for (premise, hypothesis) pairs.

Any sequence-classification NLI model works (the project's trained MiniLM cross-encoder by
default, or a Hugging Face id / folder such as a DeBERTa-v3 NLI model). The label order is read
from the model config's `id2label`, never assumed: models disagree (ours is entailment, neutral,
contradiction; many cross-encoders are contradiction, entailment, neutral).

Long premises (a dialogue history) do not fit a cross-encoder trained on short pairs, so
`judge` applies a documented windowing rule:

1. The hypothesis keeps its first `hypothesis_max_tokens` tokens (the opening of a reply is where
   it states its answer; the rest is cut, and `NLIJudgement.hypothesis_truncated` says so).
2. The history (oldest turn first) is split into sentences, each prefixed turn by turn with its
   speaker, and packed greedily from the most recent sentence backwards into chunks that fill
   the tokens left (`max_length` - hypothesis - 3 special tokens). A sentence longer than a whole
   chunk is cut to fit. At most `max_chunks` chunks are kept: the most recent ones.
3. The hypothesis is scored against every chunk; the turn takes the probabilities of the most
   decisive chunk, the one with the largest max(P_E, P_C) (a chunk that clearly entails or
   clearly contradicts the reply decides; chunks that are merely unrelated stay neutral).
   Ties go to the contradiction, so a contradiction anywhere in the window is never hidden.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from core.paths import DEFAULT_NLI_MODEL_DIR, MissingResource
from core.resources import load_once
from core.text import split_sentences

ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)
# Spellings seen in public NLI configs, mapped to our three names.
_LABEL_ALIASES = {
    "entailment": ENTAILMENT, "entail": ENTAILMENT, "entails": ENTAILMENT, "entailed": ENTAILMENT,
    "neutral": NEUTRAL, "neither": NEUTRAL, "not_entailment": None,
    "contradiction": CONTRADICTION, "contradict": CONTRADICTION, "contradicts": CONTRADICTION,
    "contradictory": CONTRADICTION,
}

@dataclass(frozen=True)
class NLISettings:
    """How the scorer reads long inputs. `model` "" = the project's trained model in assets/."""

    model: str = ""
    max_length: int = 256  # tokens per (premise chunk, hypothesis) pair
    hypothesis_max_tokens: int = 96
    max_chunks: int = 8  # most recent history chunks scored per turn
    batch_size: int = 32
    device: str = "cpu"


@dataclass(frozen=True)
class NLIProbs:
    entailment: float
    neutral: float
    contradiction: float

    @property
    def label(self) -> str:
        """The most probable label; ties resolved towards contradiction, then neutral."""
        ranked = sorted(
            ((self.contradiction, 2, CONTRADICTION), (self.neutral, 1, NEUTRAL), (self.entailment, 0, ENTAILMENT)),
            reverse=True,
        )
        return ranked[0][2]

    @property
    def consistency(self) -> float:
        """D-SMART's CS_i = ((P_E - P_C) + 1) / 2: 1 = entailed, 0 = contradicted."""
        return ((self.entailment - self.contradiction) + 1.0) / 2.0

    @property
    def decisiveness(self) -> float:
        return max(self.entailment, self.contradiction)

    def as_dict(self) -> dict[str, float]:
        return {"p_entailment": self.entailment, "p_neutral": self.neutral, "p_contradiction": self.contradiction}


@dataclass(frozen=True)
class NLIJudgement:
    """A hypothesis judged against a long premise: the decisive chunk's probabilities."""

    probs: NLIProbs
    chunk_index: int  # which chunk decided (0 = oldest kept)
    n_chunks: int
    premise_chunk: str
    hypothesis_truncated: bool = False

    @property
    def label(self) -> str:
        return self.probs.label

    @property
    def consistency(self) -> float:
        return self.probs.consistency

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "NLIJudgement":
        return cls(NLIProbs(**data["probs"]), int(data["chunk_index"]), int(data["n_chunks"]), data["premise_chunk"],
                   bool(data.get("hypothesis_truncated", False)))


def label_order(id2label: dict) -> tuple[str, ...]:
    """Our label names in the model's output order, from its config; raises when unreadable."""
    if not id2label or len(id2label) != 3:
        raise ValueError(f"an NLI model needs exactly 3 labels in config.id2label, got {id2label!r}")
    order = []
    for index in sorted(int(i) for i in id2label):
        raw = str(id2label[index] if index in id2label else id2label[str(index)])
        name = _LABEL_ALIASES.get(raw.strip().lower().replace(" ", "_"))
        if name is None:
            raise ValueError(
                f"cannot tell which NLI label {raw!r} is (config.id2label = {id2label!r}); "
                "expected entailment / neutral / contradiction"
            )
        order.append(name)
    if sorted(order) != sorted(LABELS):
        raise ValueError(f"config.id2label must name entailment, neutral and contradiction once each, got {order}")
    return tuple(order)


def decisive(judgements: Sequence[NLIProbs]) -> int:
    """Index of the most decisive probabilities: max(P_E, P_C), ties to the higher P_C."""
    return max(range(len(judgements)), key=lambda i: (judgements[i].decisiveness, judgements[i].contradiction))


class NLIScorer:
    """A cross-encoder NLI model on CPU (fp32) or GPU, shared by every session of the app. Thread-safe:
    a fast (Rust) tokenizer is not (two threads setting its truncation at once raise "Already
    borrowed"), so every tokenizer call holds a lock; the model forward runs unlocked."""

    def __init__(self, name_or_path: str = "", settings: NLISettings = NLISettings()) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as err:
            raise MissingResource("transformers and torch are needed for NLI: pip install -r requirements.txt") from err
        source = name_or_path or settings.model or str(DEFAULT_NLI_MODEL_DIR)
        if not (name_or_path or settings.model) and not Path(source).is_dir():
            raise MissingResource(
                f"the trained NLI model is missing at {source}: run `python -m core train-nli` "
                "or give a Hugging Face NLI model id / folder"
            )
        self.settings = settings
        self.source = source
        self.name = Path(source).name if Path(source).exists() else source
        self.tokenizer = AutoTokenizer.from_pretrained(source)
        # Exported weights may be fp16; CPUs run fp16 slowly and inexactly, so compute in fp32.
        self.model = AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float32)
        self.model.to(settings.device).eval()
        self.order = label_order(self.model.config.id2label)
        self._torch = torch
        self._tokenizer_lock = threading.Lock()

    # -- plain pairs ---------------------------------------------------------------------------
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int | None = None) -> list[NLIProbs]:
        """Probabilities for each (premise, hypothesis), batched by similar length; input order kept."""
        batch_size = batch_size or self.settings.batch_size
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out: list[NLIProbs | None] = [None] * len(pairs)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            for i, probs in zip(idx, self._forward([pairs[i] for i in idx])):
                out[i] = probs
        return out  # type: ignore[return-value]

    def _forward(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        torch = self._torch
        with self._tokenizer_lock:
            enc = self.tokenizer(
                [p for p, _ in pairs], [h for _, h in pairs],
                truncation="longest_first", max_length=self.settings.max_length, padding=True, return_tensors="pt",
            ).to(self.settings.device)
        with torch.inference_mode():
            probs = torch.softmax(self.model(**enc).logits.float(), dim=-1).cpu().numpy()
        return [NLIProbs(**{name: float(row[j]) for j, name in enumerate(self.order)}) for row in probs]

    # -- long premises -------------------------------------------------------------------------
    def judge(self, history: Sequence[str], hypothesis: str) -> NLIJudgement:
        return self.judge_many([(history, hypothesis)])[0]

    def judge_many(self, items: Sequence[tuple[Sequence[str], str]]) -> list[NLIJudgement]:
        """Each (history lines oldest first, hypothesis) by the windowing rule in the module doc;
        all chunks of all items go through the model in shared batches."""
        plans = [self._plan(history, hypothesis) for history, hypothesis in items]
        flat = [(chunk, hyp) for chunks, hyp, _ in plans for chunk in chunks]
        probs = self.predict(flat)
        out, pos = [], 0
        for chunks, _, truncated in plans:
            mine = probs[pos : pos + len(chunks)]
            pos += len(chunks)
            best = decisive(mine)
            out.append(NLIJudgement(mine[best], best, len(chunks), chunks[best], truncated))
        return out

    def _plan(self, history: Sequence[str], hypothesis: str) -> tuple[list[str], str, bool]:
        hypothesis, truncated = self._truncate(hypothesis, self.settings.hypothesis_max_tokens)
        budget = self.settings.max_length - 3 - self._count(hypothesis)
        chunks = self.chunk_history(history, budget)
        return chunks or [""], hypothesis, truncated

    def chunk_history(self, history: Sequence[str], budget: int) -> list[str]:
        """Rule 2 of the module doc: most recent sentences first into chunks of <= budget tokens,
        at most max_chunks of them, returned oldest first."""
        sentences = [s for line in history for s in split_sentences(line)]
        chunks: list[list[str]] = []
        used = budget + 1  # forces a new chunk for the first sentence
        for sentence in reversed(sentences):
            size = self._count(sentence)
            if size > budget:
                sentence, _ = self._truncate(sentence, budget)
                size = budget
            if used + size > budget:
                if len(chunks) == self.settings.max_chunks:
                    break
                chunks.append([])
                used = 0
            chunks[-1].insert(0, sentence)
            used += size
        return [" ".join(c) for c in reversed(chunks)]

    def _count(self, text: str) -> int:
        with self._tokenizer_lock:
            return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _truncate(self, text: str, max_tokens: int) -> tuple[str, bool]:
        with self._tokenizer_lock:
            enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if len(enc["input_ids"]) <= max_tokens:
            return text, False
        end = enc["offset_mapping"][max_tokens - 1][1]
        return text[:end], True


@load_once
def load_nli(name_or_path: str = "", device: str = "cpu") -> NLIScorer:
    """The shared NLI scorer (default: the trained model in assets/models/nli-minilm-l6)."""
    return NLIScorer(name_or_path, NLISettings(model=name_or_path, device=device))


def history_lines(turns) -> list[str]:
    """`Turn`s as premise lines: "User: ...", "Assistant: ..." (or the speaker's name)."""
    return [f"{t.speaker or t.role.capitalize()}: {t.text}" for t in turns]
