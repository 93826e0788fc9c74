"""The reasoner's findings in words (core/methods/dsmart/findings.py, issue 57): each OWL-RL message
becomes a sentence naming the thing and what it was read as, with the facts to fix or forget."""

from __future__ import annotations

from rdflib import RDF, RDFS, Graph, Literal

from core.methods.dsmart.findings import findings
from core.methods.dsmart.memory import TurnRecord
from core.methods.dsmart.vocab import BASE, DSM, USER, entity

MURANO, NADIA = entity("Murano"), entity("Nadia")


def test_one_thing_read_as_a_person_and_a_place_is_said_in_words_with_its_round_and_sentence():
    said = "My sister Nadia lives in Murano."
    added = ((MURANO, RDF.type, DSM.Person), (MURANO, RDF.type, DSM.Place), (MURANO, RDFS.label, Literal("Murano")),
             (NADIA, DSM.livesIn, MURANO))
    record = TurnRecord(0, said, "Murano is an island.", f"User: {said}\nAssistant: Murano is an island.", added,
                        assistant_only=((MURANO, RDF.type, DSM.Person),))
    graph = Graph()
    for triple in added:
        graph.add(triple)
    message = f"Disjoint classes {BASE}Agent and {BASE}Place have a common individual {MURANO}"
    [finding] = findings(graph, [record], [message])
    assert finding.kind == "types" and finding.message == message
    assert finding.text == ("'Murano' was read both as a person and as a place, which cannot both be true, from round 1: "
                            '"Murano is an island." "My sister Nadia lives in Murano." Fix or forget the fact that is wrong:')
    facts = {f.fact: f for f in finding.facts}
    assert set(facts) == {"Murano | is a | Person", "Murano | is a | Place"}
    assert facts["Murano | is a | Person"].speaker == "assistant" and facts["Murano | is a | Person"].round == 1
    assert facts["Murano | is a | Place"].speaker == "user" and facts["Murano | is a | Place"].sentence == said


def test_two_relations_that_exclude_each_other_and_an_unknown_message():
    coffee = entity("coffee")
    added = ((USER, DSM.likes, coffee), (USER, DSM.dislikes, coffee), (USER, RDFS.label, Literal("user")),
             (coffee, RDFS.label, Literal("coffee")))
    record = TurnRecord(0, "I like coffee. I dislike coffee.", "", "User: I like coffee. I dislike coffee.", added)
    graph = Graph()
    for triple in added:
        graph.add(triple)
    message = f"Erroneous usage of disjoint properties {DSM.likes} and {DSM.dislikes} on {USER} and {coffee}"
    relations, other = findings(graph, [record], [message, "Irreflexive property used on x with y"])
    assert relations.text.startswith("The memory holds both 'user likes coffee' and 'user dislikes coffee'")
    assert [(f.fact, f.sentence) for f in relations.facts] == [("user | likes | coffee", "I like coffee."),
                                                              ("user | dislikes | coffee", "I dislike coffee.")]
    assert other.kind == "other" and other.facts == () and "below" in other.text
