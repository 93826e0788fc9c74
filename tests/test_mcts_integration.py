"""Integration on a 2k-sentence slice of the shared GenericsKB sample with the real embedder and
spaCy: the KB builds and reloads from its cache, MCTS finds on-topic knowledge, and the
knowledge-retrieval benchmark runs end to end (scripted reasoner LLM, real BERTScore and NLI)."""

from __future__ import annotations

import json

import pytest

from core.llm.fake import ScriptedLLM
from core.methods import Toolkit
from core.methods.mcts.config import KBSettings, MCTSConfig
from tests.test_mcts_method import _reply_by_relation, _scorer

pytestmark = pytest.mark.slow

SLICE = 2000


@pytest.fixture(scope="module")
def kb_setup(shared_data, embedder, tmp_path_factory):
    from core.methods.mcts.kb import load_or_build

    cache = tmp_path_factory.mktemp("kbcache")
    path = shared_data / "genericskb" / "GenericsKB.txt"
    kb = load_or_build(path, embedder, KBSettings(cache_dir=str(cache)), limit=SLICE)
    return kb, path, cache


def test_slice_builds_and_reloads(kb_setup, embedder):
    import time

    from core.methods.mcts.kb import load_or_build

    kb, path, cache = kb_setup
    assert len(kb) == SLICE and len(kb.concepts) > SLICE and kb.groups.n_groups > 10
    assert "criminologist" in kb.concept_id and kb.texts[0] == "Criminologists are workers."
    t0 = time.perf_counter()
    again = load_or_build(path, embedder, KBSettings(cache_dir=str(cache)), limit=SLICE)
    assert time.perf_counter() - t0 < 30  # loads, does not rebuild (a rebuild embeds ~6k texts)
    assert again.texts == kb.texts and (again.groups.labels == kb.groups.labels).all()


def test_mcts_finds_on_topic_knowledge(kb_setup, embedder):
    from core.methods.mcts.retriever import KnowledgeSearch

    kb, _, _ = kb_setup
    search = KnowledgeSearch(kb, embedder, MCTSConfig(use_reasoner=False))
    result = search.run(["A: My dog keeps barking at the cat.", "B: Maybe he wants to play with it."])
    assert len(result.knowledge) == 5 and "dog" in result.context_concepts
    assert result.subregion > 0 and len(result.trees) == 2
    # at least one retrieved sentence is about the context's animals
    assert any(w in e.text.lower() for e in result.knowledge for w in ("dog", "cat", "animal", "pet", "bark"))


def test_knowledge_retrieval_benchmark_end_to_end(kb_setup, embedder, shared_data, tmp_path):
    from core.benchmarks.runner import BenchContext, run_benchmark

    _, path, cache = kb_setup
    llm = ScriptedLLM(_reply_by_relation, scorer=_scorer)
    ctx = BenchContext(name="knowledge-retrieval", data=shared_data / "dailydialog" / "dialogues_test.txt", out=tmp_path / "run",
                       methods=["mcts", "mcts-no-bridging", "dense", "bm25", "sgmem"], limit=3, seed=0,
                       options={"kb": str(path), "kb_limit": SLICE, "kb_cache": str(cache), "no_reasoner_cache": True},
                       make_tools=lambda: Toolkit(llm=llm, embedder=embedder), progress=False)
    summary = run_benchmark(ctx)
    assert summary["contexts"] == 3
    for method, row in summary["results"].items():
        for name in ("semantic_overlap_p", "semantic_overlap_r", "semantic_overlap_f1", "rouge1_overlap",
                     "rouge2_overlap", "rougel_overlap", "alignment@0.5", "alignment_no_threshold"):
            assert 0.0 <= row[name] <= 100.0, (method, name)
        assert set(row["alignment_curve"]) == {f"{t / 10:.1f}" for t in range(11)}
        assert row["alignment_curve"]["0.0"] >= row["alignment_curve"]["1.0"]
        assert summary["timings"][method]["query"]["n"] == 3
    assert not summary["settings"]["kb"].startswith("/")  # recorded relative to the repository
    # the paired differences agree with the table's rows (every context has 5 sentences here)
    cell = summary["paired"]["mcts - bm25"]["rougel_overlap"]
    rows = summary["results"]
    assert cell["n"] == 3 and cell["low"] <= cell["diff"] <= cell["high"]
    assert cell["diff"] == pytest.approx(rows["mcts"]["rougel_overlap"] - rows["bm25"]["rougel_overlap"], abs=0.02)
    # `python -m core knowledge-paired` recomputes the same block from the run folder (for runs made before it)
    from core.cli import main as cli_main

    assert cli_main(["knowledge-paired", str(tmp_path / "run"), "--out", str(tmp_path / "paired.json")]) == 0
    assert json.loads((tmp_path / "paired.json").read_text())["paired"] == summary["paired"]
    items = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert len(items) == 3 and len(items[0]["methods"]["mcts"]["sentences"]) == 5
    assert items[0]["reasoning"]["candidates"]
