"""The reasoner (scripted LLM), the two-phase search on a tiny KB, the memory retriever, the chat
method and the dialogue loaders."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from core.config import GenerationSettings
from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.base import Completion, ScoringUnsupported, TokenLogprob
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.mcts.config import RELATIONS, MCTSConfig, ReasonerSettings, SearchSettings
from core.methods.mcts.critics import length_term, retrieval_value
from core.methods.mcts.reasoner import Reasoner, clean_completion, generated_logprob, render_statement
from core.methods.mcts.retriever import KnowledgeSearch, result_trace
from core.resources import HashingEmbedder
from core.text import without_speaker
from tests.mcts_helpers import tiny_kb, write_kb

CONTEXT = ["A: My dog wants to run in the park every day.", "B: Does he like other animals?"]
TAILS = {"Causes": "a happy dog", "xReason": "dogs need exercise", "HinderedBy": "rain", "IsBefore": "a walk",
         "IsAfter": "breakfast", "xNeed": "a leash", "xAttr": "caring", "xEffect": "buy food",
         "xReact": "happy", "xWant": "to play with cats", "xIntent": "to keep the dog healthy"}


def _reply_by_relation(messages):
    text = messages[-1].content
    for rel, statement in RELATIONS.items():
        if render_statement(statement) + " ..." in text:
            return TAILS[rel] if rel != "IsAfter" else ""  # one empty completion: dropped
    return "?"


def _scorer(messages, candidate):
    return -1.0 * len(candidate.split())  # tau = -1 per word-token: the same for all


class NoScoringLLM(ScriptedLLM):
    name = "no-scoring"
    supports_scoring = False

    def _score(self, messages, candidates):
        raise ScoringUnsupported("cannot score")


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    return tiny_kb(tmp_path_factory.mktemp("kb"))[0]


def _reasoner(llm, outcomes=3):
    return Reasoner(llm, HashingEmbedder(128), ReasonerSettings(outcomes=outcomes, cache=False))


# -- reasoner ----------------------------------------------------------------------------------------
def test_reasoner_prompts_every_relation_and_scores_mean_token_logprob():
    llm = ScriptedLLM(_reply_by_relation, scorer=_scorer)
    reasoning = _reasoner(llm).infer(CONTEXT)
    assert len(reasoning.candidates) == len(RELATIONS) - 1  # the empty IsAfter completion is dropped
    assert any("empty completion" in n for n in reasoning.notes) and any("COMET" in n for n in reasoning.notes)
    by_rel = {c.relation: c for c in reasoning.candidates}
    assert by_rel["xWant"].text == "to play with cats" and by_rel["xWant"].statement == "as a result, the speaker wants"
    # the scripted backend reports no token counts: |d| falls back to approx_tokens (words / 0.75)
    for c in reasoning.candidates:
        assert c.tau == pytest.approx(-len(c.text.split()) / max(1, round(len(c.text.split()) / 0.75)))
    assert reasoning.scored and len(reasoning.selected) == 3
    assert [c.rank for c in reasoning.selected] == [0, 1, 2]
    prompts = [m[-1].content for m in llm.requests if "Complete the sentence" in m[-1].content]
    assert any("Does he like other animals, as a result, the speaker feels ..." in p for p in prompts)


def test_reasoner_dpp_prefers_confident_and_diverse():
    tails = {"Causes": "dogs run fast", "xReason": "dogs run fast", "xNeed": "an umbrella for the rain"}

    def reply(messages):
        text = messages[-1].content
        return next((t for r, t in tails.items() if render_statement(RELATIONS[r]) + " ..." in text), "")

    def scorer(messages, candidate):
        return -0.1 if candidate == "dogs run fast" else -3.0

    reasoning = Reasoner(ScriptedLLM(reply, scorer=scorer), HashingEmbedder(128),
                         ReasonerSettings(relations=("Causes", "xReason", "xNeed"), outcomes=2, cache=False)).infer(CONTEXT)
    chosen = [c.relation for c in reasoning.selected]
    assert chosen[0] in ("Causes", "xReason") and chosen[1] == "xNeed"  # the duplicate adds no volume


def test_reasoner_falls_back_when_backend_cannot_score():
    reasoning = _reasoner(NoScoringLLM(_reply_by_relation)).infer(CONTEXT)
    assert not reasoning.scored and all(c.tau is None for c in reasoning.candidates)
    assert any("cannot score" in n for n in reasoning.notes)
    assert len(reasoning.selected) == 3


def test_reasoner_empty_context_and_cleaning():
    assert _reasoner(ScriptedLLM()).infer(["", "  "]).candidates == ()
    assert clean_completion('"Happy."\nmore', "x") == "Happy"
    assert clean_completion("He is tired, as a result, the speaker feels sleepy", "He is tired, as a result, the speaker feels") == "sleepy"


def _pieces(*pairs):
    return tuple(TokenLogprob(piece.encode(), lp) for piece, lp in pairs)


def test_generated_logprob_reads_the_tokens_that_spell_the_inference():
    tokens = _pieces((" happy", -0.5), (" dog", -1.0), (".", -2.0))
    assert generated_logprob(tokens, "happy dog") == (-1.5, 2)  # the full stop after it is not counted
    assert generated_logprob(tokens, "happy") == (-0.5, 1)
    assert generated_logprob(tokens, "happy do") is None  # the cut falls inside a token
    assert generated_logprob(tokens, "dog") is None  # not what the model wrote first (an echo was cut)
    assert generated_logprob(None, "happy") is None and generated_logprob(tokens, "") is None
    assert generated_logprob(_pieces(("caf", -0.1), ("\u00e9", -0.2)), "caf\u00e9") == pytest.approx((-0.3, 2))


class LogprobLLM(ScriptedLLM):
    """Reports token log-probabilities with each completion (a token per word or mark, -0.25 each), as
    llama.cpp does; records what it is asked to score."""

    def __init__(self, reply):
        super().__init__(reply, scorer=lambda m, c: -9.0)
        self.scored: list[str] = []

    reports_logprobs = True

    def _complete(self, batch, temperature, max_tokens, stop, logprobs=False):
        out = []
        for c in super()._complete(batch, temperature, max_tokens, stop):
            pieces = tuple(TokenLogprob(w.encode(), -0.25) for w in re.findall(r" ?\w+| ?[^\w\s]", c.text))
            out.append(Completion(c.text, c.model, 0.0, token_logprobs=pieces if logprobs else None))
        return out

    def _score(self, messages, candidates):
        self.scored += list(candidates)
        return super()._score(messages, candidates)


def test_reasoner_reads_tau_from_the_generation_and_scores_only_what_it_cannot():
    def reply(messages):
        text = messages[-1].content
        if "as a result, the speaker feels ..." in text:  # echoes the statement: its tail is scored
            return "as a result, the speaker feels happy."
        return _reply_by_relation(messages) + "."

    llm = LogprobLLM(reply)
    exact = Reasoner(llm, HashingEmbedder(128), ReasonerSettings(cache=False, rescore_echoes=True))
    by_rel = {c.relation: c for c in exact.infer(CONTEXT).candidates}
    assert by_rel["xWant"].text == "to play with cats" and by_rel["xWant"].tau == pytest.approx(-0.25)
    assert by_rel["xWant"].tokens == 4  # the generated tokens that spell it, not the full stop
    assert by_rel["xReact"].text == "happy" and by_rel["xReact"].tau == pytest.approx(-9.0)
    assert llm.scored == ["happy"]  # one scoring request instead of ten
    # the default reads the echoed one's tail from the generation too: no scoring pass at all
    fast = LogprobLLM(reply)
    by_rel = {c.relation: c for c in _reasoner(fast).infer(CONTEXT).candidates}
    assert by_rel["xReact"].text == "happy" and by_rel["xReact"].tau == pytest.approx(-0.25) and by_rel["xReact"].tokens == 1
    assert fast.scored == []


def test_generated_logprob_after_an_echo():
    echo = _pieces(("as", -0.1), (" a", -0.1), (" result", -0.1), (",", -0.1), (" feels", -0.1), (" very", -0.2),
                   (" happy", -0.3), (".", -1.0))
    assert generated_logprob(echo, "very happy") is None  # not the start: exact tau needs a scoring pass
    assert generated_logprob(echo, "very happy", after_echo=True) == pytest.approx((-0.5, 2))
    assert generated_logprob(echo, "ery happy", after_echo=True) is None  # starts inside a token
    assert generated_logprob(echo, "sad", after_echo=True) is None


def test_reasoner_cache_serves_repeats(tmp_path):
    llm = ScriptedLLM(_reply_by_relation, scorer=_scorer)
    r = Reasoner(llm, HashingEmbedder(128), ReasonerSettings(), cache_dir=tmp_path)
    first = r.infer(CONTEXT)
    calls = llm.calls
    second = r.infer(CONTEXT)
    assert llm.calls == calls and second.candidates == first.candidates


def test_reasoner_cache_keeps_the_generated_logprobs(tmp_path):
    llm = LogprobLLM(lambda m: _reply_by_relation(m) + ".")
    first = Reasoner(llm, HashingEmbedder(128), ReasonerSettings(), cache_dir=tmp_path).infer(CONTEXT)
    again = Reasoner(LogprobLLM(lambda m: "never asked"), HashingEmbedder(128), ReasonerSettings(), cache_dir=tmp_path)
    second = again.infer(CONTEXT)
    assert second.candidates == first.candidates and again.llm.calls == 0


# -- the search ----------------------------------------------------------------------------------
def _search(kb, **changes):
    config = replace(MCTSConfig(), **changes)
    return KnowledgeSearch(kb, HashingEmbedder(128), config)


def test_two_phase_search_returns_k_distinct_sentences_with_critic_values(kb):
    reasoning = _reasoner(ScriptedLLM(_reply_by_relation, scorer=_scorer)).infer(CONTEXT)
    result = _search(kb).run(CONTEXT, reasoning, k=5)
    assert len(result.knowledge) == 5 and len({e.source for e in result.knowledge}) == 5
    assert "dog" in result.context_concepts and "park" in result.context_concepts
    assert 0 < result.subregion <= len(kb)
    names = [t.name for t in result.trees]
    assert names == ["bridge", "r1", "r2", "r3"]
    for tree in result.trees:
        assert tree.root.visits == tree.simulations <= MCTSConfig().search.simulations
        assert all(n.depth <= 3 for n in tree.nodes())
    # every retrieval-phase evidence score is eq. 4 recomputed from the KB
    emb = HashingEmbedder(128)
    for e in result.knowledge:
        tree = next(t for t in result.trees if t.name == e.meta["tree"])
        node = next(n for n in tree.nodes() if n.id == e.meta["node"])
        v = kb.vectors[node.sentence]
        outcome = tree.meta["outcome"]
        e_r = emb.encode([outcome.sentence])[0]
        e_c = emb.encode(["\n".join(without_speaker(t) for t in CONTEXT)])[0]  # the context's words, not its tags
        assert e.meta["inference"] == outcome.sentence
        assert e.score == pytest.approx(retrieval_value(float(v @ e_r), float(v @ e_c), length_term(e.text),
                                                        node.info["sim_prev"]), abs=1e-5)
    # bridging nodes carry their critic's parts: value = rate - 1000 * wd
    for node in result.trees[0].visited()[1:]:
        assert node.value == pytest.approx(node.info["rate"] - 1000 * node.info["wd"], abs=1e-3)


def test_speaker_tags_do_not_steer_the_search(kb):
    """'Speaker:' / 'Listener:' (EmpatheticDialogues) or 'A:' are layout: the same words with other
    tags retrieve the same knowledge."""
    plain = [line.split(": ", 1)[1] for line in CONTEXT]
    tagged = [f"{who}: {text}" for who, text in zip(("Speaker", "Listener"), plain)]
    ids = lambda turns: [e.source for e in _search(kb).run(turns, None, k=5).knowledge]
    assert ids(tagged) == ids(plain) == ids(CONTEXT)
    assert "speaker" not in _search(kb).run(tagged, None, k=5).context_concepts


def test_ablations_change_the_search(kb):
    no_bridge = _search(kb, use_bridging=False).run(CONTEXT, None, k=5)
    assert [t.name for t in no_bridge.trees] == ["r1"] and no_bridge.subregion == 0
    assert len(no_bridge.knowledge) == 5
    no_reasoner = _search(kb, use_reasoner=False).run(CONTEXT, None, k=5)
    assert [t.name for t in no_reasoner.trees] == ["bridge", "r1"]
    assert no_reasoner.trees[1].label == "context (no reasoner)"


def test_bad_contexts_give_notes_not_crashes(kb):
    search = _search(kb, use_reasoner=False)
    empty = search.run([], None)
    assert empty.knowledge == () and "empty context" in empty.notes[0]
    unknown = search.run(["Hmm, okay then."], None)
    assert any("no concept of the context" in n for n in unknown.notes)
    assert len(unknown.knowledge) == 5


def test_search_keeps_its_time_budget(kb):
    import time

    config = replace(MCTSConfig(use_reasoner=False), search=SearchSettings(simulations=10_000, max_seconds=0.3))
    search = KnowledgeSearch(kb, HashingEmbedder(128), config)
    t0 = time.perf_counter()
    result = search.run(CONTEXT, None)
    assert time.perf_counter() - t0 < 1.5
    # How it stopped depends on the machine's speed (budget, or all simulations done); that it says so does not.
    assert all(t.stop_reason for t in result.trees)


def test_trace_is_data_with_chosen_paths(kb):
    result = _search(kb, use_reasoner=False).run(CONTEXT, None)
    trace = result_trace(result, kb)
    assert trace.kind == "mcts" and trace.nodes[0].id == "context"
    ids = {n.id for n in trace.nodes}
    assert all(n.parent is None or n.parent in ids for n in trace.nodes)
    assert any(n.chosen and n.depth >= 2 for n in trace.nodes)
    from core.dialogue import Trace

    assert Trace.from_dict(trace.to_dict()) == trace  # JSON-able round trip


# -- memory retriever ------------------------------------------------------------------------------
def test_memory_retriever_returns_k_chunks_with_turn_ids():
    from core.methods.mcts.memory import MCTSMemoryRetriever

    turns = [Turn(USER, "I adopted a dog last week. He loves the park.", "D1:1", 1, "Ann"),
             Turn(ASSISTANT, "Nice! What breed is your dog?", "D1:2", 1, "Bob"),
             Turn(USER, "A beagle. My sister has two cats.", "D1:3", 1, "Ann"),
             Turn(ASSISTANT, "Cats and dogs can be friends.", "D1:4", 1, "Bob"),
             Turn(USER, "We went to Paris in May for my birthday.", "D2:1", 2, "Ann")]
    r = MCTSMemoryRetriever(HashingEmbedder(128), "turn")
    r.index(Dialogue.from_turns(turns))
    found = r.retrieve("What pet does Ann have?", 3)
    assert len(found) == 3 and len({e.source for e in found}) == 3
    assert all(e.meta["turn_ids"] and e.meta["via"] in ("mcts", "dense fill") for e in found)
    assert found[0].meta["via"] == "mcts"
    assert r.retrieve("", 3) == []
    r.index(Dialogue())
    assert r.retrieve("dog", 3) == []


def test_memory_retriever_is_registered():
    from core.methods.retrievers import make_retriever
    from core.retrieval import RetrieverContext

    r = make_retriever("mcts-s", RetrieverContext(HashingEmbedder(64)))
    assert r.name == "mcts-s" and r.level == "session"
    with pytest.raises(ValueError):
        make_retriever("mcts-tf", RetrieverContext(HashingEmbedder(64)))


# -- the chat method -------------------------------------------------------------------------------
def test_mcts_method_answers_with_knowledge_and_tree(tmp_path):
    from core.methods.mcts.config import KBSettings

    path = write_kb(tmp_path)
    config = MCTSConfig(kb=KBSettings(path=str(path), concepts_per_group=4, cache_dir=str(tmp_path / "c")),
                        reasoner=ReasonerSettings(cache=False))

    def reply(messages):
        return "Dogs love parks, and a leash helps." if any("Knowledge:" in m.content for m in messages) else _reply_by_relation(messages)

    llm = ScriptedLLM(reply, scorer=_scorer)
    method = create_method("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config)
    dialogue = Dialogue.from_turns([Turn(USER, "My dog wants to run in the park."), Turn(ASSISTANT, "Fun!")])
    out = method.respond(dialogue, "Does he like other animals?")
    assert out.text == "Dogs love parks, and a leash helps."
    assert len(out.evidence) == 5 and all(e.kind == "knowledge" for e in out.evidence)
    assert out.trace.kind == "mcts" and out.trace.prompt[0]["role"] == "system"
    assert all(e.text in out.trace.prompt[-2]["content"] for e in out.evidence)  # after the conversation (core.methods.layout)
    assert "Keep your replies short: at most 2 sentences." in out.trace.prompt[0]["content"]
    assert {"reason", "search", "generate"} <= set(out.timings)
    root = out.trace.nodes[0].detail
    assert root["reasoning"]["candidates"] and "COMET" in root["comet_note"]
    assert method.retrieve(dialogue, "Does he like other animals?", 2)[0].kind == "knowledge"


# -- dialogue loaders ------------------------------------------------------------------------------
def test_chitchat_loaders(tmp_path):
    from core.data.chitchat import DialogueFormatError, load_chitchat

    dd = tmp_path / "dd.txt"
    dd.write_text("The taxi drivers are on strike again . __eou__ What for ? __eou__ Isn ’ t it odd ? __eou__\n")
    d = load_chitchat(dd)[0]
    assert d.utterances == ("The taxi drivers are on strike again.", "What for?", "Isn't it odd?")
    assert d.lines(2) == ["A: The taxi drivers are on strike again.", "B: What for?"]
    ed = tmp_path / "ed.jsonl"
    ed.write_text('{"conv_id": "c1", "emotion": "sad", "situation": "s", "turns": [{"utterance_idx": 2, "speaker_idx": 1, '
                  '"utterance": "Oh no."}, {"utterance_idx": 1, "speaker_idx": 0, "utterance": "My cat is ill."}]}\n')
    e = load_chitchat(ed)[0]
    assert e.utterances == ("My cat is ill.", "Oh no.") and e.speakers == ("Speaker", "Listener")
    assert e.meta["emotion"] == "sad" and len(e.dialogue()) == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    with pytest.raises(DialogueFormatError):
        load_chitchat(bad)


def test_kb_vectors_view_matches_index(kb):
    assert kb.vectors.shape == (len(kb), kb.dim)
    assert np.allclose(kb.vectors[3], kb.index.reconstruct(3))


def test_mcts_memory_retrievers_run_in_the_locomo_benchmark(tmp_path):
    from tests.test_data_loaders import tiny_locomo
    from tests.test_sgmem_method import bench

    summary, items = bench(tmp_path, "locomo-retrieval", tiny_locomo(tmp_path), ["mcts-t", "mcts-s"], ks="1,5")
    assert set(summary["results"]) == {"mcts-t", "mcts-s"}
    assert summary["results"]["mcts-s"]["recall@5"] == 1.0  # both sessions fit in K = 5
    assert summary["settings"]["retrievers"]["mcts-t"]["horizon"] == 3
    assert items[0]["methods"]["mcts-t"]["chunks"]


def test_paired_differences_by_hand():
    from core.benchmarks.knowledge_retrieval import paired_differences

    def per(f1s, rls, best):
        return {"semantic": [None if f is None else {"p": f, "r": f, "f1": f} for f in f1s],
                "rouge": [None if r is None else {"rouge1": r, "rouge2": r, "rougeL": r} for r in rls], "best": best}

    table = {"mcts": per([0.5, 0.4, None], [0.1, 0.3, 0.2], [0.9, 0.2, 0.6]),
             "dense": per([0.6, 0.6, 0.7], [0.2, 0.2, 0.2], [0.1, 0.7, 0.8])}
    cell = paired_differences(table, resamples=200)["mcts - dense"]
    assert cell["semantic_overlap_f1"]["n"] == 2  # the third context has no mcts value
    assert cell["semantic_overlap_f1"]["diff"] == pytest.approx(100 * ((0.5 - 0.6) + (0.4 - 0.6)) / 2)
    assert cell["rougel_overlap"]["diff"] == pytest.approx(100 * (-0.1 + 0.1 + 0.0) / 3)
    assert cell["alignment@0.5"]["diff"] == pytest.approx(100 * (1 - 0 + 0 - 1 + 1 - 1) / 3)  # 1/0 above 0.5
    assert cell["semantic_overlap_f1"]["low"] <= cell["semantic_overlap_f1"]["diff"] <= cell["semantic_overlap_f1"]["high"]


def test_reasoner_budget_drops_the_relations_it_had_no_time_for():
    """Relations go out in rounds; once the budget is spent no further round is sent, the
    relations left are dropped and the trace says how many."""
    import time

    from core.llm.fake import ScriptedLLM
    from core.methods.mcts.config import ReasonerSettings
    from core.methods.mcts.reasoner import Reasoner
    from core.resources import HashingEmbedder

    class Slow(ScriptedLLM):
        generated = 0

        def _complete(self, batch, temperature, max_tokens, stop):
            time.sleep(0.1)
            self.generated += len(batch)
            return super()._complete(batch, temperature, max_tokens, stop)

    llm = Slow(lambda m: "they feel happy", scorer=lambda m, c: -1.0)
    reasoner = Reasoner(llm, HashingEmbedder(64), ReasonerSettings(cache=False, budget_s=0.25, round_size=2))
    reasoning = reasoner.infer(["A: My dog runs in the park every day."])
    sent = llm.generated
    assert 2 <= sent < 11 and sent % 2 == 0  # whole rounds, far fewer than the 11 relations
    assert any("not generated within the reasoner's 0.25 s budget" in n for n in reasoning.notes)
    assert len(reasoning.candidates) == sent


def test_reasoner_cuts_long_context_turns_but_not_the_last_event():
    """A chat's earlier replies run to 100-200 words; every relation's request would pay for them."""
    from core.methods.mcts.reasoner import last_words

    long_reply = "Assistant: " + " ".join(f"w{i}" for i in range(100))
    assert last_words(long_reply, 5) == "Assistant: ... w95 w96 w97 w98 w99"
    assert last_words("no speaker " * 10, 3) == "... speaker no speaker"
    assert last_words(long_reply, 0) == long_reply and last_words("A: short", 5) == "A: short"
    llm = ScriptedLLM(_reply_by_relation, scorer=_scorer)
    event = "User: " + " ".join(["my dog runs"] * 20)
    reasoner = Reasoner(llm, HashingEmbedder(64), ReasonerSettings(cache=False, turn_words=5))
    user = reasoner.prompts(["User: hi", long_reply, event])[0][3][-1].content
    assert "Assistant: ... w95 w96 w97 w98 w99" in user and "w94" not in user
    assert event.split(":", 1)[1].strip() in user  # the event itself is whole


def test_reasoner_sends_its_relations_one_at_a_time_by_default():
    """One request per round keeps the relations on one server slot, whose KV cache holds the
    shared conversation prefix."""
    class Counting(ScriptedLLM):
        rounds: list = []

        def _complete(self, batch, temperature, max_tokens, stop):
            self.rounds.append(len(batch))
            return super()._complete(batch, temperature, max_tokens, stop)

    llm = Counting(_reply_by_relation, scorer=_scorer)
    Reasoner(llm, HashingEmbedder(64), ReasonerSettings(cache=False)).infer(CONTEXT)
    assert llm.rounds == [1] * len(RELATIONS)
    llm.rounds = []
    Reasoner(llm, HashingEmbedder(64), ReasonerSettings(cache=False, round_size=4)).infer(CONTEXT)
    assert llm.rounds == [4, 4, 3]


def test_reply_length_line_can_be_turned_off(tmp_path):
    from core.methods.mcts.config import KBSettings

    path = write_kb(tmp_path)
    config = MCTSConfig(kb=KBSettings(path=str(path), concepts_per_group=4, cache_dir=str(tmp_path / "c")),
                        reasoner=ReasonerSettings(cache=False), generation=GenerationSettings(reply_sentences=0))
    llm = ScriptedLLM(lambda m: "Fine." if "Knowledge:" in m[0].content else _reply_by_relation(m), scorer=_scorer)
    out = create_method("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config).respond(
        Dialogue.from_turns([Turn(USER, "My dog runs.")]), "Is that good?")
    assert "sentences" not in out.trace.prompt[0]["content"]
