"""Property-based fuzzing of the retrievers' query paths (RAG, BM25, SGMem; the methods' own
`retrieve`): any dialogue and query, any k: no exception, at most k dialogue chunks, each from the
index, best first; dense RAG agrees with brute-force cosine; SGMem built turn by turn equals SGMem
built at once. The hashing embedder stands in for the sentence model (same interface)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.dialogue import Dialogue
from core.llm.fake import ScriptedLLM
from core.methods import create_method
from core.methods.chunkrag import BM25Retriever, ChunkRAGRetriever
from core.methods.dsmart.config import DSMConfig, DsmMethodConfig
from core.methods.method import Toolkit
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.retriever import SGMemRetriever
from core.resources import HashingEmbedder
from core.retrieval.base import DIALOGUE_KINDS, LEVELS, dialogue_chunks
from tests.fuzz_helpers import dialogue_text, dialogues

EMBEDDER = HashingEmbedder(64)
ks = st.integers(-2, 12)
levels = st.sampled_from(LEVELS)
sgmem_configs = st.builds(SGMemConfig, chunk_level=levels, knn_k=st.integers(0, 4), hops=st.integers(0, 2),
                          max_sentences=st.integers(1, 20), gamma=st.floats(0.0, 2.0), top_k=st.integers(1, 8))


def check_ranked(evidence, dialogue: Dialogue, k: int) -> None:
    chunks = [e for e in evidence if e.kind in DIALOGUE_KINDS]
    assert len(chunks) <= max(k, 0)
    known = {t.turn_id for t in dialogue.turns()}
    assert all(chunk.meta["turn_ids"] and set(chunk.meta["turn_ids"]) <= known for chunk in chunks)
    assert len({chunk.source for chunk in chunks}) == len(chunks)  # no chunk twice
    scores = [chunk.score for chunk in chunks]
    assert all(np.isfinite(scores)) and scores == sorted(scores, reverse=True)


@given(dialogues(), dialogue_text(), ks, levels)
def test_rag_and_bm25_return_at_most_k_ranked_chunks_of_the_dialogue(dialogue, query, k, level):
    for retriever in (ChunkRAGRetriever(EMBEDDER, level), BM25Retriever(level)):
        retriever.index(dialogue)
        check_ranked(retriever.retrieve(query, k), dialogue, k)


@given(dialogues(), dialogue_text(), st.integers(1, 12), levels)
def test_rag_agrees_with_brute_force_cosine(dialogue, query, k, level):
    retriever = ChunkRAGRetriever(EMBEDDER, level)
    retriever.index(dialogue)
    found = retriever.retrieve(query, k)
    chunks = dialogue_chunks(dialogue, level)
    if not chunks:
        assert found == []
        return
    cosine = EMBEDDER.encode([c.text for c in chunks]) @ EMBEDDER.encode([query])[0]
    best = sorted(cosine.tolist(), reverse=True)[:k]
    assert [e.score for e in found] == pytest.approx(best, abs=1e-5)
    by_id = {c.id: float(s) for c, s in zip(chunks, cosine)}
    assert all(by_id[e.source] == pytest.approx(e.score, abs=1e-5) for e in found)


@given(dialogues(), dialogue_text(), ks, sgmem_configs)
def test_sgmem_returns_at_most_k_ranked_chunks_of_the_dialogue(dialogue, query, k, config):
    retriever = SGMemRetriever(EMBEDDER, config)
    retriever.index(dialogue)
    check_ranked(retriever.retrieve(query, k), dialogue, k)
    hits = retriever.search(query, k)
    assert set(hits.seeds) <= set(hits.sentence_scores) and len(hits.seeds) <= config.max_sentences
    assert all(s + 1e-9 >= config.gamma for i, s in hits.sentence_scores.items() if i in hits.seeds)


@given(dialogues(), dialogue_text(), sgmem_configs, st.data())
def test_sgmem_built_turn_by_turn_equals_sgmem_built_at_once(dialogue, query, config, data):
    at_once = SGMemRetriever(EMBEDDER, config)
    at_once.index(dialogue)
    stepwise = SGMemRetriever(EMBEDDER, config)
    turns = dialogue.turns()
    cut = data.draw(st.integers(0, len(turns)))
    stepwise.add_turns(turns[:cut])
    for turn in turns[cut:]:
        stepwise.add_turns([turn])
    a, b = at_once.search(query), stepwise.search(query)
    assert [(e.source, round(e.score, 5)) for e in a.chunks] == [(e.source, round(e.score, 5)) for e in b.chunks]


@given(dialogues(), dialogue_text(), ks, st.sampled_from(["rag", "sgmem", "dsm", "base"]))
def test_methods_retrieve_at_most_k_items(dialogue, query, k, name):
    # dsm: the method's query path only, over empty fragments without the reasoner (the extractor
    # and the graph update are fuzzed in test_fuzz_dsm.py)
    config = DsmMethodConfig(memory=DSMConfig(reasoner=False)) if name == "dsm" else None
    method = create_method(name, Toolkit(llm=ScriptedLLM(), embedder=EMBEDDER), config)
    if name == "dsm":
        method.memory._nlp = _FakeNLP()
    method.sync(dialogue)
    found = method.retrieve(dialogue, query, k)
    assert len(found) <= max(k, 0)


class _FakeNLP:
    """Parses nothing: every round's fragment is empty (keeps this property off spaCy)."""

    def __call__(self, text):
        return self

    def pipe(self, texts):
        return [self for _ in texts]

    sents = ents = noun_chunks = ()

    def __iter__(self):
        return iter(())
