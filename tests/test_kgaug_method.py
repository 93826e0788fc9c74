"""The kgaug / kgaug-c chat methods with a scripted LLM on a hand-built graph: the Table 6 prompts,
evidence and trace, the symbolic and LLM rewrites, and a query with no linkable entity."""

from __future__ import annotations

import pytest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method, method_class
from core.methods.kgaug.config import KGAugConfig
from core.methods.kgaug.linking import LinkerSettings
from core.methods.kgaug.pipeline import NO_ENTITY, build_knowledge
from core.methods.kgaug.rewrite import LLMRewriter, parse_rewrite
from tests.kgaug_helpers import small_graph

PAPER_REWRITE = """Chain of Thought: "it" refers to Find Me Guilty, the film just mentioned.
Resolved Dialogue:
Speaker A: Do you like Sidney Lumet films?
Speaker B: Yes, Sidney Lumet directed Find Me Guilty.
Speaker A: Who starred in Find Me Guilty?"""


@pytest.fixture(scope="module")
def knowledge():
    return build_knowledge(small_graph(), LinkerSettings(use_spacy=False))


def make(name, knowledge, replies=("A reply.",), strong=False, **config):
    llm = ScriptedLLM(list(replies))
    method = create_method(name, Toolkit(llm=llm, strong=strong),
                           KGAugConfig(ranker="bm25", rewrite=method_class(name).rewrite_default, **config))
    method.knowledge = knowledge  # the hand-built graph instead of the shared OpenDialKG files
    return method, llm


def chat():
    return Dialogue.from_turns([Turn(USER, "Do you like Sidney Lumet films?"),
                                Turn(ASSISTANT, "Yes, Sidney Lumet directed Find Me Guilty.")])


def test_kgaug_puts_the_top_triples_in_the_table6_prompt(knowledge):
    method, llm = make("kgaug", knowledge, top_k=2)
    reply = method.respond(chat(), "Which films were directed by Sidney Lumet?")
    assert reply.text == "A reply." and reply.method == "kgaug" and reply.llm_calls == 1
    assert [e.kind for e in reply.evidence] == ["triple", "triple"]
    assert {e.meta["relation"] for e in reply.evidence} == {"directed_by"}
    prompt = llm.requests[-1][-1].content
    assert prompt.startswith("Knowledge: (Find Me Guilty, directed_by, Sidney Lumet)\n(12 Angry Men, directed_by, Sidney Lumet)")
    assert "Dialogue: Speaker A: Do you like Sidney Lumet films?\nSpeaker B: Yes, Sidney Lumet directed" in prompt
    assert prompt.rstrip().endswith("Input: Which films were directed by Sidney Lumet?\nResponse:")
    stages = {n.id: n for n in reply.trace.nodes}
    assert reply.trace.kind == "kg" and set(stages) == {"link", "candidates", "rank"}
    assert stages["link"].detail["entities"][0]["name"] == "Sidney Lumet"
    assert stages["candidates"].detail["count"] >= 3 and stages["rank"].detail["note"] == ""
    assert {"link", "candidates", "rank", "generate"} <= set(reply.timings)


def test_no_linkable_entity_answers_without_triples_and_says_so(knowledge):
    method, llm = make("kgaug", knowledge)
    reply = method.respond(Dialogue(), "what a lovely day it is")
    assert reply.evidence == ()
    assert "Knowledge: (no knowledge found)" in llm.requests[-1][-1].content
    assert reply.trace.nodes[-1].detail["note"] == NO_ENTITY


def test_kgaug_c_symbolic_rewrite_with_a_weak_model(knowledge):
    method, llm = make("kgaug-c", knowledge)
    assert method.rewrite_mode() == "symbolic"
    reply = method.respond(chat(), "Who starred in it?")
    rewrite = reply.trace.nodes[0]
    assert rewrite.id == "rewrite" and rewrite.detail["method"] == "symbolic"
    assert rewrite.detail["rewritten"] == "Who starred in Find Me Guilty?"
    assert reply.evidence[0].meta["triple_key"] == "Find Me Guilty\tstarred_actors\tVin Diesel"
    assert "Input: Who starred in Find Me Guilty?" in llm.requests[-1][-1].content
    # person pronouns take the last person, possessives keep their 's
    rw = knowledge.symbolic_rewriter().rewrite(["Do you like Sidney Lumet?"], "What is his best film? Did he write it?")
    assert rw.query == "What is Sidney Lumet's best film? Did Sidney Lumet write it?"  # no work mentioned: "it" stays
    assert knowledge.symbolic_rewriter().rewrite([], "Is It by Stephen King?").query == "Is It by Stephen King?"


def test_kgaug_c_llm_rewrite_with_a_strong_model(knowledge):
    method, llm = make("kgaug-c", knowledge, replies=[PAPER_REWRITE, "Vin Diesel."], strong=True)
    assert method.rewrite_mode() == "llm"
    reply = method.respond(chat(), "Who starred in it?")
    assert "resolving all pronouns and references" in llm.requests[0][-1].content
    assert llm.requests[0][-1].content.rstrip().endswith("Speaker A: Who starred in it?")
    rewrite = reply.trace.nodes[0].detail
    assert rewrite["method"] == "llm" and rewrite["rewritten"] == "Who starred in Find Me Guilty?"
    assert rewrite["reasoning"].startswith('"it" refers to Find Me Guilty')
    generation = llm.requests[1][-1].content
    assert "Speaker B: Yes, Sidney Lumet directed Find Me Guilty." in generation  # the rewritten context (c')
    assert reply.evidence[0].meta["tail"] == "Vin Diesel"


def test_unreadable_llm_rewrite_falls_back_to_symbolic(knowledge):
    rewriter = LLMRewriter(ScriptedLLM(["I think it means the movie."]), knowledge.symbolic_rewriter())
    result = rewriter.rewrite([("user", "Do you like Sidney Lumet films?"), ("assistant", "I like Find Me Guilty.")],
                              "Who starred in it?")
    assert result.method == "llm->symbolic" and result.query == "Who starred in Find Me Guilty?"
    assert parse_rewrite("Resolved Dialogue:\nSpeaker B: only the assistant", 0) is None
    reasoning, context, query = parse_rewrite(PAPER_REWRITE, 2)
    assert query == "Who starred in Find Me Guilty?" and len(context) == 2


def test_retrieve_returns_triple_evidence(knowledge):
    method, _ = make("kgaug", knowledge)
    found = method.retrieve(Dialogue(), "Tell me about Vin Diesel", 3)
    assert [e.meta["rank"] for e in found] == [1, 2, 3] and all(e.kind == "triple" for e in found)
    # two one-hop triples (fewer than 20, so a second hop was walked); BM25 puts them first
    assert [e.meta["hop"] for e in found] == [1, 1, 2] and all("Vin Diesel" in e.text for e in found[:2])
