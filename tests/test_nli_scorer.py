"""The NLI scorer: label order from the config, batching, the windowing rule, and (slow) the
shipped model on clear entailment / neutral / contradiction pairs."""

from __future__ import annotations

import pytest
from nli_helpers import write_tiny_nli_model

from core.metrics.nli import NLIScorer, NLISettings, label_order
from core.paths import DEFAULT_NLI_MODEL_DIR

PAIRS = [
    ("A man is playing a guitar on stage.", "A man is performing music."),
    ("The cat sleeps on the sofa.", "The dog is barking loudly in the garden."),
    ("It is raining heavily in London today.", "The weather in London is dry and sunny."),
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return write_tiny_nli_model(tmp_path_factory.mktemp("tiny-nli"))


def test_label_order_read_from_config():
    assert label_order({0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}) == ("contradiction", "entailment", "neutral")
    assert label_order({"0": "entailment", "1": "neutral", "2": "contradiction"}) == ("entailment", "neutral", "contradiction")
    with pytest.raises(ValueError, match="cannot tell"):
        label_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})  # generic names: never guess
    with pytest.raises(ValueError, match="exactly 3"):
        label_order({0: "entailment", 1: "not_entailment"})


def test_permuted_head_with_permuted_config_gives_same_probabilities(tmp_path):
    """The same network saved twice: once with labels (E, N, C), once with its output rows
    reordered to (C, E, N) and id2label saying so. Named probabilities must agree."""
    a = NLIScorer(str(write_tiny_nli_model(tmp_path / "a", seed=3)))
    # new row j = old row perm[j]: C is old row 2, E old row 0, N old row 1
    b = NLIScorer(str(write_tiny_nli_model(tmp_path / "b", labels=("contradiction", "entailment", "neutral"), seed=3,
                                           permutation=(2, 0, 1))))
    assert b.order == ("contradiction", "entailment", "neutral")
    for pa, pb in zip(a.predict(PAIRS), b.predict(PAIRS)):
        assert pb.entailment == pytest.approx(pa.entailment, abs=1e-6)
        assert pb.neutral == pytest.approx(pa.neutral, abs=1e-6)
        assert pb.contradiction == pytest.approx(pa.contradiction, abs=1e-6)


def test_batching_keeps_input_order(tiny_model):
    scorer = NLIScorer(str(tiny_model))
    pairs = PAIRS * 3 + [("short", "x")]
    batched = scorer.predict(pairs, batch_size=4)
    one_by_one = [scorer.predict([p])[0] for p in pairs]
    for x, y in zip(batched, one_by_one):
        assert x.entailment == pytest.approx(y.entailment, abs=1e-5)
        assert abs(x.entailment + x.neutral + x.contradiction - 1) < 1e-5


def test_windowing_rule_recent_chunks_within_budget(tiny_model):
    scorer = NLIScorer(str(tiny_model), NLISettings(model=str(tiny_model), max_length=40, hypothesis_max_tokens=8, max_chunks=3))
    history = [f"User: Sentence number {i} is here." for i in range(30)]
    chunks = scorer.chunk_history(history, budget=20)
    assert len(chunks) == 3  # max_chunks: the most recent kept
    assert chunks[-1].endswith("Sentence number 29 is here.")  # oldest first, newest last
    assert all(scorer._count(c) <= 20 for c in chunks)
    joined = " ".join(chunks)
    assert "number 0 " not in joined
    # consecutive: the kept sentences form an unbroken run ending at the newest
    numbers = [int(w) for w in joined.replace(".", "").split() if w.isdigit()]
    assert numbers == list(range(numbers[0], 30))


def test_judge_truncates_long_hypothesis_and_reports_chunks(tiny_model):
    scorer = NLIScorer(str(tiny_model), NLISettings(model=str(tiny_model), max_length=48, hypothesis_max_tokens=8, max_chunks=4))
    history = ["User: " + " ".join(f"Fact {i} holds." for i in range(40))]
    judgement = scorer.judge(history, "This reply is much longer than eight tokens in total, surely.")
    assert judgement.hypothesis_truncated
    assert judgement.n_chunks == 4 and 0 <= judgement.chunk_index < 4
    # the decisive chunk's probabilities are those of scoring that chunk alone
    alone = scorer.predict([(judgement.premise_chunk, "This reply is much longer than eight")])[0]
    assert judgement.probs.entailment == pytest.approx(alone.entailment, abs=1e-5)
    empty = scorer.judge([], "Hello.")
    assert empty.n_chunks == 1 and not empty.hypothesis_truncated


def test_missing_default_model_names_the_fix(tmp_path, monkeypatch):
    import core.metrics.nli as nli

    monkeypatch.setattr(nli, "DEFAULT_NLI_MODEL_DIR", tmp_path / "absent")
    with pytest.raises(nli.MissingResource, match="train-nli"):
        NLIScorer()


@pytest.fixture(scope="module")
def shipped():
    if not (DEFAULT_NLI_MODEL_DIR / "config.json").exists():
        pytest.skip(f"the trained NLI model is not in {DEFAULT_NLI_MODEL_DIR} (run `python -m core train-nli`)")
    return NLIScorer()


@pytest.mark.slow
def test_shipped_model_on_clear_pairs(shipped):
    """Clear SNLI-style pairs. The small model trained here is imperfect (MNLI-m ~0.6), so one
    miss in nine is allowed; the mean CS must still order entailment > neutral > contradiction."""
    cases = [
        ("A man is playing a guitar on stage.", "A man is playing an instrument.", "entailment"),
        ("Two children are sitting on the beach building a sandcastle.", "Kids are at the beach.", "entailment"),
        ("A black dog is running through the snow.", "An animal is outside.", "entailment"),
        ("A woman is riding a horse in a field.", "A woman is sleeping in her bed.", "contradiction"),
        ("A man is sitting on a bench reading a newspaper.", "The man is swimming in the ocean.", "contradiction"),
        ("Three women are dancing on a stage.", "Nobody is dancing.", "contradiction"),
        ("A girl is reading a book in the park.", "The book was written by a famous author.", "neutral"),
        ("A woman is cooking in a kitchen.", "She is making dinner for her husband.", "neutral"),
        ("A boy is kicking a ball in the yard.", "The boy is playing with his father.", "neutral"),
    ]
    probs = shipped.predict([(p, h) for p, h, _ in cases])
    labels = [p.label for p in probs]
    assert sum(label == gold for label, (_, _, gold) in zip(labels, cases)) >= 8, labels
    assert all(abs(p.entailment + p.neutral + p.contradiction - 1) < 1e-4 for p in probs)
    mean_cs = {g: sum(p.consistency for p, c in zip(probs, cases) if c[2] == g) / 3 for g in ("entailment", "neutral", "contradiction")}
    assert mean_cs["entailment"] > mean_cs["neutral"] > mean_cs["contradiction"]


@pytest.mark.slow
def test_shipped_model_dialogue_history(shipped):
    history = ["User: My name is Anna and I live in Berlin with my two cats.", "Assistant: Nice to meet you, Anna!",
               "User: Where do I live?"]
    entailed = shipped.judge(history, "You live in Berlin.")
    contradicted = shipped.judge(history, "You live in Madrid.")
    assert entailed.label == "entailment"
    assert entailed.consistency > contradicted.consistency
