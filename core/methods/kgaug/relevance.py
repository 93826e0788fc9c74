"""Triton's relevance model: a cross-encoder giving P(relevant | query, triple).

The paper fine-tuned Llama-3-8B with LoRA on GPT-4o-labelled query-triple pairs; offline on a CPU
we fine-tune the shipped all-MiniLM-L6-v2 weights (first `layers` transformer layers) as a binary
classifier on OpenDialKG's own labels: the walk the annotator chose is relevant, the other
candidates of that turn are not (train.py). The exported model lives in assets/models/.

Weights are stored in fp16 and computed in fp32 (CPUs run fp16 slowly); on CPU the linear layers
are dynamically quantised to int8 by default (`quantize`), which roughly halves the time per query.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from core.paths import ASSETS_DIR, MissingResource

DEFAULT_RELEVANCE_DIR = ASSETS_DIR / "models" / "triton-relevance-minilm"
_lock = threading.Lock()


class RelevanceModel:
    def __init__(self, source: str | Path = "", max_length: int = 48, batch_size: int = 64, quantize: bool = True,
                 threads: int = 0) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as err:
            raise MissingResource("transformers and torch are needed for the relevance model") from err
        source = Path(source) if source else DEFAULT_RELEVANCE_DIR
        if not Path(source).is_dir():
            raise MissingResource(
                f"the trained relevance model is missing at {source}: run `python -m core train-relevance` "
                "or pick the bm25 / kaping ranker"
            )
        if threads:
            torch.set_num_threads(threads)
        self.source = str(source)
        settings = Path(source) / "settings.json"  # written by train-relevance: rank as it was trained
        if settings.is_file():
            max_length = int(json.loads(settings.read_text()).get("max_length", max_length))
        self.max_length = max_length
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float32).eval()
        if model.config.num_labels != 1:
            raise ValueError(f"{source}: a relevance model has one output logit, this one has {model.config.num_labels}")
        self.quantized = False
        if quantize:
            model = _quantize(model)
            self.quantized = model is not None
            model = model or AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float32).eval()
        self.model = model

    def logits(self, query: str, texts: Sequence[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros(0)
        out = []
        with _lock, torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                chunk = list(texts[i : i + self.batch_size])
                enc = self.tokenizer([query] * len(chunk), chunk, truncation=True, max_length=self.max_length,
                                     padding=True, return_tensors="pt")
                out.append(self.model(**enc).logits[:, 0].float().numpy())
        return np.concatenate(out).astype(np.float64)

    def predict(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """P(relevant) per text."""
        return 1.0 / (1.0 + np.exp(-self.logits(query, texts)))


def _quantize(model):
    """int8 dynamic quantisation of the linear layers; None where this torch build cannot."""
    import torch

    import warnings

    try:
        with warnings.catch_warnings():  # torch marks eager-mode quantisation deprecated; it still works in 2.13
            warnings.simplefilter("ignore")
            return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    except (RuntimeError, AttributeError, AssertionError):
        return None


@lru_cache(maxsize=2)
def load_relevance_model(source: str = "", quantize: bool = True) -> RelevanceModel:
    """The shared relevance model (read-only; one per process)."""
    return RelevanceModel(source, quantize=quantize)
