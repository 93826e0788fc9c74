"""Entity linking on hand-made cases, candidate gathering against a hand-built graph (brute
force), and the rankers against hand-computed BM25 and cosine values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.methods.kgaug.candidates import Candidate, CandidateSettings, gather, ordered_edges
from core.methods.kgaug.linking import EntityLinker, LinkerSettings, aliases, norm, normalise
from core.metrics.ranking import linking_counts, precision_recall
from core.methods.kgaug.rankers import BM25Ranker, KapingRanker, bm25_tokens
from core.methods.kgaug.triples import Triple
from core.resources import Embedder
from tests.kgaug_helpers import all_triples, small_graph


@pytest.fixture(scope="module")
def kg():
    return small_graph(extra=[("Fast Five", "release_year", "2011"), ("J. R. R. Tolkien", "nationality", "England"),
                              ("J. R. R. Tolkien", "award", "Prometheus Award")])


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


def names(linked):
    return [e.name for e in linked]


def test_normalisation_and_aliases():
    assert norm("Pokémon: The First Movie!") == "pokemon the first movie"
    text = "Who's in  ÉLAN?"
    normed, origin = normalise(text)
    assert normed == "who s in elan" and text[origin[normed.index("elan")]] == "É"
    assert aliases("Star Trek (Science Fiction Film)")[:2] == ["star trek science fiction film", "star trek"]
    assert "hobbit" in aliases("The Hobbit")
    assert "harry potter" in aliases("Harry Potter: The Cursed Child")


def test_exact_alias_longest_span_and_stop_words(kg):
    linker = EntityLinker(kg, LinkerSettings(use_spacy=False))
    found = linker.link("Was Simon Pegg in star trek? And who wrote The Hobbit or It?")
    assert names(found) == ["Simon Pegg", "Star Trek (Science Fiction Film)", "The Hobbit"]  # "It": stop word only
    by_name = {e.name: e for e in found}
    assert by_name["Star Trek (Science Fiction Film)"].method == "alias" and by_name["Simon Pegg"].method == "exact"
    e = by_name["Simon Pegg"]
    assert "Was Simon Pegg in star trek?"[e.start:e.end] == "Simon Pegg"
    # the longer span wins over the entity nested in it
    assert names(linker.link("I loved Find Me Guilty")) == ["Find Me Guilty"]
    assert linker.link("nothing here at all") == []


def test_duplicate_names_link_together_and_ties_go_to_degree(kg):
    linker = EntityLinker(kg, LinkerSettings(use_spacy=False))
    (tolkien,) = linker.link("books by J.R.R. Tolkien")
    both = {kg.entities[i] for i in tolkien.ids}
    assert both == {"J.R.R. Tolkien", "J. R. R. Tolkien"}  # same normalised name: Freebase duplicates
    assert tolkien.name == "J. R. R. Tolkien"  # equal normalised names: degree 2 beats degree 1


def test_ties_by_degree_on_a_shared_alias():
    from core.methods.kgaug.graph import FROM_FILE, GraphBuilder

    b = GraphBuilder()
    b.add("Crash (2004 film)", "has_genre", "Drama", FROM_FILE)
    for genre in ("Drama", "Action", "Thriller"):
        b.add("Crash (1996 film)", "has_genre", genre, FROM_FILE)
    linker = EntityLinker(b.build(), LinkerSettings(use_spacy=False))
    (e,) = linker.link("Have you seen Crash?")
    assert e.name == "Crash (1996 film)" and e.method == "alias"  # degree 3 beats degree 1


def test_spacy_mentions_single_words_and_fuzzy(kg, nlp):
    linker = EntityLinker(kg, LinkerSettings(), nlp=nlp)
    assert names(linker.link("What else did Sydney Lumet direct?")) == ["Sidney Lumet"]  # fuzzy
    assert linker.link("What else did Sydney Lumet direct?")[0].method == "fuzzy"
    assert "Drama" in names(linker.link("Is 12 Angry Men a Drama?"))
    assert "2011" in names(linker.link("Was Fast Five released in 2011?"))
    assert names(linker.link("it was a drama of sorts")) == []  # lowercase common word: not a name


def test_linking_precision_recall():
    tp, predicted, gold = linking_counts(["A", "B", "C"], ["B", "C", "D", "E"])
    assert (tp, predicted, gold) == (2, 3, 4)
    assert precision_recall(tp, predicted, gold) == (2 / 3, 0.5)
    assert all(math.isnan(x) for x in precision_recall(0, 0, 0))


# -- candidates ---------------------------------------------------------------------------------
def brute_neighbourhood(kg, seeds, hops):
    names_ = {kg.entities[s] for s in seeds}
    found = set()
    for _ in range(hops):
        step = {t for t in all_triples(kg) if t.head in names_ or t.tail in names_}
        found |= step
        names_ |= {x for t in step for x in (t.head, t.tail)}
    return found


def test_one_hop_when_enough_else_two_hops(kg):
    lumet, diesel = kg.entity_id("Sidney Lumet"), kg.entity_id("Vin Diesel")
    one = gather(kg, [lumet], CandidateSettings(min_one_hop=3))
    assert {c.triple for c in one} == brute_neighbourhood(kg, [lumet], 1) and {c.hop for c in one} == {1}
    two = gather(kg, [lumet], CandidateSettings(min_one_hop=20))
    assert {c.triple for c in two} == brute_neighbourhood(kg, [lumet], 2)
    assert {c.triple for c in two if c.hop == 1} == brute_neighbourhood(kg, [lumet], 1)
    assert [c.hop for c in two] == sorted(c.hop for c in two)  # one-hop triples first
    both = gather(kg, [lumet, diesel], CandidateSettings(min_one_hop=1))
    assert {c.triple for c in both} == brute_neighbourhood(kg, [lumet], 1) | brute_neighbourhood(kg, [diesel], 1)
    assert gather(kg, [], CandidateSettings()) == []


def test_cap_deals_relations_round_robin():
    from core.methods.kgaug.graph import FROM_FILE, GraphBuilder

    b = GraphBuilder()
    for i in range(30):
        b.add(f"Movie {i}", "has_genre", "Drama", FROM_FILE)
    b.add("Drama", "is-a", "Genre", FROM_FILE)
    b.add("Drama Award", "awarded_for", "Drama", FROM_FILE)
    for i in range(5):  # a well-connected movie comes first within its relation
        b.add("Movie 7", "starred_actors", f"Actor {i}", FROM_FILE)
    kg = b.build()
    drama = kg.entity_id("Drama")
    order = [kg.triple(int(i)) for i in ordered_edges(kg, drama)]
    assert order[0] == Triple("Movie 7", "has_genre", "Drama")  # the largest group leads, best-connected first
    assert {t.relation for t in order[:3]} == {"has_genre", "is-a", "awarded_for"}
    capped = gather(kg, [drama], CandidateSettings(max_candidates=4, min_one_hop=1))
    assert len(capped) == 4 and {c.triple.relation for c in capped} == {"has_genre", "is-a", "awarded_for"}
    hub = gather(kg, [kg.entity_id("Movie 3")], CandidateSettings(min_one_hop=20, max_hub_degree=10))
    assert [c.triple for c in hub] == [Triple("Movie 3", "has_genre", "Drama")]  # no second hop through the hub


# -- rankers ------------------------------------------------------------------------------------
def cands(texts):
    return [Candidate(i, Triple(*t), 1, "x") for i, t in enumerate(texts)]


def test_bm25_matches_the_okapi_formula_by_hand():
    triples = [("Find Me Guilty", "directed_by", "Sidney Lumet"), ("Find Me Guilty", "starred_actors", "Vin Diesel"),
               ("Fast Five", "starred_actors", "Vin Diesel"), ("12 Angry Men", "has_genre", "Drama"),
               ("Drama", "is-a", "Genre")]
    query = "who directed Find Me Guilty"
    got = BM25Ranker().scores(query, [f"{h} {r.replace('_', ' ')} {t}" if r != "is-a" else f"{h} is a {t}" for h, r, t in triples])
    docs = [bm25_tokens(f"{h} {r.replace('_', ' ')} {t}" if r != "is-a" else f"{h} is a {t}") for h, r, t in triples]
    assert docs[0] == ["find", "guilty", "directed", "sidney", "lumet"]  # "me", "by" are stop words
    n, avgdl, k1, b = len(docs), sum(map(len, docs)) / len(docs), 1.5, 0.75
    # hand computation: query terms "directed", "find", "guilty" ("who" is a stop word)
    df = {"directed": 1, "find": 2, "guilty": 2}
    idf = {w: math.log((n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    assert all(v > 0 for v in idf.values())  # rank-bm25 floors negative idf; this case has none
    expected = [sum(idf[w] * doc.count(w) * (k1 + 1) / (doc.count(w) + k1 * (1 - b + b * len(doc) / avgdl)) for w in df)
                for doc in docs]
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    ranked = BM25Ranker().rank(query, cands(triples), k=2)
    assert [r.triple.relation for r in ranked] == ["directed_by", "starred_actors"]
    assert BM25Ranker().scores("the of and", ["a b c"]).tolist() == [0.0]


class TableEmbedder(Embedder):
    """Fixed, unnormalised vectors by text (normalised here as the protocol requires)."""

    name, dim = "table", 3

    def __init__(self, table):
        self.table = table
        self.calls = 0

    def encode(self, texts, batch_size=64):
        self.calls += 1
        v = np.array([self.table[t] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_kaping_is_the_cosine_computed_by_hand():
    triples = [("A", "r", "B"), ("C", "r", "D"), ("E", "r", "F")]
    table = {"q": [1, 2, 2], "A r B": [2, 0, 0], "C r D": [0, 3, 4], "E r F": [1, 2, 2]}
    emb = TableEmbedder(table)
    ranker = KapingRanker(emb)
    got = ranker.scores("q", ["A r B", "C r D", "E r F"])
    # cos(q, x) = q.x / (|q| |x|), |q| = 3
    np.testing.assert_allclose(got, [2 / (3 * 2), (6 + 8) / (3 * 5), 1.0], rtol=1e-6)
    ranked = ranker.rank("q", cands(triples))
    assert [r.triple.head for r in ranked] == ["E", "C", "A"]
    calls = emb.calls
    ranker.rank("q", cands(triples))
    assert emb.calls == calls + 1  # triple vectors are remembered: only the query is embedded again


def test_ties_keep_the_gathering_order():
    ranked = BM25Ranker().rank("unrelated words", cands([("A", "r", "B"), ("C", "r", "D"), ("E", "r", "F")]))
    assert [r.triple.head for r in ranked] == ["A", "C", "E"]
