"""The chat prompt's rendering of who said what (core.methods.render), against hand-written cases."""

from core.dialogue import Evidence
from core.methods.render import chat_system, evidence_lines, memory_notes, said_line, said_to_user


def test_said_to_user_swaps_the_users_words_and_their_verbs():
    assert said_to_user("Hi, I'm Marta and my sister is a nurse.") == "You're Marta and your sister is a nurse."
    assert said_to_user("I am 42 and I was born in Porto. We moved.") == "You are 42 and you were born in Porto. You moved."
    assert said_to_user("My dog likes me.") == "Your dog likes you."
    assert said_to_user("We moved to the US; it suits us.") == "You moved to the US; it suits you."


def test_said_to_user_refuses_text_that_already_says_you():
    assert said_to_user("Do you think I should buy it?") is None
    assert said_to_user("") is None


def test_said_line_names_the_speaker():
    assert said_line("user", "I sold my car last month (October 2026).") == "- You sold your car last month (October 2026)."
    assert said_line("user", "Can you help me?") == '- You asked: "Can you help me?"'
    assert said_line("assistant", "I can help.") == '- I replied: "I can help."'
    assert said_line("", "I live in Lisbon.", speaker="Ana") == '- Ana said: "I live in Lisbon."'


def test_evidence_lines_split_a_chunk_by_speaker_and_keep_generated_memories():
    chunk = Evidence("[8 May 2023]\nUser: I teach chemistry.\nAssistant: Nice!", 1.0, "S0", "session", {"date": ""})
    assert evidence_lines(chunk) == ["- You teach chemistry.", '- I replied: "Nice!"']
    fact = Evidence("The user teaches chemistry.", 1.0, "f1", "fact")
    assert evidence_lines(fact) == ["- The user teaches chemistry."]
    assert memory_notes([]) == "(nothing yet)"


def test_chat_system_has_the_length_line_only_when_asked():
    assert "at most 2 sentences" in chat_system(2)
    assert "sentences" not in chat_system(0)
    assert chat_system(0).startswith("You are a helpful assistant")
    # what a reply is for (issue 52): to a statement, a reply that does not say it back; to a
    # question about something never told, that it was not told
    assert "without repeating what they said" in chat_system(0) and "haven't told you" in chat_system(0)
