"""The decline detector of never-told questions (core.metrics.abstention), on hand-labelled replies."""

import pytest

from core.metrics.abstention import declines

DECLINED = [
    "You haven't told me your daughter's name yet. What is she called?",
    "You didn't mention where you were born.",
    "You never told me.",
    "You have not shared your birthday with me.",
    "I don't know your wife's name; you haven't mentioned it.",
    "I’m not sure — I don't think you said.",
    "I don't have that information.",
    "I do not remember you telling me about a pet.",
    "Your favourite film was never mentioned in our conversation.",
    "There is no information about your brother's name.",
    "I have no record of your mother's name.",
    "I don't have your flatmate's name.",
    "I'm sorry, but I don't have your phone number.",
]
INVENTED = [
    "Your daughter's name is Emma.",
    "You were born in Bergen.",
    "Your cat is called Pixel.",
    "Your favourite film is The Godfather.",
    "Your wife is Efua.",  # another person's name given to the wife
    "You support Accra Hearts of Oak, of course!",
    "I know you love football: your team is Chelsea.",
    "You told me your birthday is in May.",  # 'told' without a negation is a claim
    "I don't have a favourite, but your team's name is Chelsea.",  # a name given after all: no "your" before it
    "You don't have a cat; your dog's name is Rex.",
]


@pytest.mark.parametrize("reply", DECLINED)
def test_declines(reply):
    assert declines(reply)


@pytest.mark.parametrize("reply", INVENTED)
def test_invented_values_are_not_declines(reply):
    assert not declines(reply)
