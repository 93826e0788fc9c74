"""Property-based fuzzing of D-SMART's memory: the spaCy extractor and the graph update.

Any text: the extractor returns a graph that survives the Turtle export and import unchanged.
Any sequence of rounds: the history never loses a triple (each one ever asserted is in the current
graph or in the record of the round that pruned it, with a reason), replaying the records gives
each round's graph, a round removes only what it records as pruned and only triples that were
there, and the saved memory loads back the same. An LLM's conflict reply, whatever it says,
yields conflicts or LLMOutputError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import isomorphic

from core.llm.base import LLMOutputError
from core.llm.fake import ScriptedLLM
from core.methods.dsmart import conflicts as cf
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.extract import SpacyExtractor, Utterance
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.vocab import bind_prefixes, parse_rdf
from tests.fuzz_helpers import WORDS, budget, dialogue_text

speakers = st.sampled_from(["user", "assistant", "narrator"])
# Sentences that reach the extractor's rules: facts stated, restated and contradicted.
FACTS = ["My dog is called Rex.", "My dog is called Max.", "I live in Paris.", "I moved to Lyon.", "I have 3 cats.",
         "I have 5 cats now.", "I like jazz.", "I hate jazz.", "My sister Anna works at the Louvre.",
         "I've added 25 postcards.", "I am 30 years old.", "I am 31.", "Anna is a doctor.", "Anna is a city."]
round_text = st.one_of(st.sampled_from(FACTS), st.lists(st.sampled_from(FACTS), min_size=1, max_size=3).map(" ".join),
                       dialogue_text())


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


@budget(0.5)
@given(st.lists(st.tuples(speakers, round_text), min_size=1, max_size=3))
def test_extractor_fragment_survives_turtle_export_and_import(nlp, utterances):
    fragment = SpacyExtractor(nlp).extract([Utterance(s, t) for s, t in utterances])
    assert all(isinstance(term, (URIRef, Literal, BNode)) for triple in fragment for term in triple)
    back = parse_rdf(bind_prefixes(fragment).serialize(format="turtle"), "turtle")
    assert isomorphic(back, fragment)


@budget(0.25)
@given(st.lists(st.tuples(round_text, round_text), min_size=1, max_size=4), st.booleans())
def test_graph_history_never_loses_a_triple(nlp, rounds, reasoner):
    memory = DynamicStructuredMemory(config=DSMConfig(reasoner=reasoner), nlp=nlp)
    graphs = [set()]
    for question, answer in rounds:
        record = memory.observe_round(question, answer)
        before, after = graphs[-1], set(memory.graph)
        pruned = {p.triple for p in record.pruned}
        assert pruned <= before  # only triples that were there are pruned
        assert before - after <= pruned  # nothing leaves the graph unrecorded
        assert after == (before - pruned) | set(record.added)
        assert all(p.reason and p.rule for p in record.pruned)
        graphs.append(after)
    asserted = {t for r in memory.history for t in r.added}
    pruned_ever = {p.triple for r in memory.history for p in r.pruned}
    assert asserted <= set(memory.graph) | pruned_ever
    for n, graph in enumerate(graphs):
        assert set(memory.graph_at(n)) == graph  # the records replay every round's graph
    again = DynamicStructuredMemory.from_bytes(memory.save(), nlp=nlp)
    assert again.history == memory.history and set(again.graph) == set(memory.graph)
    dataset = Graph()
    parse_rdf(memory.to_trig(), "trig", dataset)  # the TriG export parses back


@budget(0.5)
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(WORDS + ["ent:user", "dsm:name", '"Rex"', "."]), max_size=10).map(" ".join)))
def test_llm_conflict_reply_gives_conflicts_or_llm_output_error(body):
    old = parse_rdf("@prefix ex: <http://example.org/> . ex:dog ex:name \"Rex\" .")
    new = parse_rdf("@prefix ex: <http://example.org/> . ex:dog ex:name \"Max\" .")
    llm = ScriptedLLM([f"Here you are:\n```turtle\n{body}\n```"])
    try:
        found = cf.llm_conflicts_prompted(llm, old, new, temperature=0.0)
    except LLMOutputError as err:
        assert str(err)
        return
    assert all(c.triple in old for c in found)
