"""core.methods.layout: the prompt every chat method shares, laid out for the prompt cache."""

from __future__ import annotations

import pytest

from core.dialogue import Dialogue, Evidence, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.layout import (asks_what_was_told, conversation_window, in_order_said, layout_prompt, memory_message,
                                 outside_window, window_start)


def turns(*sizes: int) -> list[Turn]:
    return [Turn("user" if i % 2 == 0 else "assistant", "x" * n, f"S0:{i}") for i, n in enumerate(sizes)]


def test_window_start_by_hand():
    # budget 100, half 50: starts at 0, then where the text since the last start passes 50:
    # sizes 30 30 | 30 30 | 30 -> starts 0, 1 (30+30>50), 2 (30+30>50), 3, 4
    assert window_start(turns(30, 30, 30), 100) == 0  # 90 fits
    assert window_start(turns(30, 30, 30, 30), 100) == 1  # 120 does not; from turn 1: 90
    assert window_start(turns(), 100) == 0
    assert window_start(turns(500), 100) == 0  # the newest turn is always shown
    assert window_start(turns(10, 500), 100) == 1


def test_the_window_moves_in_steps_so_the_prompt_start_stays_for_several_turns():
    sizes = [40] * 30  # budget 400: a sliding window would move every turn
    starts = [window_start(turns(*sizes[:n]), 400) for n in range(1, 31)]
    moves = sum(1 for a, b in zip(starts, starts[1:]) if a != b)
    assert moves <= 30 // 4  # about every half budget (5 turns of 40), not every turn
    assert starts == sorted(starts)  # never back
    for n, start in zip(range(1, 31), starts):
        assert sum(sizes[start:n]) <= 400


def test_a_prompt_is_a_prefix_of_the_next_one_until_the_window_moves():
    d = Dialogue()
    prompts = []
    for i in range(6):
        query = f"message {i}"
        prompts.append(layout_prompt("SYSTEM", d.turns(), query, 6000, memory_message(f"- note {i}")))
        d.add(Turn("user", query))
        d.add(Turn("assistant", f"reply {i}"))
    for before, after in zip(prompts, prompts[1:]):
        shared = before[:-2]  # the memory and the message change; the rest is kept
        assert after[:len(shared)] == shared
        assert [m.content for m in after[len(shared):len(shared) + 2]] == [before[-1].content, after[len(shared) + 1].content]
    assert [m.role for m in prompts[-1][-2:]] == ["system", "user"]


def test_no_memory_message_without_notes():
    assert memory_message("") is None and memory_message("(nothing yet)") is None
    prompt = layout_prompt("S", turns(5, 5), "q", 100)
    assert [m.role for m in prompt] == ["system", "user", "assistant", "user"]
    note = memory_message("- You live in Porto.", header="Facts:")
    assert note.role == "system" and note.content == "Facts:\n- You live in Porto."


def test_outside_window_keeps_what_the_window_does_not_show():
    shown = {"S0:2", "S0:3"}
    items = [Evidence("a", 1.0, "S0:2", "turn"), Evidence("b", 0.9, "S0:0", "turn"),
             Evidence("c", 0.8, "r1", "round", meta={"turn_ids": ["S0:2", "S0:3"]}),
             Evidence("d", 0.7, "r0", "round", meta={"turn_ids": ["S0:1", "S0:2"]}),
             Evidence("e", 0.6, "", "fact")]
    assert [e.text for e in outside_window(items, shown)] == ["b", "d", "e"]


@pytest.mark.parametrize("name", ["base", "rag", "sgmem", "sgmem-h", "dsm", "dsmart"])
def test_every_chat_method_keeps_the_system_message_and_the_turns_first(name, hashing_embedder):
    """Between two replies of one conversation, each method's prompt starts with the previous
    prompt's system message and turns: what the server's cache holds is reused."""
    llm = ScriptedLLM(lambda messages: "Nice.")
    method, d = create_method(name, Toolkit(llm=llm, embedder=hashing_embedder)), Dialogue()
    prompts = []
    for text in ("Hi, I'm Ana and I teach chemistry in Porto.", "My brother Rui repairs bikes.", "What does Rui do?"):
        method.sync(d)
        method.wait()
        prompts.append(list(method.respond(d, text).trace.prompt))
        for turn in (d.add(Turn("user", text)), d.add(Turn("assistant", "Nice."))):
            method.observe(turn)
    system = prompts[0][0]
    for before, after in zip(prompts, prompts[1:]):
        assert after[0] == system
        turns_before = [m for m in before[1:] if m["role"] != "system"][:-1]
        turns_after = [m for m in after[1:] if m["role"] != "system"]
        assert turns_after[:len(turns_before)] == turns_before
    assert conversation_window(d.turns(), 6000) == d.turns()


def test_in_order_said_puts_the_turns_in_the_order_said_and_leaves_the_rest_in_place():
    said = turns(5, 5, 5, 5, 5)
    items = [Evidence("late", 1.0, "S0:4", "turn"), Evidence("fact", 0.9, "", "fact"),
             Evidence("early", 0.8, "S0:0", "turn"), Evidence("round", 0.7, "r", "round", meta={"turn_ids": ["S0:2", "S0:3"]}),
             Evidence("gone", 0.6, "S9:9", "turn")]  # a turn no longer in the dialogue keeps its place
    assert [e.text for e in in_order_said(items, said)] == ["early", "fact", "round", "late", "gone"]
    assert in_order_said([], said) == []


def test_a_question_about_what_was_told_is_shown_its_memory_whole():
    said = [Turn("user", "I live in Delft.", "S0:0"), Turn("assistant", "Nice.", "S0:1"),
            Turn("user", "I moved to Voorhof last week.", "S0:2"), Turn("assistant", "Good luck.", "S0:3")]
    assert asks_what_was_told(said, "Where do I live now?")
    assert not asks_what_was_told(said, "The weather is lovely today.")
    assert not asks_what_was_told(said, "What should I cook tonight?")  # advice, no fact


@pytest.mark.parametrize("name", ["rag", "sgmem-h", "dsm", "dsmart"])
def test_a_memory_method_shows_a_told_question_the_turns_its_window_holds(name, hashing_embedder):
    """The window holds every turn here: a statement gets no memory message, a question about what
    the user told gets the turn that answers it again, last before the question."""
    llm = ScriptedLLM(lambda messages: "Nice.")
    method, d = create_method(name, Toolkit(llm=llm, embedder=hashing_embedder)), Dialogue()
    for text in ("Hi, I'm Ana and I teach chemistry in Porto.", "My brother Rui repairs bikes in Braga."):
        method.sync(d)
        method.wait()
        method.respond(d, text)
        for turn in (d.add(Turn("user", text)), d.add(Turn("assistant", "Nice."))):
            method.observe(turn)
    method.sync(d)
    method.wait()
    statement = list(method.respond(d, "It rained all day here.").trace.prompt)
    question = list(method.respond(d, "What does my brother Rui do?").trace.prompt)
    told = "repair" if name not in ("dsm", "dsmart") else "Porto"  # D-SMART's lines: the facts its graph kept, ranked
    assert statement[-2]["role"] == "assistant" and told not in statement[-1]["content"]  # no memory shown
    prefix = statement[:-1]  # the window is the same prompt prefix: the cache holds it
    assert question[:len(prefix)] == prefix
    assert told in " ".join(m["content"] for m in question[len(prefix):])  # a memory message, or D-SMART's facts in the question
