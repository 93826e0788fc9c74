"""The local spaCy extractor and the LLM extractor on sentences with known triples."""

from __future__ import annotations

import datetime as dt

import pytest
from rdflib import RDF, Literal

from core.llm.base import LLMOutputError
from core.llm.fake import ScriptedLLM
from core.methods.dsmart.extract import LLMExtractor, SpacyExtractor, Utterance
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.vocab import ASSISTANT, DSM, USER, entity, noun_class, relation


@pytest.fixture(scope="module")
def extractor():
    from core.resources import load_spacy

    return SpacyExtractor(load_spacy())


def facts(extractor, text, speaker="user"):
    return {t for t in extractor.extract([Utterance(speaker, text)]) if is_fact(t)}


def test_possessive_copula_names_the_owned_thing(extractor):
    got = facts(extractor, "My dog is Rex.")
    dog = entity("user dog")
    assert (dog, DSM.name, Literal("Rex")) in got
    assert (USER, DSM.has, dog) in got
    assert (dog, RDF.type, noun_class("dog")) in got


def test_passive_naming_and_my_name_is(extractor):
    assert (entity("user dog"), DSM.name, Literal("Max")) in facts(extractor, "Actually my dog is called Max.")
    got = facts(extractor, "My name is Alice.")
    assert (USER, DSM.name, Literal("Alice")) in got
    assert not any(s == entity("user name") for s, _, _ in got)  # no individual called "my name"


def test_living_and_moving_map_to_the_functional_lives_in(extractor):
    assert (USER, DSM.livesIn, entity("Paris")) in facts(extractor, "I live in Paris.")
    got = facts(extractor, "I moved to Berlin.")
    assert (USER, DSM.livesIn, entity("Berlin")) in got
    assert (entity("Berlin"), RDF.type, DSM.Place) in got


def test_counts_are_quantities_with_typed_amounts(extractor):
    got = facts(extractor, "I've added 25 new postcards to my collection.")
    q = entity("user add postcard count")
    assert (q, DSM.amount, Literal(25)) in got
    assert Literal(25).datatype is not None  # xsd:integer, not a string
    assert (q, DSM.ofKind, noun_class("postcard")) in got
    assert (USER, relation("add"), q) in got
    # "my 5th project" and "4 projects completed" count the same thing
    assert (entity("user finish project count"), DSM.amount, Literal(5)) in facts(extractor, "I just finished my 5th project.")
    assert (entity("user finish project count"), DSM.amount, Literal(4)) in facts(extractor, "I've completed 4 projects.")


def test_age_birth_date_and_negation(extractor):
    assert (USER, DSM.age, Literal(30)) in facts(extractor, "I'm 30 years old.")
    assert (USER, DSM.birthDate, Literal(dt.date(1990, 5, 5))) in facts(extractor, "I was born on 5 May 1990.")
    assert (USER, DSM.dislikes, entity("coffee")) in facts(extractor, "I don't like coffee.")
    assert (USER, DSM.likes, entity("pizza")) in facts(extractor, "I like pizza.")
    got = facts(extractor, "I do not own a car.")
    assert (USER, relation("not_own"), entity("car")) in got and (USER, DSM.has, entity("car")) not in got


def test_entities_apposition_and_storage(extractor):
    got = facts(extractor, "My sister Anna works at Google.")
    anna, google = entity("Anna"), entity("Google")
    assert {(anna, DSM.worksFor, google), (anna, RDF.type, DSM.Person), (anna, RDF.type, noun_class("sister")),
            (USER, DSM.has, anna), (google, RDF.type, DSM.Organization)} <= got
    got = facts(extractor, "I keep my old sneakers under my bed.")
    assert (entity("user sneaker"), DSM.storedAt, entity("user bed")) in got


def test_speakers_resolve_first_and_second_person(extractor):
    assert (ASSISTANT, DSM.likes, entity("chess")) in facts(extractor, "I like chess.", speaker="assistant")
    assert (USER, DSM.livesIn, entity("Rome")) in facts(extractor, "You live in Rome.", speaker="assistant")
    assert facts(extractor, "Where do you live?") == set()  # questions assert nothing


def test_llm_extractor_maps_json_triples_onto_the_vocabulary():
    reply = ('{"triples": [{"subject": "user", "subject_type": "person", "predicate": "lives_in", '
             '"object": "Lisbon", "object_type": "place"}, {"subject": "user", "predicate": "not_like", '
             '"object": "rain", "object_type": "thing"}, {"subject": "postcards added by user", "subject_type": '
             '"quantity", "predicate": "amount", "object": "25", "object_type": "literal"}]}')
    got = {t for t in LLMExtractor(ScriptedLLM([reply])).extract([Utterance("user", "I live in Lisbon.")]) if is_fact(t)}
    assert (USER, DSM.livesIn, entity("Lisbon")) in got
    assert (entity("Lisbon"), RDF.type, DSM.Place) in got
    assert (USER, relation("not_like"), entity("rain")) in got
    assert (entity("postcards added by user"), DSM.amount, Literal(25)) in got


def test_llm_extractor_rejects_malformed_output():
    with pytest.raises(LLMOutputError):
        LLMExtractor(ScriptedLLM(["sure! the triples are: user lives in Lisbon"])).extract([Utterance("user", "x")])


def test_adverbial_and_prepositional_counts_and_money(extractor):
    got = facts(extractor, "I've worn my new sneakers four times already.")
    assert (entity("user wear user sneaker time count"), DSM.amount, Literal(4)) in got  # about the user's sneakers
    assert (entity("user be page count"), DSM.amount, Literal(220)) in facts(extractor, "I'm now on page 220.")
    got = facts(extractor, "By the way, I'm buying a house and I got pre-approved for $350,000 from Wells Fargo.")
    assert (USER, relation("approve_for"), Literal(350000)) in got
    assert not any(o == entity("way") for _, _, o in got)  # "by the way" asserts nothing


def test_a_used_to_clause_is_a_former_habit_not_the_current_value(extractor):
    from core.methods.dsmart.vocab import relation

    got = facts(extractor, "I used to live in Boston, but last month I moved to Denver.")
    assert (USER, DSM.livesIn, entity("Denver")) in got
    assert (USER, DSM.livesIn, entity("Boston")) not in got  # one current city, the other a former one
    assert (USER, relation("used to live in"), entity("Boston")) in got
    assert (USER, relation("used to drive"), entity("Fiat")) in facts(extractor, "I used to drive a red Fiat.")
    negated = facts(extractor, "I didn't use to like coffee.")
    assert not any(p == relation("used to like") or p == DSM.likes for _, p, _ in negated)
    # 'used' with an object is a purpose, not a former habit
    assert (USER, relation("cut"), entity("bread")) in facts(extractor, "I used the knife to cut bread.")


@pytest.mark.parametrize("speaker, text", [
    ("user", "What is my mother's name?"),
    ("user", "What is my mother's name"),  # no question mark: still a question
    ("user", "what is my mothers name"),
    ("user", "Do you remember what my mother's name is?"),
    ("user", "Do you know where my sister lives?"),
    ("user", "Is my dog called Rex"),
    ("assistant", "I don't know what your mother's name is."),
    ("assistant", "What is your mother's name?"),
])
def test_a_question_states_no_fact(extractor, speaker, text):
    """A question asks for a value: neither it nor a clause a wh-word opens is stored as a fact
    (issue 57: 'What is my mother's name?' became `user's mother | name | mother`)."""
    got = {t for t in facts(extractor, text, speaker) if t[2] != DSM.Speaker}
    assert got == set()


def test_a_statement_opened_by_a_wh_word_is_still_read(extractor):
    """'When I moved ...' and a statement's wh-clause ('that's what my smartwatch has been showing')
    state things: they are no questions (an indirect question is a question's wh-clause, or one of
    'know', 'wonder' ...)."""
    assert (USER, DSM.has, entity("user smartwatch")) in facts(extractor, "That's what my smartwatch has been showing for weeks.")
    assert (USER, relation("move to"), entity("Berlin")) in facts(extractor, "When I moved to Berlin, I found a flat.") \
        or (USER, DSM.livesIn, entity("Berlin")) in facts(extractor, "When I moved to Berlin, I found a flat.")


def test_a_name_is_typed_by_what_it_is_not_by_a_misread_entity_label(extractor):
    """spaCy's small model reads 'Nadia' in 'My sister Nadia' as a place and 'Murano' in 'Murano is an
    island' as a person; the noun a name is (sister, island) and the place someone lives in outweigh
    that guess, so no individual is both a person and a place (issue 57's disjointness message)."""
    got = facts(extractor, "My sister Nadia lives in Murano.")
    nadia, murano = entity("Nadia"), entity("Murano")
    assert (nadia, RDF.type, noun_class("sister")) in got and (nadia, RDF.type, DSM.Place) not in got
    assert (murano, RDF.type, DSM.Place) in got
    got = facts(extractor, "Murano is an island near Venice.", "assistant")
    assert (murano, RDF.type, noun_class("island")) in got and (murano, RDF.type, DSM.Person) not in got
    assert (entity("Venice"), RDF.type, DSM.Place) in got  # a guess nothing contradicts stays


def test_a_type_the_memory_holds_outweighs_a_guess(extractor):
    from rdflib import Graph

    said = [Utterance("user", "Murano is lovely.")]
    assert (entity("Murano"), RDF.type, DSM.Person) in extractor.extract(said)  # the recogniser's guess
    known = Graph()
    known.add((entity("Murano"), RDF.type, DSM.Place))  # the memory already places it
    assert (entity("Murano"), RDF.type, DSM.Person) not in extractor.extract(said, known=known)
