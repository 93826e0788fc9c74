"""Memory reaches the chat prompt as sentences that say whose fact it is (core.methods.render)."""

from core.dialogue import Evidence
from core.methods.render import (REPLY_STOPS, evidence_lines, memory_notes, memory_system, said_line, second_person,
                                 tidy_reply)


def test_second_person_rewrites_the_users_own_words():
    assert second_person("Hi, I'm Marta. I live in Porto and I have a dog called Rex.") == (
        "You're Marta. You live in Porto and you have a dog called Rex.")
    assert second_person("My sister Ana is a nurse.") == "Your sister Ana is a nurse."
    assert second_person("I am 42 and I was a bus driver; am I old?") == "You are 42 and you were a bus driver; are you old?"
    assert second_person("We moved the trip to December with our kids.") == "You moved the trip to December with your kids."
    assert second_person("I\u2019ve got it.") == "You've got it."


def test_second_person_refuses_text_that_already_speaks_to_someone():
    assert second_person("Can you tell me where I live?") is None
    assert second_person("") is None


def test_said_line_names_the_speaker_and_the_day():
    assert said_line("user", "I moved to Lisbon last month.", "2026-11-27") == (
        "- You moved to Lisbon last month (October 2026). (27 November 2026)")
    assert said_line("user", "Can you help me?", "") == '- You asked: "Can you help me?"'
    assert said_line("user", "Tell you what, it rained.", "") == '- You said: "Tell you what, it rained."'
    assert said_line("assistant", "I can help.", "2026-11-27") == '- I replied (27 November 2026): "I can help."'
    assert said_line("", "I went to a support group yesterday.", "8 May, 2023", speaker="Caroline") == (
        '- Caroline said (8 May 2023): "I went to a support group yesterday (7 May 2023)."')


def test_evidence_lines_split_a_chunk_by_speaker_and_keep_generated_memory_as_it_is():
    chunk = Evidence("User: My sister Ana is a nurse.\nAssistant: Nice!", 1.0, "S0:0", "round", {"date": "2026-11-27"})
    assert evidence_lines(chunk) == ["- Your sister Ana is a nurse. (27 November 2026)",
                                     '- I replied (27 November 2026): "Nice!"']
    session = Evidence("[2026-11-27]\nUser: I live in Porto.", 1.0, "S0", "session", {"date": "2026-11-27"})
    assert evidence_lines(session) == ["- You live in Porto. (27 November 2026)"]
    assert evidence_lines(Evidence("The user likes tea.", 1.0, "f1", "fact")) == ["- The user likes tea."]
    assert memory_notes([]) == "(nothing yet)"


def test_memory_system_states_the_roles_then_the_notes():
    text = memory_system([Evidence("User: I live in Porto.", 1.0, "S0:0", "turn")])
    assert text.index("You are the assistant") < text.index("- You live in Porto.")
    assert "User: I live in Porto" not in text


def test_tidy_reply_drops_the_echo_and_keeps_the_answer():
    message = ("I've been trying to bake sourdough bread at home for a few weeks now, and the loaves come out flat "
               "and dense.")
    echo = ("I've been trying to bake sourdough bread at home for a few weeks now, and the loaves come out flat "
            "and dense. Try a longer proof and a warmer spot.")
    assert tidy_reply(echo, message) == "Try a longer proof and a warmer spot."
    assert tidy_reply(message, message) == message  # nothing but the echo: kept rather than emptied
    short = "Your sister Ana moved to Lisbon last year and works as a nurse."
    assert tidy_reply(short, "My sister Ana moved to Lisbon last year and works as a nurse.") == short
    assert "\nThis response" in REPLY_STOPS


def test_anchoring_twice_changes_nothing():
    import datetime as dt

    from core.timeref import anchor_text

    once = anchor_text("I moved last month and again yesterday.", dt.date(2026, 11, 27))
    assert once == "I moved last month (October 2026) and again yesterday (26 November 2026)."
    assert anchor_text(once, dt.date(2026, 11, 27)) == once
