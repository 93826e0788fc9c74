"""Generated memory (Appendix B prompts, cache, fall-backs), the `sgmem` chat method, and the
retrieval benchmarks end to end on tiny files."""

from __future__ import annotations

import json
from dataclasses import replace

from core.benchmarks.runner import BenchContext, read_run, run_benchmark
from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.sgmem.config import SGMemConfig
from core.methods.sgmem.memory import MemoryGenerator, MemoryTables, symbolic_facts
from core.resources import HashingEmbedder
from tests.test_data_loaders import tiny_locomo


def chat() -> Dialogue:
    return Dialogue.from_turns([
        Turn(USER, "I adopted a dog named Luna last week.", session=0),
        Turn(ASSISTANT, "Congratulations on Luna!", session=0),
        Turn(USER, "I also started learning the violin.", session=0),
        Turn(ASSISTANT, "Violin is a great choice.", session=0),
    ])


def replies(messages):
    prompt = messages[0].content
    if "fact extraction assistant" in prompt:
        return '```json\n["The user adopted a dog named Luna.", "The user is learning the violin."]\n```'
    if "fact reflection assistant" in prompt:
        return '[{"timestamp": "", "content": "The user enjoys new hobbies."}]'
    if "summarization assistant" in prompt:
        return "The user adopted a dog and started the violin."
    return "Your dog is called Luna."


def test_memory_generator_uses_the_prompts_and_caches(tmp_path):
    llm = ScriptedLLM(replies)
    gen = MemoryGenerator(llm, cache_folder=tmp_path)
    memory = gen(chat(), "mfi")
    assert [m.kind for m in memory.items] == ["summary", "fact", "fact", "insight"]
    assert memory.of("fact")[0].text == "The user adopted a dog named Luna."
    assert "Extract **all explicit personal facts**" in llm.requests[1][0].content
    assert "User: I adopted a dog named Luna last week." in llm.requests[1][0].content
    calls = llm.calls
    assert gen(chat(), "mfi") == memory and llm.calls == calls  # second time: from the disk cache


def test_invalid_facts_fall_back_to_symbolic_and_insights_to_nothing(tmp_path):
    llm = ScriptedLLM(["not json at all"])
    memory = MemoryGenerator(llm, cache_folder=tmp_path)(chat(), "fi")
    facts = memory.of("fact")
    assert [f.text for f in facts] == ["The user adopted a dog named Luna last week.", "The user also started learning the violin."]
    assert all(f.meta.get("fallback") for f in facts)
    assert memory.of("insight") == []


def test_symbolic_facts_names_the_speaker():
    turns = [Turn(USER, "I'm moving to Paris with my sister. Are you coming?", "D1:1", 1, "Ann")]
    assert symbolic_facts(turns) == ["Ann is moving to Paris with Ann's sister."]


def test_memory_tables_search_top_k_per_kind(tmp_path):
    memory = MemoryGenerator(ScriptedLLM(replies), cache_folder=tmp_path)(chat(), "mf")
    emb = HashingEmbedder(64)
    tables = MemoryTables(emb)
    tables.build(memory, "mf")
    found = tables.search(emb.encode(["violin"]), 1, offset=1.0)
    assert [e.kind for e in found] == ["summary", "fact"]
    assert found[1].text == "The user is learning the violin." and 1.0 <= found[1].score <= 2.0


def newest_turn_only(method):
    """The method with a conversation window of one character: the newest turn alone is shown as a
    turn (core.methods.layout), the turns before it are memory."""
    method.config = replace(method.config, generation=replace(method.config.generation, max_history_chars=1))
    return method


def test_sgmem_method_responds_with_evidence_and_trace():
    tools = Toolkit(llm=ScriptedLLM(replies), embedder=HashingEmbedder(1024))
    method = newest_turn_only(create_method("sgmem", tools))
    d = chat()
    reply = method.respond(d, "a dog named Luna")
    assert reply.text == "Your dog is called Luna." and reply.method == "sgmem"
    assert reply.evidence and reply.evidence[0].source == "S0:0"  # the turn about Luna ranks first
    assert reply.trace.kind == "steps" and any(n.detail.get("role") == "seed" for n in reply.trace.nodes)
    assert reply.trace.prompt[0]["content"].startswith("You are a helpful assistant")
    notes = reply.trace.prompt[-2]["content"]  # the memory: after the conversation, before the message (core.methods.layout)
    assert notes.startswith("Notes from earlier in this conversation")
    assert "- You also started learning the violin." in notes  # the user's turn in the second person
    assert method.observed == 4
    d.add(Turn(USER, "My dog loves the park.", session=0))
    method.sync(d)
    assert method.observed == 5 and len(method.retriever.graph) == 5


def test_sgmem_method_with_generated_memory(tmp_path, monkeypatch):
    monkeypatch.setattr("core.methods.sgmem.memory.DEFAULT_CACHE_DIR", tmp_path)
    tools = Toolkit(llm=ScriptedLLM(replies), embedder=HashingEmbedder(64))
    method = create_method("sgmem", tools, SGMemConfig(memory="f"))
    reply = method.respond(chat(), "violin")
    assert "fact" in {e.kind for e in reply.evidence}


def bench(tmp_path, name, data, methods, **options):
    ctx = BenchContext(name=name, data=data, out=tmp_path / "out", methods=methods, limit=None, seed=0,
                       options={"embedder": "hashing", "embedding_cache": str(tmp_path / "emb"), **options}, progress=False)
    run_benchmark(ctx)
    return read_run(tmp_path / "out")


def test_locomo_retrieval_bench_end_to_end(tmp_path):
    summary, items = bench(tmp_path, "locomo-retrieval", tiny_locomo(tmp_path), ["rag-s", "bm25-t", "sgmem-s"], ks="1,5")
    assert summary["benchmark"] == "locomo-retrieval" and len(items) == 2
    # one session holds all of Q2's evidence: session chunks at K=5 cover both sessions, so recall is 1
    assert summary["results"]["rag-s"]["recall@5"] == 1.0
    assert summary["results"]["rag-s"]["by_category"]["adversarial"]["n"] == 1
    assert "adversarial" in summary["results"]["sgmem-s"]["by_category"]
    assert summary["results"]["rag-s"]["n"] == 1  # the headline leaves category 5 out
    assert set(summary["timings"]["sgmem-s"]) == {"index", "query", "query_cpu"}
    assert items[0]["methods"]["bm25-t"]["chunks"]


def test_longmemeval_retrieval_bench_end_to_end(tmp_path):
    raw = [{"question_id": "q1", "question_type": "single-session-user", "question": "Which city did I move to?",
            "answer": "Lisbon", "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["s1", "s2"],
            "haystack_dates": ["2023/05/01 (Mon) 08:00", "2023/05/02 (Tue) 08:00"],
            "haystack_sessions": [[{"role": "user", "content": "I moved to the city of Lisbon.", "has_answer": True},
                                   {"role": "assistant", "content": "Nice."}],
                                  [{"role": "user", "content": "Recommend a book."}, {"role": "assistant", "content": "Dune."}]],
            "answer_session_ids": ["s1"]}]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(raw))
    summary, items = bench(tmp_path, "longmemeval-retrieval", path, ["rag-t", "sgmem-t"], ks="1")
    assert summary["results"]["rag-t"]["recall@1"] == 1.0
    assert summary["results"]["rag-t"]["session_recall@1"] == 1.0
    assert items[0]["methods"]["sgmem-t"]["chunks"][0] == "s1:0"


def test_sgmem_h_chat_method_seeds_the_graph_from_bm25_and_dense_and_says_it_is_not_the_paper():
    from core.methods import METHODS, method_class
    from core.methods.sgmem.calibration import hybrid_settings

    assert "sgmem-h" in METHODS and "sgmem" in METHODS  # beside the paper's, not instead
    assert "not in the paper" in method_class("sgmem-h").label
    embedder = HashingEmbedder(64)
    method = create_method("sgmem-h", Toolkit(llm=ScriptedLLM(replies), embedder=embedder))
    assert method.config.generation == create_method("sgmem", Toolkit(llm=ScriptedLLM(), embedder=embedder)).config.generation
    method = newest_turn_only(method)
    assert method.config.hybrid is not None and method.config.chunk_level == "turn"
    assert method.config.hybrid == hybrid_settings(embedder.name, "turn").hybrid
    assert method.retriever.name == "sgmem-t+h"
    reply = method.respond(chat(), "Which instrument, the violin?")
    assert reply.method == "sgmem-h" and reply.text == "Your dog is called Luna."
    assert reply.evidence[0].source == "S0:2"  # the violin turn: BM25 finds the rare word


def test_retrieval_benchmarks_run_the_hybrid_beside_the_paper_s_by_default():
    from core.benchmarks.runner import load_benchmark

    for name in ("locomo-retrieval", "longmemeval-retrieval"):
        defaults = load_benchmark(name).DEFAULT_METHODS.split(",")
        assert {"sgmem-t", "sgmem-r", "sgmem-s", "sgmem-t+h", "sgmem-r+h", "sgmem-s+h"} <= set(defaults)
