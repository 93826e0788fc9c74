"""Answers about the user held to what the user told (core/told_answers.py, issue 52), and the reply
check that uses it: a never-told fact is declined, a told one is kept, talk and requests for help
are left alone. Hand-made cases; the streamed check must make the same of them."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.reply_check import check_reply
from core.reply_stream import CheckedStream
from core.told_answers import DECLINE, NO_CLAIM, TOLD, UNTOLD, answer_kind, fact_question, said_words

INGRID = "Hi! I'm Ingrid. I work as a midwife at the hospital in Bergen, mostly on the maternity ward."
SINDRE = "My husband Sindre is a carpenter. He builds kitchens for a small firm."
DAUGHTER = "We have a daughter who just turned six. She started school in August."
MOVED = "We used to live in a tiny flat in the city centre, but in the spring we moved to a house in Fana."
KWAME = "Good morning. My name is Kwame. I retired last year after thirty years as a railway engineer in Accra."
EFUA = "My granddaughter Efua is studying medicine in Kumasi."
WIFE = "My wife and I have been married for forty-one years. She still beats me at draughts."
HENS = "We had three hens until May, when we bought two more, so there are five of them now."
OSKAR = "Hi, I'm Oskar. I'm an electrician in Krakow, and I've just signed up for my first marathon."
GRAN = "My grandmother Rosa turned 90 last week and still bakes every Sunday."
GLASGOW = "I'm Daniel and I live in a small flat in Glasgow."
SOFIA = "My wife Sofia plays the violin in the city orchestra."
TOMEK = "My friend Tomek is a dentist. He talks about marathons the way other people talk about their children."
TEEN = "My daughter says I've become boring because I go to bed at nine. She's sixteen."
OSKAR_41 = "Hi, I'm Oskar. I'm an electrician in Krakow, forty-one years old, and I've just signed up for a marathon."
YANIS = "My son Yanis is fourteen and he plays handball three times a week."
SISTER = "My sister runs a bakery in Marseille."
LYON = "Two years ago I moved from Paris to Lyon."
NO_PETS = "We never had pets, my husband is allergic to cats."

MIKEL = "I've got a younger brother, Mikel, who lives in Berlin and works for a start-up. Something with drones."
FLATMATE = "Now I share a small place in Voorhof with just one other guy, a quiet physics student."
CONCERT = "Last Friday I went to a concert with my sister and we danced until midnight."

INGRIDS = [INGRID, SINDRE, DAUGHTER, MOVED]
KWAMES = [KWAME, EFUA, WIFE, HENS]


@pytest.mark.parametrize("message, earlier, asked", [
    ("What is my wife's name?", KWAMES, True),
    ("Quick check before I forget: what do I do for work?", INGRIDS, True),
    ("And what's my daughter's name again?", INGRIDS, True),
    ("What does Sindre do for a living?", INGRIDS, True),  # a name the user wrote: their world
    ("How many hens do we have now?", KWAMES, True),
    ("What should I cook tonight?", INGRIDS, False),  # advice, not a fact
    ("What do you think about my plan?", INGRIDS, False),  # the assistant's view
    ("How do I fix a squeaky door?", INGRIDS, False),  # a way, not a fact
    ("What's the difference between a list and a dictionary in Python?", INGRIDS, False),  # not the user's world
    ("I've started baking bread on Sundays.", INGRIDS, False),  # asks nothing
    ("My sourdough keeps coming out flat even though my starter doubles within six hours and I bake at 230 "
     "degrees with a lid for twenty minutes. What are the most likely problems and what would you change?",
     INGRIDS, False),  # a paragraph asking for help is no recall question
])
def test_which_messages_ask_for_a_fact_of_the_users_world(message, earlier, asked):
    assert bool(fact_question(message, earlier)) is asked


DOGS = "We've got two dogs, a grumpy old beagle called Biscuit and a young collie who thinks the postman is a friend."


@pytest.mark.parametrize("sentence, message, earlier, kind", [
    ("Your wife's name is Efua.", "What is my wife's name?", KWAMES, UNTOLD),  # a granddaughter's name moved
    ("Her name is Ingrid.", "And what's my daughter's name again?", INGRIDS, UNTOLD),  # the user's own name
    ("You were born in Bergen.", "Where was I born?", INGRIDS, UNTOLD),  # a told city, never a birthplace
    ("Your birthday is on July 24th.", "When is my birthday?", INGRIDS, UNTOLD),
    ("You have a daughter named Tomek.", "What's my daughter's name?", [OSKAR, TOMEK, TEEN], UNTOLD),  # told apart
    ("She's sixteen.", "How old is my daughter?", [OSKAR, TOMEK, TEEN], TOLD),
    ("You work as a midwife at the hospital in Bergen.", "What do I do for work?", INGRIDS, TOLD),
    ("He is a carpenter.", "What does Sindre do for a living?", INGRIDS, TOLD),
    ("He builds kitchens.", "What does Sindre do for a living?", INGRIDS, TOLD),
    ("He does carpentry.", "What does Sindre do for a living?", INGRIDS, TOLD),  # the family of "carpenter"
    # a name beside the answer: the answer is the rest, told with the relation; not when a name is asked
    ("Sofia plays the violin in Glasgow's orchestra.", "What instrument does my wife play?", [GLASGOW, SOFIA], TOLD),
    ("She plays the cello in Glasgow.", "What instrument does my wife play?", [GLASGOW, SOFIA], UNTOLD),
    ("Your wife's name is Glasgow Sofia.", "What's my wife's name?", [GLASGOW, "My wife plays the violin."], UNTOLD),
    ("Tomek does dentistry.", "What does Tomek do for a living?", [OSKAR, TOMEK], TOLD),  # ... of "dentist"
    ("He is a dental nurse.", "What does Tomek do for a living?", [OSKAR, TOMEK], UNTOLD),  # "dent" is no family
    ("You live in Fana.", "Which part of Bergen do we live in now?", INGRIDS, TOLD),
    ("You have 5 hens.", "How many hens do we have now?", KWAMES, TOLD),  # "five" and "5" are one value
    ("You're an electrician.", "Quick question, what's my job?", [OSKAR], TOLD),  # "job" names the kind of answer
    ("Your grandmother Rosa is ninety.", "How old is my grandmother Rosa?", [GRAN], TOLD),
    ("You haven't told me your wife's name.", "What is my wife's name?", KWAMES, NO_CLAIM),
    ("I'm not sure.", "Where was I born?", INGRIDS, NO_CLAIM),
    ("Do you want to tell me?", "Where was I born?", INGRIDS, NO_CLAIM),
    ("That's a lovely thing to ask about.", "Where was I born?", INGRIDS, NO_CLAIM),  # answers nothing
    # a bare name or thing is an answer by itself; told only with the relation asked about
    ("Yanis.", "What's my sister's name?", [YANIS, SISTER], UNTOLD),  # a son's name, not the sister's
    ("Handball", "What sport does Yanis play?", [YANIS, SISTER], TOLD),
    ("Lyon", "Which city do I live in now?", [LYON], TOLD),
    ("A dog.", "What was the name of my first pet?", INGRIDS, UNTOLD),
    ("Noted.", "Where do we live now?", INGRIDS, NO_CLAIM),  # an acknowledgement answers nothing
    ("Oh, lovely!", "What was the name of my first pet?", INGRIDS, NO_CLAIM),
    # saying no is a claim too: told only when the user said no about the same thing
    ("You don't have a cat.", "What's my cat called?", INGRIDS, UNTOLD),
    ("I didn't have a pet.", "What was the name of my first pet?", INGRIDS, UNTOLD),
    ("You don't have any pets.", "What was the name of my first pet?", [*INGRIDS, NO_PETS], TOLD),
    ("You're not my daughter.", "What's my daughter's name?", [OSKAR, TOMEK, TEEN], UNTOLD),
    # a told number is no birthday: "years old" only names the kind of answer, in either person
    ("You're forty-one years old.", "When is my birthday?", [OSKAR_41], UNTOLD),
    ("I'm forty-one years old.", "When is my birthday?", [OSKAR_41], UNTOLD),
    ("You're forty-one.", "How old am I?", [OSKAR_41], TOLD),
    # a relation's fact is told in the relation's sentence, or in the next one when it opens with a pronoun
    ("Your father's name is Samuel.", "What is my father's name?",
     ["Good evening. My name is Samuel. I grow coffee on the same land my father farmed."], UNTOLD),
    ("Your mother's name is Itziar.", "What's my mother's name?",
     ["Our mother is planning a dinner for twenty. I've been told to keep Itziar away from the topic of drones."], UNTOLD),
    ("Your mother's name is Itziar.", "What's my mother's name?", ["Our mother is planning a dinner. Her name is Itziar."], TOLD),
    ("Your sister is a dentist.", "What does my sister do for work?",
     ["My sister Leyla lives in Rotterdam with her husband. She's a dentist and she's expecting a baby in March."], TOLD),    # a name asked of a thing the user wrote of is told with the thing, and not when named for another
    ("Your collie is called Biscuit.", "What's my collie called?", [DOGS], UNTOLD),
    ("Your beagle is called Biscuit.", "What's my beagle called?", [DOGS], TOLD),
    ("Your cat is called Haruto.", "What's our cat called?", ["We have a son, Haruto. He's eleven.",
                                                             "My fingers hurt and the cat leaves the room when I practise."], UNTOLD),
    ("Your dog is called Rex.", "What's my dog called?", ["I have a dog. His name is Rex."], TOLD),
])
def test_an_answer_is_told_when_what_it_adds_is_in_what_the_user_wrote(sentence, message, earlier, kind):
    question = fact_question(message, earlier)
    assert question
    assert answer_kind(sentence, question, said_words(earlier)) == kind


@pytest.mark.parametrize("text, message, earlier, checked", [
    ("Your wife's name is Efua. She sounds lovely!", "What is my wife's name?", KWAMES, DECLINE),
    ("Her name is Ingrid.", "And what's my daughter's name again?", INGRIDS, DECLINE),
    ("Sindre is a carpenter. He also owns a boat called Ulla.", "What does Sindre do for a living?", INGRIDS,
     "Sindre is a carpenter."),  # the told answer stays; the invented detail goes
    ("You work as a midwife at the hospital in Bergen.", "What do I do for work?", INGRIDS,
     "You work as a midwife at the hospital in Bergen."),
    ("You haven't told me where you were born.", "Where was I born?", INGRIDS, "You haven't told me where you were born."),
    ("Try roasting vegetables with Parmesan.", "What should I cook tonight?", INGRIDS,
     "Try roasting vegetables with Parmesan."),  # advice is not checked against what was told
    ("I don't have a cat.", "What's my cat called?", INGRIDS, DECLINE),
    # a told answer in the user's voice is said to the user, however it words the fact
    ("I live in Lyon.", "Which city do I live in now?", [LYON], "You live in Lyon."),
    ("My job is a translator.", "What's my job?", ["I work from home as a translator."], "Your job is a translator."),
    ("I think it's Lyon.", "Which city do I live in now?", [LYON], "I think it's Lyon."),  # the assistant's view stays
    # a name asked for and none given: talk around it is no answer
    ("It's a drone start-up.", "What's the name of the start-up Mikel works for?", [MIKEL], DECLINE),
    ("Your collie's name is Collie.", "What's my collie called?", [DOGS], DECLINE),
    ("That's a lovely question! The other guy is a quiet physics student.", "What's my flatmate's name?", [FLATMATE],
     DECLINE),
    ("Your beagle is called Biscuit.", "What's my beagle called?", [DOGS], "Your beagle is called Biscuit."),
    ("Biscuit is your beagle's name.", "What's my beagle called?", [DOGS], "Biscuit is your beagle's name."),
    ("Biscuit.", "What's my beagle called?", [DOGS], "Biscuit."),
    ("Mikel is your brother.", "What's my brother's name?", [MIKEL], "Mikel is your brother."),
    ("Itziar works for a start-up with drones.", "What's the name of the start-up Mikel works for?",
     [MIKEL, "I live with my girlfriend Itziar, a sound engineer."], DECLINE),  # a told name, not the start-up's
    ("Do you mean the beagle or the collie?", "What's my dog called?", [DOGS], "Do you mean the beagle or the collie?"),
    ("I'm not sure of his name.", "What's my flatmate's name?", [FLATMATE], "I'm not sure of his name."),
    # "who" asks for a person, not in so many words for a name: "your sister" answers it
    ("That was a fun night!", "Who did I go to the concert with?", [CONCERT], "That was a fun night!"),
])
def test_the_reply_check_declines_what_was_never_told_and_keeps_what_was(text, message, earlier, checked):
    result = check_reply(text, message, earlier)
    assert result.text == checked
    assert result.declined is (checked == DECLINE)
    for pieces in ([text], list(text), re.findall(r"\S+\s*", text)):
        stream = CheckedStream(message, earlier)
        shown = "".join(stream.feed(p) for p in pieces) + stream.finish()
        assert shown == stream.shown == checked


def test_the_check_can_be_turned_off():
    from core.reply_check import ReplyCheckSettings

    off = ReplyCheckSettings(decline_untold=False)
    assert check_reply("Her name is Ingrid.", "What's my daughter's name?", INGRIDS, off).text == "Her name is Ingrid."


ANSWERS = ["Your wife's name is Efua.", "Efua studies medicine.", "You were a railway engineer.", "She sounds lovely!",
           "You have 5 hens.", "You haven't told me that.", "Her name is Mary.", "Is there anything else?"]
QUESTIONS = ["What is my wife's name?", "What does Efua study?", "What did I do before I retired?",
             "How many hens do we have now?", "Where was I born?"]


@settings(max_examples=120, deadline=None)
@given(question=st.sampled_from(QUESTIONS), said=st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=4),
       cuts=st.lists(st.integers(0, 120), max_size=6))
def test_the_streamed_check_declines_as_the_whole_reply_check_does(question, said, cuts):
    text = " ".join(said)
    points = sorted({c for c in cuts if c < len(text)})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    stream = CheckedStream(question, KWAMES)
    shown = "".join(stream.feed(p) for p in pieces) + stream.finish()
    assert shown == stream.shown == check_reply(text, question, KWAMES).text


def test_a_fact_question_is_answered_in_the_first_two_sentences_or_declined_without_waiting_for_the_rest():
    from dataclasses import replace

    from core.reply_check import ReplyCheckSettings

    late = "Her name is Mary. She sounds lovely! Efua studies medicine."  # the told answer comes third
    assert check_reply(late, "What does Efua study?", KWAMES).text == DECLINE
    whole = replace(ReplyCheckSettings(), answer_window=0)  # judged on the whole reply, as before
    assert check_reply(late, "What does Efua study?", KWAMES, whole).text == "Efua studies medicine."
    stream = CheckedStream("What does Efua study?", KWAMES)
    shown = [stream.feed(p) for p in re.findall(r"\S+\s*", late)]
    # the decline is shown once the second sentence is complete (the third has begun), not at the end
    assert shown.index(DECLINE) == 7 and not any(shown[:7]) and not any(shown[8:])
    assert stream.finish() == "" and stream.shown == DECLINE
    assert stream.untold == ["Her name is Mary.", "She sounds lovely!"]


def test_a_value_never_told_after_the_first_sentences_is_taken_out():
    from dataclasses import replace

    from core.reply_check import ReplyCheckSettings

    text = "Do you mean your granddaughter? Is there anything else? Her name is Mary."  # two questions back, then a name
    kept = "Do you mean your granddaughter? Is there anything else?"
    assert check_reply(text, "What is my wife's name?", KWAMES).text == kept
    assert check_reply(text, "What is my wife's name?", KWAMES, replace(ReplyCheckSettings(), answer_window=0)).text == DECLINE
    stream = CheckedStream("What is my wife's name?", KWAMES)
    shown = "".join(stream.feed(p) for p in re.findall(r"\S+\s*", text)) + stream.finish()
    assert shown == stream.shown == kept


def test_once_the_reply_is_the_decline_the_model_stops_writing_it(tmp_path):
    """The chat round's check decides the decline on the first two sentences; the model's stream is
    closed there (its slot and compute go to the next person), and the reply stored is the decline
    with the method's own text up to where it stopped."""
    from core.conversation import ConversationService, ReplyStored, ReplyText
    from core.llm.fake import ScriptedLLM
    from core.methods import Toolkit, create_method
    from core.reply_check import ReplyCheckSettings
    from core.store import Store

    ramble = "Her name is Mary. She sounds lovely! " + " ".join(f"Sentence {k} goes on and on." for k in range(40))

    class Counting(ScriptedLLM):
        pulled = 0

        def _stream(self, *args, **kwargs):
            for piece in super()._stream(*args, **kwargs):
                Counting.pulled += 1
                time.sleep(0.005)  # a token at a time, as a model writes: the page's check keeps up
                yield piece

    llm = Counting(["Nice to hear about your family.", "Lovely hens.", "Good luck.", "That sounds nice.", ramble])
    service = ConversationService(Store(tmp_path / "db.sqlite3"), "anon:tester", lambda name: create_method(name, Toolkit(llm=llm)),
                                  today=lambda: "2026-11-30", reply_check=ReplyCheckSettings())
    cid = None
    for message in [*KWAMES, "What does Efua study?"]:
        Counting.pulled, streamed = 0, ""
        with service.start(cid, "base", message) as round_:
            for event in round_.events(max_tokens=400, tick_s=0.05):
                if isinstance(event, ReplyText):
                    streamed += event.piece
                elif isinstance(event, ReplyStored):
                    stored, cid = event, event.conversation_id
    assert streamed == stored.reply.text == DECLINE
    words = len(re.findall(r"\S+\s*", ramble))
    assert Counting.pulled < 20 < words  # stopped a few words into the third sentence, not at the end
    assert stored.reply.draft.startswith("Her name is Mary. She sounds lovely!") and len(stored.reply.draft) < len(ramble) / 4
