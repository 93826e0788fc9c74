"""Triton's feature model (core/methods/kgaug/features.py): its TF-IDF and relation classifier
against sklearn's, features by hand, a tiny split trained end to end, save/load round trip."""

from __future__ import annotations

import numpy as np
import pytest

from core.methods.kgaug.candidates import Candidate, gather
from core.methods.kgaug.features import (FEATURES, OTHER, FeatureRelevanceModel, FeatureTrainSettings, read_relation,
                                         train_feature_model)
from core.methods.kgaug.rankers import TritonFeatureRanker
from core.methods.kgaug.train import training_examples
from core.methods.kgaug.triples import Triple
from tests.kgaug_helpers import tiny_dataset

TEMPLATES = {  # relation -> questions about a film or book F
    "directed_by": ["Who directed F?", "Do you know the director of F?", "Who was the director of F?"],
    "starred_actors": ["Who starred in F?", "Which actors are in F?", "Who acts in F?"],
    "has_genre": ["What genre is F?", "What kind of film is F?", "Which genre does F belong to?"],
}
GOLD = {("Find Me Guilty", "directed_by"): "Sidney Lumet", ("12 Angry Men", "directed_by"): "Sidney Lumet",
        ("Find Me Guilty", "starred_actors"): "Vin Diesel", ("12 Angry Men", "starred_actors"): "Henry Fonda",
        ("Fast Five", "starred_actors"): "Vin Diesel", ("Find Me Guilty", "has_genre"): "Crime Fiction",
        ("12 Angry Men", "has_genre"): "Drama", ("Fast Five", "has_genre"): "Action Film"}
QUESTIONS = [(q.replace("F", film), (film, relation, tail)) for (film, relation), tail in GOLD.items()
             for q in TEMPLATES[relation]]  # 24 dialogues; index % 5 == 0 (5 of them) held out

QUERIES = ["who directed the film", "which films did he direct", "who starred in it", "what genre is it",
           "who wrote the book", "films starring him", "who directed it and who starred"]
LABELS = ["~directed_by", "~directed_by", "starred_actors", "has_genre", "written_by", "~starred_actors", "~directed_by"]


def sklearn_reference():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    X = vec.fit_transform(QUERIES)
    clf = LogisticRegression(C=10, max_iter=3000).fit(X, LABELS)
    model = FeatureRelevanceModel({str(k): int(v) for k, v in vec.vocabulary_.items()}, vec.idf_, list(clf.classes_),
                                  clf.coef_, clf.intercept_, np.zeros(len(FEATURES)), 0.0)
    return vec, clf, model


def test_tfidf_and_relation_probabilities_match_sklearn():
    vec, clf, model = sklearn_reference()
    for text in ["Who directed it? Who directed it!", "films starring Vin Diesel", "nothing known here"]:
        ref = vec.transform([text]).toarray()[0]
        cols, vals = model.tfidf(text)
        mine = np.zeros_like(ref)
        mine[cols] = vals
        assert np.allclose(mine, ref)
        assert np.allclose(model.relation_logprobs(text), clf.predict_log_proba(vec.transform([text]))[0])


def test_features_by_hand():
    _, _, model = sklearn_reference()
    cands = [Candidate(0, Triple("12 Angry Men", "directed_by", "Sidney Lumet"), 1, "Sidney Lumet", 9),
             Candidate(1, Triple("12 Angry Men", "starred_actors", "Henry Fonda"), 2, "12 Angry Men", 0)]
    logp = np.log(np.full(len(model.classes), 1 / len(model.classes)))
    logp[model.classes.index("~directed_by")] = np.log(0.5)
    f = model.features("which films did Sidney Lumet direct", cands, ["I like Henry Fonda"], relation_logp=logp,
                       bm25=np.array([2.0, 0.5]))
    assert read_relation(cands[0].triple, "Sidney Lumet") == "~directed_by"
    row0, row1 = dict(zip(FEATURES, f[0])), dict(zip(FEATURES, f[1]))
    assert row0["relation_logp"] == pytest.approx(np.log(0.5))
    assert row1["relation_logp"] == pytest.approx(logp[model.classes.index("starred_actors")])
    assert (row0["bm25_scaled"], row1["bm25_scaled"], row0["bm25"]) == (1.0, 0.25, 2.0)
    assert (row0["second_hop"], row1["second_hop"]) == (0.0, 1.0)
    assert row0["other_in_query"] == 0.0 and row1["other_in_context"] == 1.0  # "12 angry men" / "henry fonda"
    assert row0["other_log_degree"] == pytest.approx(np.log(10)) and row1["other_log_degree"] == 0.0
    assert (row0["via_first_linked"], row1["via_first_linked"]) == (1.0, 0.0)
    assert (row0["other_linked"], row1["other_linked"]) == (0.0, 0.0)  # 12 Angry Men was reached on hop 2 only
    # an unknown relation scores a tenth of OTHER, or the lowest class when there is no OTHER
    odd = [Candidate(2, Triple("X", "odd_relation", "Y"), 1, "X", 1)]
    assert model.features("q", odd, relation_logp=logp)[0, 0] == pytest.approx(logp.min())
    assert OTHER not in model.classes


@pytest.fixture()
def tiny(tmp_path):
    return tiny_dataset(tmp_path, QUESTIONS)


def test_tiny_split_end_to_end_and_round_trip(tiny, tmp_path):
    path, knowledge = tiny
    model, report = train_feature_model(training_examples([path], "train"), knowledge, FeatureTrainSettings())
    assert report.examples == 19 and set(model.classes) == {"directed_by", "starred_actors", "has_genre"}
    assert model.coef[FEATURES.index("relation_logp")] > 0  # the asked-for relation counts for relevance
    ranker = TritonFeatureRanker(model)
    held_out = training_examples([path], "eval")
    assert len(held_out) == 5
    for ex in held_out:  # never trained on
        linked = knowledge.linker.link(ex.query)
        ranked = ranker.rank(ex.query, gather(knowledge.kg, [e.entity for e in linked]), context=["Hi!", "Hello."])
        assert ranked[0].triple == tuple(ex.gold[0]), (ex.query, ranked[:3])
    model.save(tmp_path / "m", {"note": "test"})
    again = FeatureRelevanceModel.load(tmp_path / "m")
    cands = gather(knowledge.kg, [knowledge.kg.entity_id("Fast Five")])
    assert np.allclose(again.logits("What genre is Fast Five?", cands), model.logits("What genre is Fast Five?", cands), atol=1e-5)
    with pytest.raises(Exception, match="train-triton"):
        FeatureRelevanceModel.load(tmp_path / "missing")
