"""The one conversion of the user's words to the second person (core/person.py), against the cases
each of its callers pinned down when it had its own copy: the chat methods' memory lines
(core.methods.render), the reply check (core.reply_check) and D-SMART's recall (recall.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.methods.dsmart.recall import turned_around
from core.methods.render import said_to_user
from core.person import says_you, second_person, without_greeting
from core.text import words


@pytest.mark.parametrize("text, expected", [
    # the renderers' cases (memory lines of the chat methods)
    ("I'm Marta and my sister is a nurse.", "You're Marta and your sister is a nurse."),
    ("I am 42 and I was born in Porto. We moved.", "You are 42 and you were born in Porto. You moved."),
    ("My dog likes me.", "Your dog likes you."),
    ("We moved to the US; it suits us.", "You moved to the US; it suits you."),  # "US" stays a country
    ("I've got mine, myself; we'll see ours.", "You've got yours, yourself; you'll see yours."),
    # the reply check's cases (a reply restating the user's facts)
    ("I work as a pharmacist in Coimbra.", "You work as a pharmacist in Coimbra."),
    ("I am allergic to shellfish.", "You are allergic to shellfish."),
    ("We are visiting Ghana in December.", "You are visiting Ghana in December."),
    ("My brother Rui is a firefighter in Faro.", "Your brother Rui is a firefighter in Faro."),
    ("Where was I born? Am I late?", "Where were you born? Are you late?"),
    # recall's cases (the source sentences of D-SMART's answer prompt)
    ("I am 42 and my wife Helena teaches chemistry.", "You are 42 and your wife Helena teaches chemistry."),
    ("We had three children, and now we have four.", "You had three children, and now you have four."),
    ("I  am tired and we were late.", "You are tired and you were late."),  # any space between "I" and its verb
    # one way: a "you" already there stays; a curly apostrophe is a straight one
    ("Thank you, I will try it.", "Thank you, you will try it."),
    ("I\u2019m Tomasz.", "You're Tomasz."),
    ("", ""),
])
def test_second_person(text, expected):
    assert second_person(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Hi, I'm Marta.", "I'm Marta."),  # both old patterns
    ("Good morning! I'm up.", "I'm up."),
    ("Hi there, I'm Diego.", "I'm Diego."),  # the renderers' pattern had "there"; recall's left "There, ..."
    ("Hiking in Norway was fun.", "Hiking in Norway was fun."),  # recall's whole word; the renderers' made it "king"
    ("Hello there!", "Hello there!"),  # nothing but a greeting: it stays
    ("  I live in Porto.  ", "I live in Porto."),
])
def test_without_greeting(text, expected):
    assert without_greeting(text) == expected


def test_says_you():
    assert says_you("Can you help me?") and says_you("Enjoy yourselves") and says_you("YOUR turn")
    assert not says_you("I live in Porto; the youth club is near.")


def test_the_callers_use_it():
    assert said_to_user("Hi there, I'm Diego and my dog is Rex.") == second_person("I'm Diego and my dog is Rex.")
    assert said_to_user("Hiking is my hobby.") == "Hiking is your hobby."
    # recall turns the user's "you" (the assistant) around too, and the rest is second_person's
    assert turned_around("Thank you, I will try what you suggested.") == "Thank you, you will try what I suggested."
    assert turned_around("Hi there, can you help me? My dog is ill.") == "Can I help you? Your dog is ill."


_FIRST = {"i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "myself", "we", "we're", "we've", "we'll", "we'd",
          "our", "ours", "ourselves"}
_WORDS = st.sampled_from(["I", "i", "I'm", "I\u2019m", "am", "was", "me", "My", "mine", "myself", "We", "we're", "us",
                          "US", "our", "ours", "you", "your", "Thank", "dog", "is", "Rex", ".", ",", "!", "?", "and"])
_TEXTS = st.lists(_WORDS, max_size=14).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_second_person_is_idempotent_and_leaves_no_first_person_word(text):
    once = second_person(text)
    assert second_person(once) == once
    assert not _FIRST & set(words(once))  # "us" may stay: only in capitals is it "the US"
    assert "us" not in once.split()
