"""Unsupported attribution (core.metrics.unsupported) on hand-computed cases."""

import pytest

from core.metrics.unsupported import claims, unsupported_claims

LENA = ["I'm Lena. I run a small second-hand bookshop in Leipzig."]
MARCO = ["Hi there, I'm Marco and I'm learning to fly gliders.", "My grandmother Rosa turned 90 yesterday."]
AMARA = ["Hello! I'm Amara.", "My son Kofi is seven years old and he is obsessed with dinosaurs."]


def test_a_claim_with_new_words_is_unsupported():
    # content words run, boutique; 'boutique' in no user message: 1 new of 2 (>= 1 and >= 50%)
    assert unsupported_claims("You run a boutique.", LENA) == ("You run a boutique",)
    assert unsupported_claims("You run a small second-hand bookshop in Leipzig.", LENA) == ()
    # daughter, name, emma: 'name' and 'emma' new, 2 of 3
    told = ["We have a daughter who just turned six."]
    assert unsupported_claims("Your daughter's name is Emma.", told) == ("Your daughter's name is Emma",)
    assert unsupported_claims("Your daughter just turned six.", told) == ()


def test_identity_slips_make_the_user_someone_else():
    assert unsupported_claims("You are Rosa.", MARCO) == ("You are Rosa",)
    assert unsupported_claims("You are Marco, and you fly gliders.", MARCO) == ()  # the user's own name
    assert unsupported_claims("You, Kofi, are obsessed with dinosaurs.", AMARA) == ("You Kofi are obsessed with dinosaurs",)
    assert unsupported_claims("You are your dentist.", ["My dentist appointment moved to Thursday."]) == (
        "You are your dentist",)
    assert unsupported_claims("My name is Hana", []) == ()


def test_an_age_said_back_is_supported():
    # 'years' and 'old' are how an age is said back: the claim's one content word is 42
    assert unsupported_claims("You are 42 years old.", ["I'm Daniel, I'm 42, and I live in Glasgow."]) == ()


@pytest.mark.parametrize("reply", [
    "You can try a bench scraper.",  # advice: a modal after the subject
    "You might find it easier with nylon strings.",
    "If you stir it constantly, the rice turns to glue.",  # a condition
    "When you fly east, your body clock shifts.",
    "Do you have a cat?",  # a question
    "It helps you relax after work.",  # generic: 'you' as an object
    "Regular walks are good for your heart.",  # 'your' inside the sentence
    "You're welcome!",  # a formula
    "You're asking about weather forecasts.",  # the message reported
    "You mentioned a trip to Ghana.",
])
def test_what_is_not_a_claim_about_the_user(reply):
    assert claims(reply) == []


def test_saying_it_was_not_told_is_not_a_claim():
    assert claims("You haven't told me where you were born.") == []
    assert claims("You never mentioned a pet.") == []


def test_a_name_the_user_never_wrote_is_unsupported_even_beside_the_questions_words():
    # daughter and name are in the question; Emma, a name, is in no message: 1 new of 3, but a name
    asked = ["We have a daughter who just turned six.", "What's my daughter's name?"]
    assert unsupported_claims("Your daughter's name is Emma.", asked) == ("Your daughter's name is Emma",)


@pytest.mark.parametrize("reply", [
    "Headphones play a sound against the noise you want to cancel.",  # a relative clause
    "It takes you about six months to learn Python.",  # an object
    "It depends on your budget and your goals.",
    "You use lists when you need the order of the items.",  # a condition inside the sentence
])
def test_you_that_does_not_open_its_clause_or_sits_in_a_condition_is_not_a_claim(reply):
    assert claims(reply) == []
