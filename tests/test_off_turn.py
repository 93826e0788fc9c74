"""core.metrics.off_turn: a reply nearer to the previous user message than to the one it answers."""

import numpy as np
import pytest

from core.metrics.off_turn import EMBEDDER, MARGIN, is_off_turn, off_turn_flags
from core.resources import load_embedder


def _unit(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_off_turn_needs_the_margin():
    message, previous = _unit(1, 0), _unit(0, 1)
    assert is_off_turn(_unit(0.2, 1), message, previous)
    assert not is_off_turn(_unit(1, 0.2), message, previous)
    # a follow-up's answer is near both messages: a difference under the margin is not off-turn
    near_both = _unit(1, 1 + MARGIN / 2)
    assert float(near_both @ previous) > float(near_both @ message)
    assert not is_off_turn(near_both, message, previous)


def test_a_first_message_or_an_empty_reply_is_never_off_turn(hashing_embedder):
    flags = off_turn_flags(hashing_embedder, ["paint the walls white", "", "paint the walls white"],
                           ["how do I boil an egg", "how do I boil an egg", "how do I boil an egg"],
                           ["", "what colour for the walls", "what colour should I paint the walls"])
    assert flags == [False, False, True]


def test_off_turn_flags_refuses_lists_of_different_lengths(hashing_embedder):
    with pytest.raises(ValueError, match="as many"):
        off_turn_flags(hashing_embedder, ["a"], ["b", "c"], ["d"])


def test_the_checks_embedder_sees_a_reply_that_answers_the_turn_before():
    """From a full run of dsmart (results/replies/blind-long-turns-section): the wardrobe question
    got the dinner-party menu of the turn before. A reply about sorting the wardrobe is on turn."""
    embedder = load_embedder(EMBEDDER)
    dinner = ("I'm hosting a dinner party this weekend and among the guests there's one vegan, one person who "
              "can't eat gluten and one who hates anything spicy. Could you suggest a starter, main and dessert?")
    wardrobe = ("My wardrobe is stuffed but I still feel like I have nothing to wear. Could you give me a method "
                "for deciding what to keep, what to donate and what to sell?")
    menu = ("You can start with a simple vegetable stir-fry with a side of steamed rice and a scoop of vanilla "
            "ice cream; the stir-fry can be made in advance.")
    sorting = "Sort everything into keep, donate and sell piles, and keep only what you wore this year."
    assert off_turn_flags(embedder, [menu, sorting], [wardrobe, wardrobe], [dinner, dinner]) == [True, False]
