"""DynamicStructuredMemory: conflict pruning with history, owlrl checks, the LLM stage, replay,
persistence and export round-trips."""

from __future__ import annotations

import json
import threading

import pytest
from rdflib import RDF, Dataset, Graph, Literal, URIRef
from rdflib.compare import isomorphic

from core.llm.fake import ScriptedLLM
from core.methods.dsmart import conflicts as cf
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.vocab import DSM, USER, entity, noun_class, relation, turn_graph


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


def memory(nlp, llm=None, strong=False, **config):
    return DynamicStructuredMemory(llm, strong=strong, config=DSMConfig(**config), nlp=nlp)


def test_renaming_the_dog_keeps_only_max_and_rex_in_history(nlp):
    m = memory(nlp)
    m.observe_round("My dog is Rex.", "What a nice name!")
    record = m.observe_round("Actually my dog is called Max.", "Noted.")
    dog = entity("user dog")
    assert set(m.graph.objects(dog, DSM.name)) == {Literal("Max")}
    assert [(p.triple, p.rule) for p in record.pruned] == [((dog, DSM.name, Literal("Rex")), "functional")]
    assert "Rex" in record.pruned[0].reason
    assert (dog, DSM.name, Literal("Rex")) in m.graph_at(1)  # replay: Rex was there after round 1


def test_moving_replaces_the_city_and_likes_accumulate(nlp):
    m = memory(nlp)
    m.observe_round("I live in Paris.", "Lovely.")
    m.observe_round("I like pizza.", "Yum.")
    m.observe_round("I moved to Berlin.", "Exciting!")
    m.observe_round("I like pasta.", "Me too.")
    assert set(m.graph.objects(USER, DSM.livesIn)) == {entity("Berlin")}
    assert set(m.graph.objects(USER, DSM.likes)) == {entity("pizza"), entity("pasta")}  # not functional
    pruned = [p.triple for r in m.history for p in r.pruned]
    assert pruned == [(USER, DSM.livesIn, entity("Paris"))]


def test_negation_prunes_the_opposite_relation(nlp):
    m = memory(nlp)
    m.observe_round("I like coffee.", "")
    record = m.observe_round("I don't like coffee anymore.", "")
    assert (USER, DSM.likes, entity("coffee")) not in m.graph
    assert (USER, DSM.dislikes, entity("coffee")) in m.graph
    assert record.pruned[0].rule == "opposite"


def test_updated_counts_replace_the_old_amount(nlp):
    m = memory(nlp)
    m.observe_round("I need 125 stars to reach the gold level.", "Good luck.")
    m.observe_round("Actually, I need 120 stars to reach the gold level.", "Thanks for correcting.")
    q = entity("user need star count")
    assert set(m.graph.objects(q, DSM.amount)) == {Literal(120)}


def test_owlrl_reports_disjoint_classes_and_the_old_type_is_pruned():
    g = Graph()
    x = entity("jordan")
    g.add((x, RDF.type, DSM.Person))
    g.add((x, RDF.type, DSM.Place))
    errors = cf.reasoner_errors(g)
    assert any("Disjoint classes" in e and str(x) in e for e in errors)
    # as a conflict: the old Person typing clashes with the new Place typing
    old, fragment = Graph(), Graph()
    old.add((x, RDF.type, DSM.Person))
    fragment.add((x, RDF.type, DSM.Place))
    found, _ = cf.disjoint_conflicts(old, fragment, [])
    assert [(c.triple, c.rule) for c in found] == [((x, RDF.type, DSM.Person), "disjoint")]
    assert cf.reasoner_errors(fragment) == []


def test_disjointness_through_minted_classes_is_detected(nlp):
    m = memory(nlp)
    m.observe_round("My friend Jordan is great.", "")  # Jordan: a Friend, so a Person
    x = entity("Jordan")
    assert (x, RDF.type, noun_class("friend")) in m.graph
    assert "verify" not in m.history[0].timings  # the detection closure found no error: no second closure
    record = m.observe_round("Jordan is a city.", "")  # now a City, so a Place: disjoint with Person
    assert (x, RDF.type, noun_class("friend")) in {p.triple for p in record.pruned}
    assert record.consistent and "verify" in record.timings  # checked again after pruning


def test_llm_conflict_stage_prunes_only_triples_of_the_old_graph(nlp):
    dog = entity("dog")  # "I have a dog": no possessive, so the individual is just "dog"
    reply = (f"```turtle\n<{USER}> <{DSM.likes}> <{entity('cats')}> .\n"
             f"<{USER}> <{DSM.has}> <{dog}> .\n```")
    llm = ScriptedLLM([reply])
    m = memory(nlp, llm=llm, strong=True, statements="text", extractor="spacy")
    m.observe_round("I have a dog.", "")  # first round: nothing to compare, no LLM call
    assert llm.calls == 0
    record = m.observe_round("I like cats.", "")
    assert [(p.triple, p.rule) for p in record.pruned] == [((USER, DSM.has, dog), "llm")]  # likes cats: not in G_{t-1}
    assert "origin rdf" in llm.requests[-1][0].content and "ent:dog" in llm.requests[-1][0].content


def test_malformed_llm_conflict_output_is_noted_not_fatal(nlp):
    m = memory(nlp, llm=ScriptedLLM(["I think there is no conflict."]), strong=True, statements="text", extractor="spacy")
    m.observe_round("I live in Paris.", "")
    record = m.observe_round("I like Paris.", "")
    assert record.pruned == ()
    assert any("conflict detection failed" in n for n in record.notes)


def test_weak_llm_scores_same_predicate_pairs(nlp):
    # the scorer prefers "no" (cannot both be true) for every pair
    llm = ScriptedLLM(scorer=lambda messages, option: 1.0 if option == "no" else 0.0)
    m = memory(nlp, llm=llm, strong=False, llm_conflicts="on")
    m.observe_round("I work at Google.", "")
    record = m.observe_round("I work at Apple.", "")
    assert [(p.triple, p.rule) for p in record.pruned] == [((USER, DSM.worksFor, entity("Google")), "llm")]


def test_llm_statement_is_used_and_bad_output_falls_back(nlp):
    m = memory(nlp, llm=ScriptedLLM(["The user's dog is named Rex."]), strong=False, statements="llm")
    record = m.observe_round("What should I feed my dog Rex?", "Dog food.")
    assert record.statement == "The user's dog is named Rex."
    assert (entity("user dog"), DSM.name, Literal("Rex")) in m.graph
    m2 = memory(nlp, llm=ScriptedLLM([""]), statements="llm")
    record = m2.observe_round("I live in Rome.", "Nice.")
    assert record.statement.startswith("User: I live in Rome.")
    assert any("used the round text" in n for n in record.notes)


def test_union_extractor_merges_the_llm_triples_with_the_spacy_ones(nlp):
    reply = json.dumps({"triples": [{"subject": "user", "subject_type": "person", "predicate": "likes",
                                     "object": "mountains", "object_type": "thing"}]})
    m = memory(nlp, llm=ScriptedLLM([reply]), statements="text", extractor="union", llm_conflicts="off")
    m.observe_round("We moved to Denver and I now have 4 cats.", "")
    assert (USER, DSM.likes, entity("mountains")) in m.graph  # from the LLM only
    assert (USER, DSM.livesIn, entity("Denver")) in m.graph  # from spaCy
    assert any(p == DSM.amount and o == Literal(4) for _, p, o in m.graph)  # from spaCy only
    broken = memory(nlp, llm=ScriptedLLM(["no json here"] * 2), statements="text", extractor="union", llm_conflicts="off")
    record = broken.observe_round("I now have 4 cats.", "")
    assert any(p == DSM.amount and o == Literal(4) for _, p, o in broken.graph)
    assert any("LLM extractor failed" in n for n in record.notes)


def test_save_load_turtle_trig_jsonld_round_trips(nlp):
    m = memory(nlp)
    for q in ("My dog is Rex.", "I live in Paris.", "I was born on 5 May 1990.", "Actually my dog is called Max."):
        m.observe_round(q, "OK.")
    restored = DynamicStructuredMemory.from_bytes(m.save(), nlp=nlp)
    assert isomorphic(restored.graph, m.graph)
    assert [r.pruned for r in restored.history] == [r.pruned for r in m.history]
    assert isomorphic(restored.graph_at(len(restored.history)), m.graph)  # the history replays the graph
    assert isomorphic(Graph().parse(data=m.to_turtle(), format="turtle"), m.graph)
    assert isomorphic(Graph().parse(data=m.to_jsonld(), format="json-ld"), m.graph)
    ds = Dataset()
    ds.parse(data=m.to_trig(), format="trig")
    first = ds.graph(turn_graph(0))
    assert (entity("user dog"), DSM.name, Literal("Rex")) in first
    assert m.asserted_by((entity("user dog"), DSM.name, Literal("Max"))) == 3


def test_import_turtle_merges_and_malformed_input_changes_nothing(nlp):
    m = memory(nlp)
    m.observe_round("I live in Paris.", "")
    before = m.save()
    with pytest.raises(ValueError, match="not valid Turtle"):
        m.import_turtle("this is <not turtle")
    assert m.save() == before
    record = m.import_turtle(f"<{USER}> <{DSM.livesIn}> <{entity('Oslo')}> .")
    assert record.source == "import"
    assert set(m.graph.objects(USER, DSM.livesIn)) == {entity("Oslo")}  # functional: Paris pruned
    with pytest.raises(ValueError):
        m.load(b"{}")
    with pytest.raises(ValueError):
        m.load(json.dumps({"format": "other"}).encode())


def test_background_maintenance_publishes_whole_snapshots(nlp):
    m = memory(nlp)
    started, release = threading.Event(), threading.Event()
    real = m._maintain

    def slow(*args):
        started.set()
        release.wait(5)
        return real(*args)

    m._maintain = slow
    before = m.graph
    m.submit_round("I live in Paris.", "", 0)
    started.wait(5)
    assert m.graph is before and len(m.graph) == 0  # a reader during maintenance sees G_{t-1}
    release.set()
    m.wait()
    assert (USER, DSM.livesIn, entity("Paris")) in m.graph
    m.close()


def test_a_new_number_on_a_minted_relation_supersedes_the_old_one(nlp):
    m = memory(nlp)
    m.observe_round("I'm buying a house and I got pre-approved for $350,000 from Wells Fargo.", "")
    record = m.observe_round("Remember, I got pre-approved for $400,000 from Wells Fargo.", "")
    approved = relation("approve_for")
    assert set(m.graph.objects(USER, approved)) == {Literal(400000)}
    assert [(p.triple, p.rule) for p in record.pruned] == [((USER, approved, Literal(350000)), "numeric")]


# -- the assistant repeating the user in the first person (issue 32) ------------------------------
def _subjects_of(memory, predicate_suffix: str) -> set[str]:
    return {str(s).rsplit("/", 1)[-1] for s, p, _ in memory.facts() if str(p).endswith(predicate_suffix)}


def test_an_assistant_echo_of_the_user_s_facts_is_not_the_assistant_s():
    from core.methods.dsmart.memory import DynamicStructuredMemory

    memory = DynamicStructuredMemory(None, strong=False)
    memory.observe_round("Hi, my name is Alice and I live in Lisbon.", "Nice to meet you, Alice!")
    memory.observe_round("Where do I live?", "I live in Lisbon.")  # the small model answered in the user's voice
    memory.observe_round("Tell me what you remember.", "My name is Alice.")  # an echo of an earlier round
    assert _subjects_of(memory, "#livesIn") == {"user"} and _subjects_of(memory, "#name") == {"user"}
    assert "not extracted" in memory.history[1].statement and "I live in Lisbon." in memory.history[1].statement


def test_the_assistant_s_questions_back_add_no_fact():
    from core.methods.dsmart.memory import DynamicStructuredMemory

    memory = DynamicStructuredMemory(None, strong=False)
    memory.observe_round("I swam two kilometres this morning before work.",
                         "That's really impressive! What's your favorite thing about being a swimmer?")
    memory.observe_round("We went to the shelter on Sunday just to look at the dogs.",
                         "That sounds lovely. Have you thought about adopting a greyhound?")
    said = " ".join(f"{s} {p} {o}" for s, p, o in memory.facts()).lower()
    assert "swimmer" not in said and "greyhound" not in said and "adopt" not in said
    assert "not extracted, the assistant's questions" in memory.history[1].statement
    assert "Assistant: That sounds lovely." in memory.history[1].statement  # what it stated is still read


def test_an_echo_that_misremembers_does_not_overwrite_the_user_s_fact():
    from core.methods.dsmart.memory import DynamicStructuredMemory

    memory = DynamicStructuredMemory(None, strong=False)
    memory.observe_round("My name is Alice.", "Hello Alice.")
    memory.observe_round("What is my name?", "My name is Bob.")  # dropped, not read as the user renaming themselves
    names = {str(o) for s, p, o in memory.facts() if str(p).endswith("#name")}
    assert names == {"Alice"}


def test_the_assistant_s_own_first_person_statements_are_kept():
    from core.methods.dsmart.statement import echoes_user

    assert not echoes_user("I am an AI assistant.", "Who are you?")  # the question is not about the user
    assert not echoes_user("I can help you plan the trip.", "I want to visit Porto.")  # no shared content word
    assert echoes_user("I live in Lisbon.", "Where do I live?")
    assert echoes_user("My dog is three years old.", "My dog is called Rex and he is three years old.")
    assert not echoes_user("You live in Lisbon.", "Where do I live?")  # second person: the right voice


def test_fallback_statement_recovers_a_turn_the_rules_lost_and_keeps_it_for_the_reader(nlp):
    from core.methods.dsmart.recall import said_by_fact
    from core.methods.dsmart.vocab import label_of

    llm = ScriptedLLM(["The user's neighbour Pavel fixes old clocks as a hobby."])
    m = memory(nlp, llm=llm, statements="fallback", llm_conflicts="off")
    record = m.observe_round("My neighbour Pavel repairs old clocks as a hobby.", "That sounds relaxing.")
    assert len(llm.requests) == 1  # the rules read 'repairs' as a noun: no fact of the turn
    assert record.statement.splitlines()[-1] == "Statement: The user's neighbour Pavel fixes old clocks as a hobby."
    labels = [" ".join(label_of(m.graph, x) for x in t) for t in record.facts_added]
    assert any("Pavel" in line and "clock" in line for line in labels)
    assert any("Pavel" in line and "clock" in line for line in said_by_fact(m).values())


def test_fallback_calls_no_llm_where_the_rules_found_a_fact_or_the_user_only_asked(nlp):
    llm = ScriptedLLM(["The user lives in Rome."])
    m = memory(nlp, llm=llm, statements="fallback", llm_conflicts="off")
    m.observe_round("I live in Rome.", "Nice.")
    m.observe_round("Why is the sky blue?", "Rayleigh scattering.")
    assert llm.requests == []
    text = memory(nlp, llm=llm, statements="text", llm_conflicts="off")
    text.observe_round("My neighbour Pavel repairs old clocks as a hobby.", "Nice.")
    assert llm.requests == [] and "Statement:" not in text.history[-1].statement


def test_an_unusable_fallback_statement_leaves_the_round_text(nlp):
    m = memory(nlp, llm=ScriptedLLM(["Question: what?"]), statements="fallback", llm_conflicts="off")
    record = m.observe_round("My neighbour Pavel repairs old clocks as a hobby.", "Nice.")
    assert "Statement:" not in record.statement
    assert any("used the round text" in n for n in record.notes)


def test_a_chat_about_a_person_in_a_town_leaves_no_question_and_no_disjointness(nlp):
    """Issue 57's bar: 'My sister Nadia lives in Murano. What do you know about Murano?' and the
    reply about the island left Murano typed a person and Nadia a place (an OWL-RL disjointness
    message); a later question became a fact."""
    m = memory(nlp)
    rounds = [("My sister Nadia lives in Murano. What do you know about Murano?",
               "Murano is an island near Venice, famous for its glass. Nadia must enjoy living there."),
              ("What is my mother's name", "I don't know what your mother's name is.")]
    for question, answer in rounds:
        record = m.observe_round(question, answer)
        assert record.consistent and record.errors == ()
    assert not any(str(o).lower() in ("what", "mother") for _, p, o in m.facts() if p == DSM.name)
    assert not any("mother" in str(s) for s, _, _ in m.facts())
    murano, nadia = entity("Murano"), entity("Nadia")
    assert (nadia, DSM.livesIn, murano) in m.graph and (murano, RDF.type, DSM.Place) in m.graph
    assert (murano, RDF.type, DSM.Person) not in m.graph and (nadia, RDF.type, DSM.Place) not in m.graph


def test_every_fact_records_its_speaker_and_the_assistant_never_prunes_the_user(nlp):
    """What only the reply said is the assistant's (shown apart, in its own named graph); the
    assistant repeating a user's fact leaves it the user's; a reply contradicting the user prunes
    nothing and its fact is not added."""
    m = memory(nlp)
    m.observe_round("My dog is Rex.", "What a nice name!")
    record = m.observe_round("I'm cooking dinner.", "Your kitchen has a big oven. Your dog is called Max.")
    dog, kitchen = entity("user dog"), entity("user kitchen")
    speakers = m.speakers()
    assert speakers[(dog, DSM.name, Literal("Rex"))] == "user"
    assert speakers[(USER, relation("cook"), entity("dinner"))] == "user"
    assert speakers[(USER, DSM.has, kitchen)] == "assistant"
    assert speakers[(USER, DSM.has, dog)] == "user"  # said again by the assistant: still the user's
    assert set(m.graph.objects(dog, DSM.name)) == {Literal("Rex")} and record.pruned == ()
    assert any("kept what the user said" in note and "Max" in note for note in record.notes)
    assert record.speaker((USER, DSM.has, kitchen)) == "assistant"
    restored = memory(nlp)
    restored.load(m.save())
    assert restored.history[1].assistant_only == record.assistant_only  # saved with the record
    ds = Dataset()
    ds.parse(data=m.to_trig(), format="trig")
    theirs = ds.graph(URIRef(str(turn_graph(1)) + "/assistant"))
    assert (USER, DSM.has, kitchen) in theirs and (USER, DSM.has, kitchen) not in ds.graph(turn_graph(1))
    assert (turn_graph(1), DSM.saidBy, USER) in ds.graph(turn_graph(1))


def test_a_user_correcting_the_assistant_prunes_its_fact(nlp):
    """The user's word outweighs the assistant's, not the reverse: a reply's value goes when the
    user states another."""
    m = memory(nlp)
    m.observe_round("I'm cooking dinner.", "Your dog is called Max.")
    record = m.observe_round("No, my dog is called Rex.", "Sorry!")
    dog = entity("user dog")
    assert set(m.graph.objects(dog, DSM.name)) == {Literal("Rex")}
    assert [p.triple for p in record.pruned] == [(dog, DSM.name, Literal("Max"))]
    assert m.speakers()[(dog, DSM.name, Literal("Rex"))] == "user"


def test_the_user_saying_the_assistants_fact_again_makes_it_theirs(nlp):
    """An assistant fact is used as the user's once the user confirms it by saying it."""
    m = memory(nlp)
    m.observe_round("I'm cooking dinner.", "Your kitchen has a big oven.")
    had = (USER, DSM.has, entity("user kitchen"))
    assert m.speakers()[had] == "assistant"
    m.observe_round("Yes, my kitchen has a big oven.", "Great.")
    assert m.speakers()[had] == "user"
