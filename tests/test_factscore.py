"""FactScore with NEIP (issue 16): splitter, aggregation, thresholds, agreement, bad input, verifiers.

Fast tests use hand-made labels and NLI scores, a scripted NLI model and the scripted LLM; the
splitter tests parse with the real small spaCy model (loaded once)."""

from __future__ import annotations

import json
import math
import time

import pytest

from core.metrics.fact_types import LABELS, NEI, REFUTES, SUPPORTS, FactItem, Passage, normalise_label
from core.metrics.fact_verifiers import make_verifier
from core.metrics.factscore import ResponseFacts, group_responses, score_response, summarise_factscore
from core.metrics.verifier import verdict_from_probs, verify_facts


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


@pytest.fixture(scope="module")
def splitter(nlp):
    from core.metrics.atomic_facts import RuleFactSplitter

    return RuleFactSplitter(nlp)


# -- the splitter ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, expected", [
    ("He was born in 1961 and grew up in Chicago.", ["He was born in 1961.", "He grew up in Chicago."]),
    ("Paris, which is the capital of France, has 2 million people.",
     ["Paris has 2 million people.", "Paris is the capital of France."]),
    ("Christopher Nolan, who was born in London, directed Inception.",
     ["Christopher Nolan directed Inception.", "Christopher Nolan was born in London."]),
    ("The 1932 Summer Olympics", ["The 1932 Summer Olympics"]),  # a phrase stays whole, as the prompt asks
    ("The film won an Oscar.", ["The film won an Oscar."]),
])
def test_rule_splitter_on_hand_made_sentences(splitter, sentence, expected):
    facts = splitter.split(sentence).facts
    assert [f.text for f in facts] == expected
    for f in facts:  # each fact keeps its source span, inside the response
        assert 0 <= f.start < f.end <= len(sentence)


def test_splitter_spans_point_into_later_sentences(splitter):
    response = "Sorry, I cannot help with that. The film was directed by Nolan and it won an Oscar in 2011."
    facts = splitter.split(response).facts
    assert [f.text for f in facts] == ["Sorry, I cannot help with that.", "The film was directed by Nolan.",
                                       "It won an Oscar in 2011."]
    assert response[facts[1].start : facts[1].end].startswith("The film was directed by Nolan")
    assert response[facts[2].start : facts[2].end] == "it won an Oscar in 2011."
    assert [f.sentence for f in facts] == [0, 1, 1]


def test_empty_response_has_no_facts_and_undefined_factscore(splitter):
    assert splitter.split("").facts == [] and splitter.split("  \n ").facts == []
    verifier = make_verifier("llm", llm=_llm_answering("true"), strong=True)
    scored = score_response("   ", [("user", "Who directed Inception?")], verifier, splitter)
    assert scored.facts == () and scored.factscore is None and scored.neip is None
    assert "undefined" in scored.note


def test_100kb_response_is_bounded(splitter):
    from core.metrics.atomic_facts import SplitSettings

    response = "The bridge opened in 1932 and carried 40,000 cars a day. " * 1800  # ~100 KB
    assert len(response) > 100_000
    t0 = time.perf_counter()
    result = splitter.split(response)
    assert time.perf_counter() - t0 < 60
    assert result.truncated and len(result.facts) == SplitSettings().max_facts
    assert max(f.end for f in result.facts) <= SplitSettings().max_chars


def test_llm_splitter_parses_lines_locates_spans_and_falls_back(splitter):
    from core.llm.fake import ScriptedLLM
    from core.metrics.atomic_facts import LLMFactSplitter

    llm = ScriptedLLM(["- He was born in 1961.\n- He grew up in Chicago.", "I cannot do that"])
    response = "He was born in 1961 and grew up in Chicago. Paris, which is in France, is big."
    result = LLMFactSplitter(llm, splitter).split(response)
    texts = [f.text for f in result.facts]
    assert texts[:2] == ["He was born in 1961.", "He grew up in Chicago."]
    assert result.fallbacks == 1 and "Paris is big." in texts  # the second answer named no fact: rules split it
    assert response[result.facts[1].start : result.facts[1].end].lower().startswith("grew up in chicago")


# -- labels, aggregation, thresholds ---------------------------------------------------------------
def test_normalise_label_spellings():
    assert normalise_label("true") == SUPPORTS and normalise_label("FALSE.") == REFUTES
    assert normalise_label("no enough information") == NEI and normalise_label("Not Enough Info") == NEI
    with pytest.raises(ValueError):
        normalise_label("maybe")


def test_verdict_from_probs_ties_go_to_nei():
    assert verdict_from_probs([0.2, 0.3, 0.5], "x").label == NEI
    v = verdict_from_probs([2.0, 1.0, 1.0], "x")  # unnormalised weights are normalised
    assert v.label == SUPPORTS and v.confidence == pytest.approx(0.5)
    assert verdict_from_probs([0.4, 0.2, 0.4], "x").label == NEI


def test_response_and_run_aggregation_by_hand():
    rows = [
        {"dialogue_id": "d1", "response_id": "r1", "label": SUPPORTS},
        {"dialogue_id": "d1", "response_id": "r1", "label": NEI},
        {"dialogue_id": "d1", "response_id": "r2", "label": SUPPORTS},
        {"dialogue_id": "d2", "response_id": "r3", "label": REFUTES},
        {"dialogue_id": "d2", "response_id": "r3", "label": SUPPORTS},
        {"dialogue_id": "d2", "response_id": "r3", "label": NEI},
        {"dialogue_id": "d2", "response_id": "r3", "label": NEI},
        {"dialogue_id": "d3", "response_id": "r4", "label": None},  # a response without facts
    ]
    responses = {r.response_id: r for r in group_responses(rows)}
    assert responses["r1"].factscore == 0.5 and responses["r1"].neip == 0.5
    assert responses["r3"].factscore == 0.25 and responses["r3"].neip == 0.5
    assert responses["r4"].factscore is None and "undefined" in responses["r4"].note
    s = summarise_factscore(list(responses.values()))
    # per dialogue: d1 = mean(0.5, 1.0) = 0.75, d2 = 0.25; d3 has none. Run = mean(0.75, 0.25)
    assert s.per_dialogue["d1"]["factscore"] == pytest.approx(0.75)
    assert s.factscore == pytest.approx(0.5)
    assert s.neip == pytest.approx((0.25 + 0.5) / 2)
    assert s.n_responses == 4 and s.n_scored_responses == 3 and s.n_dialogues == 3 and s.n_facts == 7


def test_bootstrap_intervals():
    constant = [ResponseFacts((SUPPORTS, NEI), f"r{i}", f"d{i}") for i in range(10)]
    s = summarise_factscore(constant)
    assert s.factscore_ci95 == pytest.approx((0.5, 0.5)) and s.neip_ci95 == pytest.approx((0.5, 0.5))
    mixed = [ResponseFacts((SUPPORTS,) if i % 2 else (NEI,), f"r{i}", f"d{i}") for i in range(40)]
    s = summarise_factscore(mixed, resamples=2000)
    lo, hi = s.factscore_ci95
    assert lo < 0.5 < hi and 0.25 < lo and hi < 0.75  # binomial sd of a mean of 40 coin flips ~ 0.08
    wide = summarise_factscore(mixed[:10], resamples=2000).factscore_ci95
    assert wide[1] - wide[0] > hi - lo  # fewer dialogues, a wider interval
    one = summarise_factscore([ResponseFacts((SUPPORTS,), "r", "d")])
    assert all(math.isnan(x) for x in one.factscore_ci95)  # one dialogue: no interval, not a fake one


def _rows(entail, contra, h_entail=0.0, h_contra=0.0):
    return {"ev_entail_max": entail, "ev_contra_max": contra, "hist_entail": h_entail, "hist_contra": h_contra}


def test_threshold_rule_on_hand_made_nli_scores():
    from core.metrics.fact_train import fit_rule, rule_predict

    rows = [_rows(0.9, 0.1), _rows(0.2, 0.8), _rows(0.3, 0.3), _rows(0.1, 0.1, h_entail=0.95), _rows(0.7, 0.75)]
    # max entailment over evidence and history first, then max contradiction
    assert rule_predict(rows, 0.6, 0.6) == [SUPPORTS, REFUTES, NEI, SUPPORTS, SUPPORTS]
    assert rule_predict(rows, 0.8, 0.6) == [SUPPORTS, REFUTES, NEI, SUPPORTS, REFUTES]
    labels = [SUPPORTS, REFUTES, NEI, SUPPORTS, REFUTES]
    te, tc = fit_rule(rows, labels)  # thresholds that reproduce the labels exactly exist: found
    assert rule_predict(rows, te, tc) == labels
    assert 0.7 < te <= 0.9 and 0.3 < tc <= 0.75


def test_agreement_against_a_hand_computed_confusion_matrix():
    from core.metrics.fact_train import agreement

    # confusion (rows human, columns verifier; S, R, N): [[4,1,0],[0,2,1],[1,0,1]]
    human = [SUPPORTS] * 5 + [REFUTES] * 3 + [NEI] * 2
    pred = [SUPPORTS] * 4 + [REFUTES] + [REFUTES] * 2 + [NEI] + [SUPPORTS, NEI]
    got = agreement(human, pred)
    assert got["confusion"] == [[4, 1, 0], [0, 2, 1], [1, 0, 1]]
    po, pe = 7 / 10, (5 * 5 + 3 * 3 + 2 * 2) / 100  # marginals: rows 5,3,2; columns 5,3,2
    assert got["accuracy"] == pytest.approx(po)
    assert got["kappa"] == pytest.approx((po - pe) / (1 - pe))  # 0.5161
    # binary: Supports vs not. human S=5 notS=5; pred S=5 notS=5; agree on 4 S + 4 notS
    assert got["kappa_binary"] == pytest.approx((0.8 - 0.5) / 0.5)
    f1 = [2 * 4 / (5 + 5), 2 * 2 / (3 + 3), 2 * 1 / (2 + 2)]  # per label 2TP / (row + column)
    assert got["macro_f1"] == pytest.approx(sum(f1) / 3)


# -- verifiers -----------------------------------------------------------------------------------
def _llm_answering(text):
    from core.llm.fake import ScriptedLLM

    return ScriptedLLM([text])


def test_fact_without_evidence_or_history_is_nei():
    verifier = make_verifier("llm", llm=_llm_answering("true"), strong=True)
    [v] = verifier.verify([FactItem("The bridge opened in 1932.")])
    assert v.label == NEI and "no evidence" in v.note


def test_llm_verifier_written_and_scored_answers():
    from core.llm.fake import ScriptedLLM

    item = FactItem("The bridge opened in 1932.", (("user", "When did the bridge open?"),),
                    (Passage("The Golden Gate Bridge opened in 1937.", "Golden Gate Bridge"),))
    strong = make_verifier("llm", llm=ScriptedLLM(["false."]), strong=True)
    assert strong.verify([item])[0].label == REFUTES
    # the embedded model: the three answers scored by likelihood, never parsed
    scores = {"true": -3.0, "false": -1.0, "no enough information": -2.0}
    weak = make_verifier("llm", llm=ScriptedLLM(["garbage"], scorer=lambda m, c: scores[c]), strong=False)
    v = weak.verify([item])[0]
    assert v.label == REFUTES and v.note == "scored by likelihood"
    total = sum(math.exp(s) for s in scores.values())
    assert v.probs == pytest.approx(tuple(math.exp(scores[a]) / total for a in ("true", "false", "no enough information")))
    assert v.evidence and "1937" in v.evidence[0].text
    prompt = weak.prompt(item)[0]
    assert "Statement: The bridge opened in 1932." in prompt and "Speaker A: When did the bridge open?" in prompt


def test_judge_without_endpoint_says_how_to_configure():
    with pytest.raises(ValueError, match="OpenAI-compatible endpoint"):
        make_verifier("judge")
    with pytest.raises(ValueError, match="unknown verifier"):
        make_verifier("oracle")


class _RuleNLI:
    """A scripted NLI model: entailment when every content word of the hypothesis is in the premise,
    contradiction when the premise holds a different year, else neutral."""

    def predict(self, pairs):
        from core.metrics.fact_evidence import content_words, quantities
        from core.metrics.nli import NLIProbs

        out = []
        for premise, hypothesis in pairs:
            hw, pw = set(content_words(hypothesis)), set(content_words(premise))
            years_h = {q.value for q in quantities(hypothesis) if q.is_year}
            years_p = {q.value for q in quantities(premise) if q.is_year}
            if hw and hw <= pw and (not years_h or years_h <= years_p):
                out.append(NLIProbs(0.9, 0.05, 0.05))
            elif years_h and years_p and not years_h & years_p and len(hw & pw) >= 2:
                out.append(NLIProbs(0.05, 0.05, 0.9))
            else:
                out.append(NLIProbs(0.1, 0.8, 0.1))
        return out


def test_signals_select_the_right_passage_and_flag_a_changed_year(nlp):
    from core.metrics.fact_signals import FEATURES, SignalExtractor

    evidence = (
        Passage("Paris is the capital of France. It has 2 million inhabitants.", "Paris"),
        Passage("The Golden Gate Bridge opened in 1937. It spans the Golden Gate strait.", "Golden Gate Bridge"),
        Passage("Lyon is a city in France.", "Lyon"),
    )
    history = (("user", "Tell me about the Golden Gate Bridge."),)
    right = FactItem("The Golden Gate Bridge opened in 1937.", history, evidence)
    wrong = FactItem("The Golden Gate Bridge opened in 1932.", history, evidence)
    s_right, s_wrong = SignalExtractor(_RuleNLI(), nlp).extract([right, wrong])
    assert set(s_right.values) == set(FEATURES)
    assert s_right.used[0].title == "Golden Gate Bridge"  # the selected window is from the bridge's passage
    assert s_right.values["ev_entail_max"] == pytest.approx(0.9) and s_right.values["year_conflict"] == 0.0
    assert s_wrong.values["year_conflict"] == 1.0 and s_wrong.values["numbers_found"] == 0.0
    assert s_wrong.values["ev_contra_max"] == pytest.approx(0.9)
    assert s_right.values["names_found"] == 1.0


def test_nli_verifier_with_the_stored_classifier_orders_support_over_refutation(nlp):
    from core.metrics.fact_classifier import DEFAULT_FACTCHECK_DIR

    if not (DEFAULT_FACTCHECK_DIR / "model.json").is_file():
        pytest.skip("assets/models/factcheck not trained")
    verifier = make_verifier("nli", resources=(_RuleNLI(), nlp, None))
    evidence = (Passage("The Golden Gate Bridge opened in 1937. It spans the Golden Gate strait.", "Golden Gate Bridge"),)
    history = (("user", "When did the Golden Gate Bridge open?"),)
    right, wrong = verify_facts([FactItem("The Golden Gate Bridge opened in 1937.", history, evidence),
                                 FactItem("The Golden Gate Bridge opened in 1932.", history, evidence)], verifier)
    assert right.probs[0] > wrong.probs[0] and wrong.probs[1] > right.probs[1]
    assert right.evidence and right.signals


# -- data ------------------------------------------------------------------------------------------
def _annotated(fact="The bridge opened in 1937.", label="Supports", **extra):
    return {"id": extra.pop("id", "x1"), "history": [["A", "Hi"], ["B", "Hello"]], "A": "When did it open?",
            "response": "It opened in 1937.", "type": "plain", "atomic_fact": fact,
            "evidence": [{"id": "p1", "title": "Bridge", "text": "The bridge opened in 1937.", "selected": True}],
            "isFactualClaim": "verifiable", "factualLabel": label, **extra}


def test_malformed_items_are_skipped_and_counted(tmp_path):
    from core.data.hybridialogue import load_hybridialogue_facts

    good = _annotated()
    data = [good, {"atomic_fact": "no label"}, "not an object", _annotated(label="perhaps"), _annotated(fact="  "),
            _annotated(label="false", id="x2")]
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(data))
    loaded = load_hybridialogue_facts(path)
    assert [f.label for f in loaded.facts] == [SUPPORTS, REFUTES]
    assert loaded.skipped == 4 and len(loaded.reasons) == 4
    first = loaded.facts[0]
    assert first.item.history == (("user", "Hi"), ("assistant", "Hello"), ("user", "When did it open?"))
    assert first.selected_sources == ("p1",)
    assert not hasattr(first.item.evidence[0], "selected")  # human evidence marks never reach the verifier
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError):
        load_hybridialogue_facts(bad)


# -- the Annotation page's seam: annotators against the verifier ------------------------------------
def test_annotators_kappa_against_the_verifier_labels():
    from core.annotation import Item, Label
    from core.annotation import Passage as AnnPassage
    from core.annotation.agreement import against
    from core.annotation.verify import fact_item, verifier_labels
    from core.llm.fake import ScriptedLLM

    answers = {"f1": "true", "f2": "false", "f3": "no enough information", "f4": "true"}
    llm = ScriptedLLM(lambda messages: answers[messages[-1].content.split("Statement: ")[1].split(".")[0]])
    verifier = make_verifier("llm", llm=llm, strong=True)
    ev = (AnnPassage("p1", "Some evidence text.", "T"),)
    items = [Item(f"i{k}", f"f{k}.", "resp", "a question?", (("user", "hi"),), ev) for k in range(1, 5)]
    assert fact_item(items[0]).history == (("user", "hi"), ("user", "a question?"))
    got = verifier_labels(items, verifier)
    assert got == {"i1": SUPPORTS, "i2": REFUTES, "i3": NEI, "i4": SUPPORTS}
    ann = [Label("i1", "ann", SUPPORTS), Label("i2", "ann", REFUTES), Label("i3", "ann", SUPPORTS), Label("i4", "ann", SUPPORTS),
           Label("i1", "bob", SUPPORTS)]
    rows = {r.annotator: r for r in against(ann, got)}
    # ann vs verifier: confusion rows ann S=3,R=1; verifier S=2,R=1,N=1; agree 3/4.
    po, pe = 3 / 4, (3 * 2 + 1 * 1 + 0 * 1) / 16
    assert rows["ann"].kappa == pytest.approx((po - pe) / (1 - pe)) and rows["ann"].items == 4
    assert rows["bob"].items == 1
