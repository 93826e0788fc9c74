"""Training the relevance cross-encoder on a tiny split, end to end: pairs from the walks, the
train/eval split by index, export (fp16 safetensors, settings, hashes, log), loading it back as
the Triton ranker, and the model card with held-out figures."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from core.data.opendialkg import load_opendialkg
from core.methods.kgaug.card import evaluate_and_write_card
from core.methods.kgaug.rankers import TritonRanker
from core.methods.kgaug.relevance import RelevanceModel
from core.methods.kgaug.train import RelevanceTrainConfig, build_groups, train, training_examples
from core.paths import packaged_embedder_dir
from tests.kgaug_helpers import tiny_dataset

QUESTIONS = [
    ("Who directed Find Me Guilty?", ("Find Me Guilty", "directed_by", "Sidney Lumet")),
    ("Who starred in Find Me Guilty?", ("Find Me Guilty", "starred_actors", "Vin Diesel")),
    ("Who directed 12 Angry Men?", ("12 Angry Men", "directed_by", "Sidney Lumet")),
    ("Who starred in 12 Angry Men?", ("12 Angry Men", "starred_actors", "Henry Fonda")),
    ("Who starred in Fast Five?", ("Fast Five", "starred_actors", "Vin Diesel")),
    ("What genre is Fast Five?", ("Fast Five", "has_genre", "Action Film")),
    ("What genre is 12 Angry Men?", ("12 Angry Men", "has_genre", "Drama")),
    ("Who wrote The Hobbit?", ("The Hobbit", "written_by", "J.R.R. Tolkien")),
    ("What genre is The Hobbit?", ("The Hobbit", "has_genre", "High Fantasy")),
    ("What genre is Find Me Guilty?", ("Find Me Guilty", "has_genre", "Crime Fiction")),
]


@pytest.fixture()
def tiny(tmp_path):
    return tiny_dataset(tmp_path, QUESTIONS)


def test_pairs_come_from_the_train_split_only(tiny):
    path, knowledge = tiny
    train_ex = training_examples([path], "train")
    assert sorted(ex.source.index for ex in train_ex) == [1, 2, 3, 4, 6, 7, 8, 9]
    assert [ex.source.index for ex in training_examples([path], "eval")] == [0, 5]
    groups = build_groups(train_ex, knowledge.kg, knowledge.linker, negatives=3, rng=random.Random(0))
    pairs = [p for g in groups for p in g.pairs()]  # as train() feeds its loss
    positives = [p for p in pairs if p[2] == 1.0]
    assert len(positives) == 8 and ("Who starred in Find Me Guilty?", "Find Me Guilty starred actors Vin Diesel", 1.0) in positives
    assert all(p[2] == 0.0 and p[1] != "Find Me Guilty starred actors Vin Diesel" for p in pairs
               if p[0] == "Who starred in Find Me Guilty?" and p[2] == 0.0)
    # 3 negatives each, except the two Hobbit questions: The Hobbit has one other triple in reach
    assert len(pairs) == 8 + 6 * 3 + 2 * 1


def test_training_end_to_end_exports_a_working_ranker_and_its_card(tiny, tmp_path):
    path, knowledge = tiny
    out = tmp_path / "model"
    config = RelevanceTrainConfig(data_files=(str(path),), out_dir=str(out), work_dir=str(tmp_path / "work"),
                                  base_model=str(packaged_embedder_dir()), layers=1, max_length=32, negatives=3,
                                  batch_size=8, learning_rate=1e-3, epochs=20, time_budget_min=30.0, seed=1,
                                  log_every=5)
    report = train(config, knowledge.kg, knowledge.linker, progress=False)
    assert report.examples == 8 and report.pairs == 28 and report.steps == 80
    assert {"model.safetensors", "config.json", "tokenizer.json", "settings.json", "data_hashes.json",
            "training_log.jsonl"} <= {p.name for p in out.iterdir()}
    assert json.loads((out / "settings.json").read_text())["layers"] == 1
    losses = [json.loads(line)["loss"] for line in (out / "training_log.jsonl").read_text().splitlines()]
    assert len(losses) == 16  # one row per 5 steps: the loss curve, not a single mean
    # it learns: at the start the loss is that of a guess (BCE ln 2 + listwise ln 4 = 2.08); the last 20 steps' is under half the first 10's
    assert np.mean(losses[:2]) > 1.5 and np.mean(losses[-4:]) < 0.5 * np.mean(losses[:2]), losses
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as f:
        assert {str(f.get_tensor(k).dtype) for k in f.keys()} == {"torch.float16"}

    model = RelevanceModel(out, quantize=False)
    probs = model.predict("Who starred in Fast Five?", ["Fast Five starred actors Vin Diesel", "Fast Five has genre Action Film"])
    assert ((probs > 0) & (probs < 1)).all() and probs[0] > probs[1]  # a training query, learned
    # It fits its training queries: the gold triple ranks first among all gathered candidates for
    # most of them. Eight queries and one layer are too few to ask the relation to carry over to the
    # held-out films (it did not, reliably); held-out quality is the card's, on real OpenDialKG.
    triton = TritonRanker(model)
    dialogues, _ = load_opendialkg(path)
    from core.methods.kgaug.candidates import gather

    def first_hits(split_test):
        hits = []
        for d in dialogues:
            if split_test(d.index):
                (ex,) = list(d.examples())
                linked = knowledge.linker.link(ex.query)
                ranked = triton.rank(ex.query, gather(knowledge.kg, [e.entity for e in linked]))
                hits.append(ranked[0].triple == tuple(ex.gold[0]))
        return hits

    hits = first_hits(lambda i: i % 5 != 0)
    assert len(hits) == 8 and np.mean(hits) >= 0.75, hits

    card = evaluate_and_write_card(config, report, knowledge, evaluate=True, command="train-relevance --layers 1")
    text = card.read_text()
    assert "index % 5 != 0" in text and "| triton-ce |" in text and "train-relevance --layers 1" in text
    held_out = json.loads((out / "heldout_eval.json").read_text())
    # the card's held-out figure is the ranker's own, recomputed here on the two held-out turns
    assert held_out["triton-ce"]["turns"] == 2
    assert held_out["triton-ce"]["recall@1"] == pytest.approx(np.mean(first_hits(lambda i: i % 5 == 0)))
