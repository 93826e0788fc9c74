"""The reply check (core/reply_check.py): hand-written replies and what the user must read instead,
the cases it must leave alone, and the conversation service storing the repaired text with the
method's own kept as `draft` (the scripted LLM streams the draft)."""

from __future__ import annotations

import pytest

from core.conversation import ConversationService, ReplyStored, ReplyText
from core.dialogue import Reply
from core.llm.fake import ScriptedLLM
from core.llm.prompts import render_prompt
from core.methods import Toolkit, create_method
from core.metrics.reply_defects import ReplyCase, score_reply
from core.reply_check import ReplyCheckSettings, check_reply, echo_sentences, needs_second_try
from core.store import Store

TOMAS = "Hi, I'm Tomás. I work as a pharmacist in Coimbra and I have a cat called Pixel."
RUI = "My brother Rui is a firefighter in Faro, and he has two kids."
BYZANTIUM = ("That helps. Was Latin still spoken in the eastern empire, or did they switch to Greek? I've read that "
             "the term Byzantine was invented much later by historians and the people called themselves Romans.")


@pytest.mark.parametrize("reply, message, earlier, expected", [
    ("I work as a pharmacist in Coimbra.", "What is my job?", [TOMAS], "You work as a pharmacist in Coimbra."),
    ("My brother Rui is a firefighter in Faro.", "What does my brother Rui do?", [RUI],
     "Your brother Rui is a firefighter in Faro."),
    ("I am allergic to shellfish.", "What am I allergic to?", ["I'm allergic to shellfish, sadly."],
     "You are allergic to shellfish."),
    ("We are visiting Ghana in December.", "When are we visiting Ghana now?",
     ["We were going to visit Ghana in July, but we moved the trip to December."], "You are visiting Ghana in December."),
    ("You are Daniel, I am 42, and I live in a small flat in Glasgow.",
     "I'm Daniel, I'm 42, and I live in a small flat in Glasgow.", [],
     "You are Daniel, you are 42, and you live in a small flat in Glasgow."),
])
def test_the_users_facts_are_said_back_in_the_second_person(reply, message, earlier, expected):
    checked = check_reply(reply, message, earlier)
    assert checked.text == expected
    assert checked.rewritten and not checked.dropped
    assert not score_reply(ReplyCase(checked.text, message, tuple(earlier))).voice
    assert score_reply(ReplyCase(reply, message, tuple(earlier))).voice  # the case is one the measure counts


NADIA = "Hi! I'm Nadia. I work as a nurse in Lyon."


@pytest.mark.parametrize("reply, message, expected", [
    # a sentence that only says the message back goes, in the first person or the second (issue 52)
    ("Hello Tomás! I'm a pharmacist in Coimbra. I'm here to help you with anything.", TOMAS,
     "Hello Tomás! I'm here to help you with anything."),
    ("You're Nadia and you work as a nurse in Lyon. What do you enjoy most about it?", NADIA,
     "What do you enjoy most about it?"),
    # nothing else said: the reply stays, said to the user
    ("I'm Nadia and I work as a nurse in Lyon.", NADIA, "You're Nadia and you work as a nurse in Lyon."),
    # content words: nice, meet, nadia: one of three from the message
    ("Nice to meet you, Nadia! Night shifts must be tiring.", NADIA, "Nice to meet you, Nadia! Night shifts must be tiring."),
])
def test_a_sentence_that_says_the_message_back_goes_in_either_person(reply, message, expected):
    assert check_reply(reply, message).text == expected


def test_a_sentence_said_back_by_hand():
    from core.metrics.saying_back import restates
    from core.reply_check import told_part

    # content stems of the sentence: nadia, work, nurse, lyon: all four in the message
    assert restates("You're Nadia and you work as a nurse in Lyon.", NADIA)
    # nadia, work, nurse, lyon, hospital, night, shift, ward: 4 of 8 from the message (< 70%)
    assert not restates("Nadia, you work as a nurse in Lyon at a hospital on night shifts in a ward.", NADIA)
    assert not restates("Lyon!", NADIA)  # one content word: too little to say anything back
    assert told_part("I'm Nadia. Is nursing hard? I love it.") == "I'm Nadia. I love it."


@pytest.mark.parametrize("reply, message", [
    ("I'm sorry to hear that. Have you tried a crate?", "He chews everything, yesterday he destroyed my shoes."),
    ("I am an AI assistant.", "Who are you?"),
    ("I'd be happy to help you plan the trip.", "I want to visit Ghana."),  # the assistant's own first person
    ("You live in Porto.", "Where do I live?"),
    ("You said: I live in Porto with my dog Rex.", "Where do I live?"),  # the user's words, given as theirs
    ('You told me "I live in Porto with my dog Rex" on Monday.', "Where do I live?"),
    ("", "Hi"),
])
def test_replies_without_either_defect_are_left_as_written(reply, message):
    checked = check_reply(reply, message, ["I live in Porto with my dog Rex."])
    assert checked.text == reply and not checked.changed and checked.summary() == "no change"


def test_a_sentence_repeating_the_users_message_is_dropped_when_something_else_is_said():
    reply = ("Latin was still spoken in the eastern empire for a while. The term Byzantine was invented much later "
             "by historians and the people called themselves Romans.\n\nGreek became the language of government.")
    checked = check_reply(reply, BYZANTIUM)
    assert checked.text == "Latin was still spoken in the eastern empire for a while.\n\nGreek became the language of government."
    assert checked.dropped == ("The term Byzantine was invented much later by historians and the people called themselves Romans.",)
    assert not score_reply(ReplyCase(checked.text, BYZANTIUM)).echo and score_reply(ReplyCase(reply, BYZANTIUM)).echo


def test_a_reply_that_is_only_the_echo_is_kept_whole():
    reply = "The term Byzantine was invented much later by historians and the people called themselves Romans."
    assert check_reply(reply, BYZANTIUM).text == reply


def test_a_short_answer_that_borrows_the_questions_words_stays():
    message = "Is it cruel to put a puppy in a crate while I am at work all day as a teacher in the city centre?"
    reply = "It is not cruel to put a puppy in a crate. Keep the sessions short at first."
    assert check_reply(reply, message).text == reply  # no 80-character stretch: no echo


def test_echo_sentences_counts_a_stretch_over_two_sentences():
    message = "My starter bubbles nicely in the morning. By the evening it smells a bit like nail polish remover."
    sentences = ["Your question is a good one.", "My starter bubbles nicely in the morning.",
                 "By the evening it smells a bit like nail polish remover."]
    assert echo_sentences(sentences, message) == {1, 2}  # 97 characters in a row, over two sentences
    assert echo_sentences(sentences, message, min_chars=120) == set()


def test_each_repair_can_be_turned_off():
    off = ReplyCheckSettings(drop_echoes=False, second_person=False)
    assert check_reply("I work as a pharmacist in Coimbra.", "What is my job?", [TOMAS], off).text == \
        "I work as a pharmacist in Coimbra."


def _round(store: Store, reply_check, text: str, message: str, llm: ScriptedLLM | None = None) -> tuple[ReplyStored, str]:
    llm = llm or ScriptedLLM([text])
    service = ConversationService(store, "anon:tester", lambda name: create_method(name, Toolkit(llm=llm)),
                                  today=lambda: "2026-11-27", reply_check=reply_check)
    streamed = ""
    with service.start(None, "base", message) as round_:
        for event in round_.events(max_tokens=64, tick_s=0.05):
            if isinstance(event, ReplyText):
                streamed += event.piece
            elif isinstance(event, ReplyStored):
                stored = event
    return stored, streamed


def test_the_service_stores_the_checked_reply_and_keeps_the_draft(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    stored, streamed = _round(store, ReplyCheckSettings(), "Hi Marta! I live in Porto with my dog Rex.",
                              "Hi, I'm Marta. I live in Porto with my dog Rex.")
    assert stored.reply.text == "Hi Marta! You live in Porto with your dog Rex."
    assert streamed == stored.reply.text  # checked as it streams: what is shown is what is stored (issue 57)
    assert stored.reply.draft == "Hi Marta! I live in Porto with my dog Rex." and "reply_check" in stored.reply.timings
    turns = store.dialogue(stored.conversation_id, owner="anon:tester").turns()
    assert turns[-1].text == stored.reply.text  # what the memory and the history hold
    assert Reply.from_dict(stored.reply.to_dict()) == stored.reply  # the draft survives the round trip

    unchecked, _ = _round(store, None, "Hi Marta! I live in Porto with my dog Rex.", "Hi, I'm Marta. I live in Porto.")
    assert unchecked.reply.text == "Hi Marta! I live in Porto with my dog Rex." and unchecked.reply.draft == ""


def test_a_sentence_said_in_an_earlier_reply_is_dropped_on_a_statement_only():
    earlier = ["That's great to hear! What do you teach?"]
    message = "I started baking bread on Sundays."
    checked = check_reply("That's great to hear! Which flour do you use?", message, [], ReplyCheckSettings(), earlier)
    assert checked.text == "Which flour do you use?" and checked.dropped == ("That's great to hear!",)
    assert not checked.nothing_new
    asked = "I started baking bread. Which flour is best?"  # a question may rightly get an answer said before
    assert check_reply("That's great to hear! Rye is best.", asked, [], ReplyCheckSettings(), earlier).text == \
        "That's great to hear! Rye is best."
    off = ReplyCheckSettings(drop_said_before=False)
    assert check_reply("That's great to hear! Which flour?", message, [], off, earlier).text == "That's great to hear! Which flour?"


def test_a_reply_that_only_says_back_is_kept_whole_and_asked_again():
    message = "My granddaughter Efua is studying medicine in Kumasi. She calls me every Sunday."
    said_back = "Efua is studying medicine in Kumasi and calls you every Sunday."
    checked = check_reply(said_back, message)
    assert checked.text == said_back and checked.nothing_new  # nothing else said: it stays whole ...
    assert needs_second_try(said_back, message)  # ... and the round has it written again
    assert not needs_second_try(said_back, message, settings=ReplyCheckSettings(second_try=False))
    assert needs_second_try("That's great to hear!", "I passed my exam.", earlier_replies=["That's great to hear!"])
    assert not needs_second_try("That's great to hear!", "I passed my exam.")  # said for the first time
    assert not needs_second_try("Efua sounds bright! Does she want to be a surgeon?", message)


@pytest.mark.parametrize("reply, message, kept", [
    # recorded drafts of the 1.5B (conversational dev runs 6-7) that the check cut to a bare "That's ...!"
    ("That's a good point! What would you say to people who complain about rain?",
     "I honestly think the rain here is underrated. People complain about it all the time, but it keeps everything green.",
     "That's a good point! What would you say to people who complain about rain?"),
    ("Great! How do you plan to study grey seals?",
     "Hey, I'm Mei. I'm a graduate student in marine biology at Dalhousie in Halifax. I study grey seals.",
     "Great! How do you plan to study grey seals?"),
    ("That's a good plan. Try doing the methods section first, and then you'll have a draft of the introduction.",
     "My supervisor wants a draft of my first chapter. I keep rewriting the introduction instead of doing the methods section.",
     "That's a good plan. Try doing the methods section first, and then you'll have a draft of the introduction."),
    # a statement said back still goes
    ("That's true! Students are a different crowd.", "Students are a different crowd than the bar people.", "That's true!"),
])
def test_a_question_back_or_advice_in_the_message_words_is_no_saying_back(reply, message, kept):
    checked = check_reply(reply, message)
    assert checked.text == kept and not checked.nothing_new


def test_the_assistants_own_view_stays_in_the_first_person():
    tomek = "My friend Tomek is a dentist and he's the one who talked me into running."
    # run 8's base: "I'm sure Tomek ..." was said to the user as "You're sure Tomek ..."
    assert check_reply("That's really interesting. I'm sure Tomek is a great role model for young people.", tomek).text \
        == "That's really interesting. I'm sure Tomek is a great role model for young people."
    assert check_reply("I think Tomek runs a lot.", tomek).text == "I think Tomek runs a lot."
    assert check_reply("Nice! I live in Porto with my dog Rex.", "I like cooking.",
                       ["Hi, I'm Marta. I live in Porto with my dog Rex."]).text == "Nice! You live in Porto with your dog Rex."  # the user's fact in the first person is still said to the user


def test_a_bare_greeting_to_a_message_that_told_something_is_written_again():
    hana = "My name is Hana and I teach chemistry at a high school in Osaka."
    checked = check_reply("Hi there! I'm Hana, a chemistry teacher at a high school in Osaka.", hana)
    assert checked.nothing_new  # said back and a greeting: nothing of its own (it was cut to "Hi there!")
    assert needs_second_try("Hi!", "Do melatonin pills help with jet lag?")
    assert needs_second_try("Good morning!", "Good morning. My name is Kwame and I retired last year.")
    assert not needs_second_try("Hello there!", "Hi!")  # a greeting answers a greeting
    assert not needs_second_try("Hi Hana!", hana)  # greeted by name
    assert not needs_second_try("Hi! Chemistry is a great subject to teach.", hana)
    no_retry = ReplyCheckSettings(second_try=False)  # without a second try the said-back sentence goes as before
    assert check_reply("Hi there! I'm Hana, a chemistry teacher at a high school in Osaka.", hana, settings=no_retry).text \
        == "Hi there!"
    assert needs_second_try("How do you plan to study grey seals?", "I study grey seals.")  # a question said back, alone


def test_a_reply_written_again_shows_only_the_second_text_and_keeps_the_first_as_draft(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    message = "My granddaughter Efua is studying medicine in Kumasi. She calls me every Sunday."
    first, second = "Efua is studying medicine in Kumasi and calls you every Sunday.", "Sunday calls are lovely! Is she enjoying it?"
    llm = ScriptedLLM([first, second])
    stored, streamed = _round(store, ReplyCheckSettings(), first, message, llm)
    assert streamed == stored.reply.text == second  # nothing of the first text reached the screen
    assert stored.reply.draft == first  # the method's own text, for the benchmark's draft scores
    retry = llm.requests[-1]
    assert [m.role for m in retry[-2:]] == ["user", "system"] and retry[-2].content == message
    assert retry[-1].content == render_prompt("reply_again").strip()
    assert retry[:-1] == llm.requests[0]  # the same prompt with one message more: the cache keeps it
    assert store.dialogue(stored.conversation_id, owner="anon:tester").turns()[-1].text == second


# -- any text -------------------------------------------------------------------------------------------
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.fuzz_helpers import dialogue_text  # noqa: E402


@given(reply=dialogue_text(), message=dialogue_text(), earlier=st.lists(dialogue_text(), max_size=3))
def test_any_text_is_checked_without_error_and_never_emptied(reply, message, earlier):
    checked = check_reply(reply, message, earlier)
    if reply.strip():
        assert checked.text.strip()  # a check drops sentences only when another one stays
    for sentence in checked.dropped:
        assert sentence in reply
    off = check_reply(reply, message, earlier, ReplyCheckSettings(drop_echoes=False, second_person=False, drop_said_back=False))
    assert off.text.strip() == reply.strip() and not off.changed
