"""A real `bench hybridialogue-facts` run on a slice of the dev file, end to end with the shipped
offline verifier, then imported as an annotation task (issue 17: "a benchmark run's facts"), and
the task's items labelled by the same verifier for the annotation page's comparison."""

from __future__ import annotations

import json

import pytest

from core.metrics.fact_types import LABELS

N = 20


@pytest.fixture(scope="module")
def dev_run(tmp_path_factory, shared_data):
    from core.cli import main
    from core.metrics.fact_classifier import DEFAULT_FACTCHECK_DIR

    if not (DEFAULT_FACTCHECK_DIR / "model.json").is_file():
        pytest.fail("assets/models/factcheck/model.json is missing: run `python -m core train-factcheck`")
    data = shared_data / "hybridialogue" / "hybridial_annotated_dev.json"
    out = tmp_path_factory.mktemp("bench") / "run"
    code = main(["bench", "hybridialogue-facts", "--data", str(data), "--out", str(out), "--methods", "nli",
                 "--limit", str(N), "--quiet"])
    assert code == 0
    return data, out


@pytest.mark.slow
def test_the_benchmark_on_a_20_fact_slice_reports_agreement(dev_run):
    _, out = dev_run
    summary = json.loads((out / "summary.json").read_text())
    res = summary["results"]["nli"]
    assert res["n_facts"] == N and sum(res["label_counts_human"].values()) == N
    assert sum(map(sum, res["confusion"])) == N and len(res["confusion"]) == 3
    assert -1.0 <= res["kappa"] <= 1.0 and 0.0 <= res["accuracy"] <= 1.0 and 0.0 <= res["macro_f1"] <= 1.0
    correct = sum(res["confusion"][i][i] for i in range(3))
    assert res["accuracy"] == pytest.approx(correct / N)
    for key in ("factscore_human", "factscore_verifier", "neip_human", "neip_verifier"):
        assert "all" in res[key]
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(rows) == N and {r["label"] for r in rows} <= set(LABELS)


@pytest.mark.slow
def test_the_run_folder_imports_as_an_annotation_task_and_the_verifier_labels_it(dev_run, tmp_path, capsys):
    from core.annotation import AnnotationStore
    from core.annotation.cli import CLI_OWNER
    from core.annotation.verify import verifier_labels
    from core.cli import main
    from core.metrics.fact_verifiers import make_verifier

    data, out = dev_run
    db = tmp_path / "ann.sqlite3"
    capsys.readouterr()
    assert main(["annotation", "import", "--db", str(db), "--task", "dev-run", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["created"] and report["items_added"] == N

    source = {obj["id"]: obj for obj in json.loads(data.read_text())[:N]}
    store = AnnotationStore(db)
    task = store.find_task("dev-run", owner=CLI_OWNER)
    items = store.items(task.id, owner=CLI_OWNER)
    assert {i.item_id for i in items} == set(source)
    for item in items:  # what an annotator needs came through the run folder
        raw = source[item.item_id]
        assert item.fact == raw["atomic_fact"] and item.query == raw["A"].strip() and item.response == raw["response"]
        assert item.gold == raw["factualLabel"]
        assert [p.id for p in item.evidence] == [p["id"] for p in raw["evidence"]]
        assert len(item.history) == len(raw["history"])
        assert item.source == raw["type"]

    # the annotation page's comparison: the verifier relabels the imported items as the run did
    run_labels = {json.loads(line)["id"]: json.loads(line)["label"] for line in (out / "items.jsonl").read_text().splitlines()}
    again = verifier_labels(items, make_verifier("nli"))
    assert set(again) == set(run_labels)
    # the run verified one fact at a time, this in one padded batch: float noise may flip a borderline fact
    assert sum(again[k] == run_labels[k] for k in run_labels) >= N - 1


def test_batched_verification_keeps_order_and_shares_the_time():
    from core.benchmarks.hybridialogue_facts import _verified
    from core.metrics.fact_types import NEI, SUPPORTS, FactItem, Verdict

    class Scripted:
        calls: list[int] = []

        def verify(self, items):
            self.calls.append(len(items))
            return [Verdict(SUPPORTS if "yes" in i.fact else NEI, 1.0, (1.0, 0.0, 0.0)) for i in items]

    class Fact:
        def __init__(self, text):
            self.item = FactItem(text)

    facts = [Fact(t) for t in ("yes 1", "no 2", "yes 3", "no 4", "no 5")]
    verifier = Scripted()
    out = list(_verified(facts, verifier, 2, False, "x"))
    assert verifier.calls == [2, 2, 1]
    assert [(f.item.fact, v.label) for f, v, _, _ in out] == [("yes 1", SUPPORTS), ("no 2", NEI), ("yes 3", SUPPORTS),
                                                              ("no 4", NEI), ("no 5", NEI)]
    assert out[0][2] == out[1][2] and all(s >= 0 and c >= 0 for _, _, s, c in out)
