"""The models every session shares (NLI scorer, sentence embedder) serve many threads at once:
Streamlit runs each session's script in its own thread, and a fast tokenizer used from two
threads at once fails with "Already borrowed" (found by the 20-session load test)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.page_fixtures import tiny_nli_folder  # noqa: F401 (fixture)


def test_the_nli_scorer_judges_from_many_threads_as_from_one(tiny_nli_folder):
    from core.metrics.nli import NLIScorer, NLISettings

    scorer = NLIScorer(str(tiny_nli_folder), NLISettings(max_length=64, hypothesis_max_tokens=16))
    items = [([f"User: line {i} about dogs and cats and the weather today." * (1 + i % 4)], f"Reply {i} " * (1 + i % 7))
             for i in range(24)]
    alone = [scorer.judge_many([item])[0] for item in items]
    with ThreadPoolExecutor(8) as pool:  # truncating and padding differently, all at once
        together = list(pool.map(lambda item: scorer.judge_many([item])[0], items * 4))
    assert [j.premise_chunk for j in together] == [j.premise_chunk for j in alone] * 4
    assert [j.probs.entailment for j in together] == pytest.approx([j.probs.entailment for j in alone] * 4, abs=1e-5)


def test_the_embedder_encodes_from_many_threads_as_from_one(embedder):
    import numpy as np

    texts = [f"sentence number {i} " * (1 + i % 9) for i in range(32)]
    alone = embedder.encode(texts)
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda i: embedder.encode([texts[i]])[0], range(len(texts))))
    assert np.allclose(np.stack(together), alone, atol=1e-5)
