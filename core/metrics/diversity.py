"""Pairwise diversity of a set of retrieved sentences (MCTS paper, Table III), lower overlap =
more diverse: semantic overlap as BERTScore P/R/F1 and token overlap as ROUGE-1/2/L F-measure,
averaged over every unordered pair (i < j, sentence i as candidate, j as reference), then over
sets; reported 0-100 like the paper.

BERTScore runs through the `bert-score` package with the project's local all-MiniLM-L6-v2 folder
(no download; layer 4 of 6, about two thirds of the depth as bert-score's own defaults choose,
no IDF, no baseline rescaling). The paper used bert-score's default RoBERTa-large, so absolute
values differ from its table; comparisons between methods here are like for like.
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np

DEFAULT_LAYERS = 4


def pairs_of(sentences: Sequence[str]) -> list[tuple[str, str]]:
    return list(combinations(list(sentences), 2))


def load_bertscorer(model: str = "", num_layers: int = DEFAULT_LAYERS, device: str = "cpu"):
    """A bert_score.BERTScorer over `model` (default: the packaged MiniLM folder)."""
    from bert_score import BERTScorer

    from core.paths import packaged_embedder_dir

    return BERTScorer(model_type=model or str(packaged_embedder_dir()), num_layers=num_layers, lang="en",
                      device=device, batch_size=64)


def bertscore_overlap(sets: Sequence[Sequence[str]], scorer) -> list[dict[str, float] | None]:
    """Per set: mean BERTScore P, R, F1 over its pairs (None for a set of fewer than 2)."""
    flat, owner = [], []
    for i, s in enumerate(sets):
        for a, b in pairs_of(s):
            flat.append((a, b))
            owner.append(i)
    out: list[dict[str, float] | None] = [None] * len(sets)
    if not flat:
        return out
    p, r, f = scorer.score([a for a, _ in flat], [b for _, b in flat])
    p, r, f, owner = p.numpy(), r.numpy(), f.numpy(), np.asarray(owner)
    for i in set(owner.tolist()):
        mask = owner == i
        out[i] = {"p": float(p[mask].mean()), "r": float(r[mask].mean()), "f1": float(f[mask].mean())}
    return out


def rouge_overlap(sentences: Sequence[str], scorer=None) -> dict[str, float] | None:
    """Mean ROUGE-1/2/L F-measure over the pairs of one set (None for fewer than 2)."""
    from rouge_score import rouge_scorer

    pairs = pairs_of(sentences)
    if not pairs:
        return None
    scorer = scorer or rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    scores = [scorer.score(b, a) for a, b in pairs]  # score(target, prediction)
    return {name: float(np.mean([s[name].fmeasure for s in scores])) for name in ("rouge1", "rouge2", "rougeL")}
