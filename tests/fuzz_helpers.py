"""Strategies shared by the property-based fuzz tests (tests/test_fuzz_*.py).

Text comes in two kinds: arbitrary Unicode (what a user may paste), and sentences assembled from
dialogue words, numbers and punctuation (what reaches the parsers' interesting branches)."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

from core.dialogue import ASSISTANT, USER, Dialogue, Turn

WORDS = (
    "I my me you your we he she it they Rex Anna Paris Lyon Louvre dog cat sister job guide city "
    "is are was have has had own live lives moved work works at in on under from to the a an not never "
    "like love hate likes dislikes named called now also added postcards times page 25 200 3 two ten "
    "$5 2023 May Monday yesterday and but because who what where . , ! ? ' \" ( ) - : ; 's n't"
).split()


def budget(share: float) -> settings:
    """A share of the active profile's examples, for the expensive properties (spaCy, owlrl)."""
    return settings(max_examples=max(5, int(settings().max_examples * share)))


def dialogue_text() -> st.SearchStrategy[str]:
    worded = st.lists(st.sampled_from(WORDS), min_size=0, max_size=30).map(" ".join)
    return st.one_of(worded, st.text(max_size=120), st.text(alphabet=st.sampled_from(" .!?\n\t\u00a0\u200b-—…"), max_size=20))


@st.composite
def dialogues(draw, max_turns: int = 12) -> Dialogue:
    """Turns with any roles (two user turns in a row happen), sessions that only grow, unique ids
    (ids are unique in every source: LoCoMo's dia_id, LongMemEval's session:index, the store)."""
    n = draw(st.integers(0, max_turns))
    session, turns = 0, []
    for i in range(n):
        session += draw(st.integers(0, 1))
        role = draw(st.sampled_from([USER, ASSISTANT]))
        speaker = draw(st.sampled_from(["", "Ann", "Bob"]))
        turns.append(Turn(role, draw(dialogue_text()), f"D{session}:{i}", session, speaker, f"day {session}"))
    return Dialogue.from_turns(turns, id="fuzz")


def json_values(max_leaves: int = 12) -> st.SearchStrategy:
    """Any JSON document."""
    scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
               | st.text(max_size=20))
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=max_leaves)
