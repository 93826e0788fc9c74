"""Integration tests with the real small models (loaded once per session)."""

from __future__ import annotations

import numpy as np
import pytest

from core.dialogue import Dialogue, Turn
from core.methods import Toolkit, create_method

pytestmark = pytest.mark.slow


def test_embedder_ranks_paraphrase_above_unrelated(embedder):
    v = embedder.encode(["My dog is called Rex.", "The name of my dog is Rex.", "Stock markets fell sharply today."])
    assert v.shape == (3, embedder.dim) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


def test_local_llm_chats_scores_and_batches(local_llm):
    reply = local_llm.chat("What is the capital of France? Answer in one word.", temperature=0.0, max_tokens=10)
    assert "paris" in reply.text.lower()
    scores = local_llm.score("What is the capital of France?", ["The capital of France is Paris.", "The capital of France is Madrid."])
    assert scores[0] > scores[1]
    batch = local_llm.chat_batch(["Say hello.", "Name a colour."], temperature=0.0, max_tokens=8)
    assert len(batch) == 2 and all(c.text for c in batch)


def test_local_llm_second_load_uses_the_converted_cache(local_llm):
    from core.llm.local import LocalLLM

    again = LocalLLM()
    assert again.loaded_from == "cache"
    assert again.load_seconds < 10


def test_rag_with_real_models_finds_the_fact(local_llm, embedder):
    d = Dialogue.from_turns([
        Turn("user", "My sister Maria lives in Toronto."),
        Turn("assistant", "Toronto is a great city."),
        Turn("user", "I bought a new bicycle yesterday."),
        Turn("assistant", "Enjoy riding it!"),
    ])
    from dataclasses import replace

    method = create_method("rag", Toolkit(local_llm, embedder))
    # a window of one character shows the newest turn alone: the earlier turns are memory (core.methods.layout)
    method.config = replace(method.config, generation=replace(method.config.generation, max_history_chars=1))
    reply = method.respond(d, "Where does my sister live?")
    assert reply.evidence[0].source == "S0:0"
    assert reply.text
