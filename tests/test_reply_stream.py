"""The reply check as the reply streams (core/reply_stream.py, issue 57): the pieces a page shows,
joined, are the reply stored, never a first version replaced later; the checked text is what
`check_reply` makes of the whole reply (its own cases, fed word by word and character by
character); a sentence that may be part of an echo is held back, never shown and then taken away."""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.conversation import ConversationService, ReplyStored, ReplyText
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.reply_check import ReplyCheckSettings, check_reply
from core.reply_stream import CheckedStream, could_echo
from core.store import Store
from tests.fuzz_helpers import dialogue_text
from tests.test_reply_check import BYZANTIUM, RUI, TOMAS

ME = "anon:stream"
NADIA = "Hi! I'm Nadia. I work as a nurse."


def words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)  # as the scripted LLM streams


def fed(text: str, message: str, earlier=(), pieces=None, check=ReplyCheckSettings(),
        replies=()) -> tuple[list[str], CheckedStream]:
    stream = CheckedStream(message, earlier, check, replies)
    shown = [stream.feed(p) for p in (words(text) if pieces is None else pieces)]
    shown.append(stream.finish())
    return [s for s in shown if s], stream


def _service(store: Store, llm) -> ConversationService:
    return ConversationService(store, ME, lambda name: create_method(name, Toolkit(llm=llm)), today=lambda: "2026-11-28")


def test_the_reply_shown_as_it_streams_is_the_reply_stored(tmp_path):
    """The issue's case: the method repeats the user's introduction in the first person."""
    store = Store(tmp_path / "db.sqlite3")
    with _service(store, ScriptedLLM([NADIA])).start(None, "base", NADIA) as round_:
        events = list(round_.events(max_tokens=64, tick_s=0.05))
    pieces = [e.piece for e in events if isinstance(e, ReplyText)]
    [stored] = [e for e in events if isinstance(e, ReplyStored)]
    # "I work as a nurse." says the message back and goes (issue 52); "I'm Nadia." (one content word) is said to her
    assert "".join(pieces) == stored.reply.text == "Hi! You're Nadia."
    assert pieces == ["Hi! You're Nadia."]  # a bare greeting waits for a sentence that says something (issue 52)
    assert stored.reply.draft == NADIA and "reply_check" in stored.reply.timings  # the method's own text kept
    assert store.turns(stored.conversation_id, owner=ME)[1].turn.text == "".join(pieces)


def test_without_a_reply_check_the_method_text_streams_as_written(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    service = ConversationService(store, ME, lambda name: create_method(name, Toolkit(llm=ScriptedLLM([NADIA]))),
                                  reply_check=None)
    with service.start(None, "base", NADIA) as round_:
        events = list(round_.events(max_tokens=64, tick_s=0.05))
    assert "".join(e.piece for e in events if isinstance(e, ReplyText)) == NADIA
    assert events[-2].reply.text == NADIA and events[-2].reply.draft == ""


class _Stop(Exception):
    """What Streamlit raises in the script thread when Stop reruns the page."""


def test_a_reply_stopped_mid_stream_keeps_checked_text_only(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    release = threading.Event()

    def slow(messages):
        release.wait(5)
        return "Hi! I'm Nadia. I work as a nurse and I live in Porto. Tell me more"

    with pytest.raises(_Stop):
        with _service(store, ScriptedLLM(slow)).start(None, "base", "Hi! I'm Nadia. I work as a nurse.") as round_:
            for event in round_.events(tick_s=0.05):
                release.set()
                if isinstance(event, ReplyText):
                    raise _Stop()
    kept = store.turns(round_.conversation_id, owner=ME)[1]
    assert kept.reply.stopped and kept.turn.text == round_.pending.partial
    assert kept.turn.text.startswith("Hi! You're Nadia.") and "I'm Nadia" not in kept.turn.text


@pytest.mark.parametrize("text, message, earlier", [
    (NADIA, NADIA, []),
    ("I work as a pharmacist in Coimbra.", "What is my job?", [TOMAS]),
    ("My brother Rui is a firefighter in Faro.", "What does my brother Rui do?", [RUI]),
    ("Hello Tomás! I'm a pharmacist in Coimbra. I'm here to help you with anything.", TOMAS, []),
    ("Latin was still spoken in the eastern empire for a while. The term Byzantine was invented much later "
     "by historians and the people called themselves Romans.\n\nGreek became the language of government.", BYZANTIUM, []),
    ("The term Byzantine was invented much later by historians and the people called themselves Romans.", BYZANTIUM, []),
    ("Your question is a good one. My starter bubbles nicely in the morning. By the evening it smells a bit like nail "
     "polish remover. Feed it twice a day.",
     "My starter bubbles nicely in the morning. By the evening it smells a bit like nail polish remover.", []),
    ("It costs 3.50 euros. Dr. Silva said so! Really?\n- one\n- two", "What does it cost?", []),
    ("I'm sorry to hear that. Have you tried a crate?", "He chews everything, yesterday he destroyed my shoes.", []),
    ("That's true! How do you plan to study grey seals?", "I study grey seals.", []),  # a question back stays
    ("Hi! I'm Hana, a chemistry teacher.", "My name is Hana and I'm a chemistry teacher.", []),  # written again
    ("Hi there! What do you teach?", "My name is Hana.", []),  # the greeting waits, then goes out
])
def test_the_streamed_check_makes_what_check_reply_makes_of_the_whole_reply(text, message, earlier):
    expected = check_reply(text, message, earlier).text
    for pieces in (words(text), list(text), [text]):
        shown, stream = fed(text, message, earlier, pieces)
        assert "".join(shown) == stream.shown == expected


def test_an_echo_is_held_back_and_never_shown():
    text = ("Latin was still spoken in the eastern empire for a while. The term Byzantine was invented much later by "
            "historians and the people called themselves Romans.\n\nGreek became the language of government.")
    shown, stream = fed(text, BYZANTIUM)
    assert not any("Byzantine" in s for s in shown)
    assert stream.dropped == ["The term Byzantine was invented much later by historians and the people called themselves Romans."]
    assert could_echo("The people called themselves Romans.", BYZANTIUM, ReplyCheckSettings())
    assert not could_echo("Greek became the language of government.", BYZANTIUM, ReplyCheckSettings())
    assert not could_echo("I'm Nadia.", NADIA, ReplyCheckSettings())  # the message is shorter than an echo: never held


def test_a_sentence_without_a_full_stop_waits_for_the_next_words():
    stream = CheckedStream("Hi")
    assert stream.feed("I met Dr") == "" and stream.feed(". Silva at 3") == "" and stream.feed(".5 km. ") == ""
    assert stream.feed("Then home.") == "I met Dr. Silva at 3.5 km."
    assert stream.finish() == " Then home." and stream.shown == "I met Dr. Silva at 3.5 km. Then home."


@settings(max_examples=150, deadline=None)
@given(reply=dialogue_text(), message=dialogue_text(), cuts=st.lists(st.integers(0, 200), max_size=8))
def test_any_text_in_any_pieces_is_checked_as_a_whole(reply, message, cuts):
    points = sorted({c for c in cuts if c < len(reply)})
    pieces = [reply[a:b] for a, b in zip([0, *points], [*points, len(reply)])]
    shown, stream = fed(reply, message, (), pieces)
    assert "".join(shown) == stream.shown
    assert stream.shown.strip() == check_reply(reply, message).text.strip()


SENTENCES = ["My starter bubbles nicely in the morning.", "By the evening it smells a bit like nail polish remover.",
             "I keep it on the counter next to the window.", "Is that normal?", "Yes, that is normal.",
             "Feed it more often.", "I work as a baker in Lyon.", "Hi!", "Does your starter smell in the evening?",
             "Keep it on the counter next to the window."]


@settings(max_examples=80, deadline=None)
@given(said=st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4),
       reply=st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=5))
def test_replies_that_repeat_the_message_are_checked_as_a_whole(said, reply):
    message, text = " ".join(said), " ".join(reply)
    shown, stream = fed(text, message)
    assert "".join(shown) == check_reply(text, message).text


EARLIER_REPLIES = ["That's great to hear! What do you teach?", "Do you have any other questions?"]


@settings(max_examples=80, deadline=None)
@given(said=st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3),
       reply=st.lists(st.sampled_from([*SENTENCES, "That's great to hear!", "Do you have any other questions?",
                                       "What do you teach?"]), min_size=1, max_size=4),
       asks=st.booleans())
def test_replies_that_say_earlier_replies_again_are_checked_as_a_whole(said, reply, asks):
    message, text = " ".join(said) + (" Why?" if asks else ""), " ".join(reply)
    shown, stream = fed(text, message, replies=EARLIER_REPLIES)
    whole = check_reply(text, message, (), ReplyCheckSettings(), EARLIER_REPLIES)
    assert "".join(shown) == stream.shown == whole.text
    if not asks and "Feed it more often." in reply:  # something new said: what was said before is out
        assert "great to hear" not in stream.shown and "other questions" not in stream.shown
