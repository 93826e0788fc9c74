"""The slot chooser (core/llm/slot_choice.py) on hand-made request sequences: a conversation keeps
its slot when its window is cut at the start, other work goes elsewhere, busy slots are avoided."""

from __future__ import annotations

import threading

import pytest

from core.llm.slot_choice import SlotChooser, SlotContent, shared_chars

SYSTEM = ("system", "You are a friendly assistant.")


def turn(i: int) -> list[tuple[str, str]]:
    return [("user", f"Message {i}: " + "words " * 20), ("assistant", f"Reply {i}: " + "more " * 20)]


def conversation(first: int, last: int, question: str) -> list[tuple[str, str]]:
    """The system message, turns first..last-1, and a new message."""
    return [SYSTEM, *(m for i in range(first, last) for m in turn(i)), ("user", question)]


def served(chooser: SlotChooser, messages) -> int:
    slot = chooser.acquire(messages)
    chooser.release(slot)
    return slot


def test_shared_chars_is_the_longer_of_prefix_and_messages_anywhere():
    before = conversation(0, 3, "and now?")
    slot = SlotContent(prompt=tuple(before))
    grown = conversation(0, 4, "next")
    assert shared_chars(grown, slot) == sum(len(c) for _, c in before[1:-1])  # the prefix, to the new message
    cut = conversation(1, 4, "next")  # the window's first turn dropped: only the system message is a common prefix
    assert shared_chars(cut, slot) == sum(len(c) for i in (1, 2) for _, c in turn(i))
    assert shared_chars([SYSTEM, ("user", "Hello, I am someone else.")], slot) == 0  # the opening alone says nothing
    assert shared_chars([("user", "unrelated")], slot) == 0
    template = [("user", "Extract the triples of: cats")]
    assert shared_chars(template, SlotContent((("user", "Extract the triples of: dogs"),))) == len("Extract the triples of: ")
    other_system = [("system", "You are a friendly judge."), ("user", "x")]
    assert shared_chars(other_system, slot) == len("You are a friendly ")  # a system template's common start counts
    assert shared_chars(cut, SlotContent()) == 0


def test_a_cut_window_stays_in_the_slot_that_holds_its_conversation():
    chooser = SlotChooser(2)
    home = served(chooser, conversation(0, 3, "a"))
    assert served(chooser, conversation(0, 4, "b")) == home  # the slot used last: llama.cpp's LRU would pick the other
    assert served(chooser, conversation(2, 5, "c")) == home  # cut: shares only the system message as a prefix


def test_other_work_takes_the_other_slot_and_two_conversations_keep_theirs():
    chooser = SlotChooser(2)
    a = served(chooser, conversation(0, 2, "a"))
    extraction = [("user", "Extract the triples of: " + "text " * 30)]
    assert served(chooser, extraction) != a  # nothing in common: the least recently used slot
    assert served(chooser, [("user", "Extract the triples of: " + "other " * 30)]) != a  # same template: beside it
    b_talk = [SYSTEM, ("user", "Hello, I am B. " + "b " * 40)]
    b = served(chooser, b_talk)
    assert b != a  # shares only the opening: the slot holding no conversation, not the least recently used
    assert served(chooser, conversation(1, 3, "a again")) == a
    assert served(chooser, [*b_talk, ("assistant", "Hi B."), ("user", "more")]) == b


def test_a_busy_slot_is_passed_over_while_another_is_free():
    chooser = SlotChooser(2)
    home = served(chooser, conversation(0, 3, "a"))
    held = chooser.acquire(conversation(0, 4, "b"))
    assert held == home
    other = chooser.acquire(conversation(0, 4, "c"))  # same conversation, but its slot is serving
    assert other != home
    third = chooser.acquire(conversation(0, 4, "d"))  # both busy: the one sharing most, where the server queues it
    assert third == home  # both share as much: the one given out longest ago
    for slot in (held, other, third):
        chooser.release(slot)


def test_a_pinned_request_forgets_what_its_slot_held():
    chooser = SlotChooser(2)
    home = served(chooser, conversation(0, 3, "a"))
    chooser.hold(home)  # token-level scoring pinned there by its caller
    chooser.release(home)
    assert served(chooser, conversation(1, 4, "b")) != home  # the slot no longer holds the conversation


def test_concurrent_acquires_never_give_one_free_slot_twice():
    chooser = SlotChooser(4)
    got: list[int] = []
    barrier = threading.Barrier(4)

    def take() -> None:
        barrier.wait()
        got.append(chooser.acquire(conversation(0, 2, "same")))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [0, 1, 2, 3]


def test_a_server_has_a_slot():
    with pytest.raises(ValueError):
        SlotChooser(0)
