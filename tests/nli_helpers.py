"""Helpers for the NLI and metrics tests: a tiny random NLI model written to disk (real
transformers classes, real tokenizer, random weights) and a fixed-probability scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from core.metrics.nli import NLIJudgement, NLIProbs


def write_tiny_nli_model(folder: Path, labels: Sequence[str] = ("entailment", "neutral", "contradiction"), seed: int = 0,
                         permutation: Sequence[int] | None = None) -> Path:
    """A 1-layer BERT classifier with the MiniLM tokenizer. With `permutation`, the classifier's
    output rows are reordered: row j of the new head is row permutation[j] of the seed's head."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from core.paths import packaged_embedder_dir

    tokenizer = AutoTokenizer.from_pretrained(str(packaged_embedder_dir()))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=3,
                        id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    model = BertForSequenceClassification(config).eval()
    if permutation is not None:
        with torch.no_grad():
            model.classifier.weight.copy_(model.classifier.weight[list(permutation)].clone())
            model.classifier.bias.copy_(model.classifier.bias[list(permutation)].clone())
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class FixedNLI:
    """Returns the given probabilities in order, one per judged item: a stand-in for the NLI model
    where a test checks the metric arithmetic, not the model."""

    def __init__(self, probs: Sequence[tuple[float, float, float]]) -> None:
        self.probs = list(probs)
        self.calls: list[list] = []

    def judge_many(self, items):
        self.calls.append(list(items))
        out = []
        for _ in items:
            e, n, c = self.probs.pop(0)
            out.append(NLIJudgement(NLIProbs(e, n, c), 0, 1, ""))
        return out
