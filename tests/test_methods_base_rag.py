"""The shared method protocol on `base` and `rag`, with a scripted LLM and a hashing embedder."""

from __future__ import annotations

import pytest

from core.config import RAGConfig
from core.dialogue import Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import METHODS, Toolkit, create_method


def _dialogue() -> Dialogue:
    return Dialogue.from_turns([
        Turn("user", "My dog is called Rex."),
        Turn("assistant", "Rex is a lovely name."),
        Turn("user", "I work as a nurse in Lyon."),
        Turn("assistant", "Nursing is demanding work."),
        Turn("user", "I like green tea."),
        Turn("assistant", "Green tea is healthy."),
    ])


def test_registry_lists_methods_and_rejects_unknown(hashing_embedder):
    assert {"base", "rag"} <= set(METHODS)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        create_method("nope", Toolkit(ScriptedLLM()))


def test_base_answers_from_history():
    llm = ScriptedLLM(["It is Rex."])
    reply = create_method("base", Toolkit(llm)).respond(_dialogue(), "What is my dog called?")
    assert reply.text == "It is Rex." and reply.method == "base" and reply.llm_calls == 1
    sent = llm.requests[0]
    assert sent[0].role == "system" and sent[-1].content == "What is my dog called?"
    assert [m.content for m in sent[1:-1]][0] == "My dog is called Rex."
    assert reply.trace.kind == "prompt" and reply.trace.prompt[-1]["content"] == "What is my dog called?"
    assert "generate" in reply.timings


def test_base_drops_oldest_history_beyond_budget():
    from core.config import BaseConfig, GenerationSettings

    llm = ScriptedLLM(["ok"])
    method = create_method("base", Toolkit(llm), BaseConfig(GenerationSettings(max_history_chars=40)))
    method.respond(_dialogue(), "q")
    contents = [m.content for m in llm.requests[0][1:-1]]
    assert contents[-1] == "Green tea is healthy." and "My dog is called Rex." not in contents


def test_rag_retrieves_the_relevant_turn(hashing_embedder):
    method = create_method("rag", Toolkit(ScriptedLLM(["Rex."]), hashing_embedder))
    evidence = method.retrieve(_dialogue(), "what is my dog called", k=2)
    assert evidence[0].source == "S0:0" and "Rex" in evidence[0].text
    assert evidence[0].score >= evidence[1].score
    assert method.observed == 6


def test_rag_prompt_is_system_window_memory_then_message(hashing_embedder):
    """core.methods.layout: the stable system message, the conversation window, then the memory of
    turns the window no longer shows, then the message (what changes comes last, for the cache)."""
    from core.config import GenerationSettings

    llm = ScriptedLLM(["Rex."])
    method = create_method("rag", Toolkit(llm, hashing_embedder), RAGConfig(top_k=1, generation=GenerationSettings(max_history_chars=40)))
    reply = method.respond(_dialogue(), "what is my dog called")
    sent = llm.requests[0]
    assert [m.role for m in sent] == ["system", "user", "assistant", "system", "user"]
    assert [m.content for m in sent[1:3]] == ["I like green tea.", "Green tea is healthy."]
    assert "- Your dog is called Rex." in sent[3].content  # the user's turn said back to the user (core.methods.render)
    assert sent[-1].content == "what is my dog called" and "Rex" not in sent[0].content
    assert [e.source for e in reply.evidence] == ["S0:0"]
    assert set(reply.timings) == {"retrieve", "build_prompt", "generate"}


def test_rag_shows_no_memory_of_turns_the_window_shows(hashing_embedder):
    llm = ScriptedLLM(["ok"])
    reply = create_method("rag", Toolkit(llm, hashing_embedder), RAGConfig(top_k=10)).respond(_dialogue(), "green tea")
    assert reply.evidence == () and [m.role for m in llm.requests[0]].count("system") == 1
    method = create_method("rag", Toolkit(ScriptedLLM(), hashing_embedder))
    assert all(e.source not in {"S0:4", "S0:5"} for e in method.retrieve(_dialogue(), "green tea", 10, exclude_last=2))


def test_sync_observes_only_new_turns(hashing_embedder):
    method = create_method("rag", Toolkit(ScriptedLLM(), hashing_embedder))
    d = _dialogue()
    method.sync(d)
    d.add(Turn("user", "My cat is Tom."))
    method.sync(d)
    assert method.observed == 7 and len(method.index) == 7


def test_rag_shows_turns_time_anchored_unless_turned_off(hashing_embedder):
    from dataclasses import replace

    dialogue = Dialogue.from_turns([Turn("user", "I adopted a cat yesterday.", date="8 May, 2023"),
                                    Turn("assistant", "Congratulations!", date="8 May, 2023")])
    for anchor, shown in ((True, "User: I adopted a cat yesterday (7 May 2023)."), (False, "User: I adopted a cat yesterday.")):
        method = create_method("rag", Toolkit(ScriptedLLM(["ok"]), hashing_embedder))
        # a window of 10 characters shows the newest turn alone: the user's turn is memory
        method.config = replace(method.config, anchor_time=anchor, generation=replace(method.config.generation, max_history_chars=10))
        assert method.retrieve(dialogue, "when did I adopt a cat", k=1)[0].text == shown
        method.respond(dialogue, "when did I adopt a cat")
        said = "- You adopted a cat yesterday (7 May 2023)." if anchor else "- You adopted a cat yesterday."
        assert said + "\n" in method.tools.llm.requests[0][-2].content + "\n"  # the prompt follows the flag too
