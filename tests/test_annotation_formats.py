"""Imports of each format, bad input refused with clear messages, export/import round-trips, the
facts of a chat's replies, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.annotation import AnnotationError, AnnotationStore
from core.annotation.facts import items_from_turns, locate
from core.annotation.formats import batch_from_rows, read_bytes, read_path, write_csv, write_jsonl
from core.dialogue import Evidence, Reply, Turn

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "fixtures" / "annotation_hybridial_sample.json"
ME = "ws:lab"


def test_hybridialogue_items_keep_gold_evidence_and_span():
    batch = read_path(SAMPLE)
    by_id = {i.item_id: i for i in batch.items}
    assert len(batch.items) == 6 and not batch.labels
    first = by_id["hd-1"]
    assert (first.gold, first.gold_claim, first.source, first.query) == ("Supports", True, "plain", "When was it written?")
    assert first.history == (("A", "Who wrote Hamlet?"), ("B", "William Shakespeare wrote Hamlet."))
    assert first.gold_evidence == ("100",) and len(first.evidence) == 3
    assert by_id["hd-4"].gold_evidence == ("401",)  # from selectedEvidence
    assert by_id["hd-3"].gold_claim is False
    assert by_id["hd-3"].fact.startswith("<script>")  # stored as given; the page shows it as text
    # exact match, and the fuzzy match widened to the sentence it sits in
    assert first.response[slice(*first.span)] == "Hamlet was written around 1600."
    second = by_id["hd-2"]
    assert second.response[slice(*second.span)] == "The capital of Australia is Sydney, a large city."
    assert locate("Quantum chromodynamics of gluons.", "I like tea.") is None


def test_the_shared_dev_split_imports(shared_data):
    batch = read_path(shared_data / "hybridialogue" / "hybridial_annotated_dev.json")
    assert len(batch.items) == 316
    assert sum(i.gold == "Supports" for i in batch.items) == 118  # SOURCE.md: Supports 118, Refutes 33, NEI 165
    assert sum(i.gold == "Refutes" for i in batch.items) == 33
    assert sum(i.span is not None for i in batch.items) > 250


@pytest.mark.parametrize("name, data, message", [
    ("locomo.json", b'[{"sample_id": "x", "conversation": {}}]', "missing columns"),
    ("facts.csv", b"item_id,text\n1,hello\n", "missing columns"),
    ("facts.csv", b"id,fact\n1,one\n2,two\n1,three\n", "duplicate item id '1'"),
    ("facts.jsonl", b'{"id": "a", "fact": "x"}\n{"id": "a", "fact": "x"}\n', "duplicate item id"),
    ("facts.jsonl", b'{"id": "a", "fact": "x"}\nnot json\n', "line 2 is not a JSON object"),
    ("facts.json", b'[{"id": "a", "fact": "x"}', "not valid JSON"),
    ("facts.json", b'"just text"', "expected a JSON list"),
    ("labels.jsonl", b'{"item_id": "a", "annotator": "ana", "label": "Maybe"}\n', "row 1, label: 'Maybe' is not one of"),
    ("labels.jsonl", b'{"item_id": "a", "annotator": "ana"}\n', "missing column label"),
    ("labels.jsonl", b'{"item_id": "a", "annotator": "<b>x</b>", "label": "NEI"}\n', "letters, digits"),
    ("labels.jsonl", b'{"item_id": "a", "annotator": "ana", "label": "NEI"}\n{"item_id": "a", "annotator": "Ana", "label": "NEI"}\n',
     "a second label by 'ana'"),
    ("facts.csv", "id,fact\n1,caf\u00e9\n".encode("latin-1"), "not UTF-8"),
    ("facts.csv", b"", "no header row"),
    ("facts.csv", b"id,fact\n", "holds no rows"),
    ("facts.jsonl", b'{"id": "a", "fact": ""}\n', "fact is empty"),
    ("facts.jsonl", json.dumps({"id": "a", "fact": "x" * 3000}).encode(), "the limit is 2,000"),
    ("facts.jsonl", json.dumps({"id": "a", "fact": "x", "evidence": ["p"] * 30}).encode(), "30 evidence passages"),
])
def test_bad_files_are_refused_with_a_clear_message(name, data, message):
    with pytest.raises(AnnotationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_bytes(name, data)


def test_a_10_mb_file_is_refused_before_parsing():
    row = json.dumps({"id": "x", "fact": "y" * 1000}) + "\n"
    data = (row * (10 * 1024 * 1024 // len(row) + 1)).encode()
    with pytest.raises(AnnotationError, match=r"10\.\d MB; the limit is 8\.0 MB. Split it"):
        read_bytes("big.jsonl", data)


def _filled_store(tmp_path) -> tuple[AnnotationStore, str]:
    store = AnnotationStore(tmp_path / "db.sqlite3")
    tid = store.create_task("sample", owner=ME)
    store.import_batch(tid, read_path(SAMPLE), owner=ME)
    store.label(tid, "hd-1", "ana", "Supports", owner=ME, evidence=["100", "102"], comment='quote " and, comma\nnewline')
    store.label(tid, "hd-1", "ben", "Refutes", owner=ME, not_claim=True, comment="=HYPERLINK(\"x\") <script>alert(1)</script>")
    store.label(tid, "hd-3", "ana", "NEI", owner=ME)
    store.adjudicate(tid, "hd-1", "Supports", "lead", owner=ME)
    return store, tid


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_import_round_trip(tmp_path, fmt):
    store, tid = _filled_store(tmp_path)
    rows = store.export_rows(tid, owner=ME)
    assert len(rows) == 7  # hd-1 twice (two annotators), the other five once
    text = write_csv(rows) if fmt == "csv" else write_jsonl(rows)
    copy = store.create_task("copy", owner=ME)
    report = store.import_batch(copy, read_bytes(f"x.{fmt}", text.encode()), owner=ME)
    assert (report.items_added, report.labels_added, report.adjudications) == (6, 3, 1)
    assert store.export_rows(copy, owner=ME) == rows
    assert store.items(copy, owner=ME) == store.items(tid, owner=ME)
    # the same file again merges without duplicates
    again = store.import_batch(copy, read_bytes(f"x.{fmt}", text.encode()), owner=ME)
    assert (again.items_added, again.items_unchanged, again.labels_added, again.labels_unchanged) == (0, 6, 0, 3)
    assert len(store.labels(copy, owner=ME)) == 3


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fact=st.text(min_size=1, max_size=60).filter(str.strip), comment=st.text(max_size=60),
       response=st.text(max_size=80))
def test_csv_and_jsonl_keep_any_text(fact, comment, response):
    rows = [{"item_id": "x", "fact": fact, "response": response, "annotator": "ana", "label": "Refutes", "comment": comment}]
    for fmt, write in (("csv", write_csv), ("jsonl", write_jsonl)):
        batch = batch_from_rows(rows)
        from core.annotation.formats import export_rows
        exported = export_rows(batch.items, batch.labels, {})
        back = read_bytes(f"r.{fmt}", write(exported).encode())
        assert back.items[0].fact == fact and back.items[0].response == response, fmt
        assert back.labels[0].comment == comment, fmt


def test_labels_import_merges(tmp_path):
    store, tid = _filled_store(tmp_path)
    data = b'{"item_id": "hd-1", "annotator": "Ana", "label": "Refutes"}\n{"item_id": "hd-2", "annotator": "cy", "label": "NEI"}\n'
    report = store.import_batch(tid, read_bytes("labels.jsonl", data), owner=ME)
    assert (report.labels_added, report.labels_updated) == (1, 1)
    assert {(lb.item_id, lb.annotator): lb.label for lb in store.labels(tid, owner=ME)} == {
        ("hd-1", "ana"): "Refutes", ("hd-1", "ben"): "Refutes", ("hd-2", "cy"): "Not Enough Info", ("hd-3", "ana"): "Not Enough Info"}


def test_a_run_folder_and_chat_replies(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"benchmark": "hybridialogue-facts"}))
    (run / "items.jsonl").write_text(
        json.dumps({"dialogue_id": "d1", "turn": 2, "query": "Q?", "response": "One. Two.", "facts": ["One.", {"fact": "Two.", "gold": "Refutes"}]}) + "\n")
    batch = read_path(run)
    assert [(i.item_id, i.fact, i.gold) for i in batch.items] == [("d1:2#0", "One.", None), ("d1:2#1", "Two.", "Refutes")]

    turns = [Turn("user", "Where is Lisbon?"), Turn("assistant", "Lisbon is in Portugal. It is the capital."),
             Turn("user", "Thanks"), Turn("assistant", "You are welcome!")]
    reply = Reply("Lisbon is in Portugal. It is the capital.", "rag", "m", evidence=(Evidence("Lisbon, Portugal", 0.9, "S1:0"),))
    items = items_from_turns(turns, [None, reply, None, None], prefix="c1")
    assert [(i.item_id, i.fact) for i in items] == [("c1:1:0", "Lisbon is in Portugal."), ("c1:1:1", "It is the capital."),
                                                    ("c1:3:0", "You are welcome!")]
    assert items[0].query == "Where is Lisbon?" and items[0].history == () and items[0].source == "rag"
    assert items[2].history == (("user", "Where is Lisbon?"), ("assistant", "Lisbon is in Portugal. It is the capital."))
    assert items[0].evidence[0].text == "Lisbon, Portugal" and items[1].span == (23, 41)


def test_chat_replies_split_by_the_factscore_rule_splitter_keep_its_spans():
    from core.metrics.atomic_facts import RuleFactSplitter
    from core.resources import load_spacy

    reply = "Lisbon is in Portugal and has about half a million people. It is the capital."
    turns = [Turn("user", "Tell me about Lisbon."), Turn("assistant", reply)]
    items = items_from_turns(turns, [None, None], prefix="c2", splitter=RuleFactSplitter(load_spacy()))
    assert [(i.item_id, i.fact) for i in items] == [("c2:1:0", "Lisbon is in Portugal."),
                                                    ("c2:1:1", "Lisbon has about half a million people."),
                                                    ("c2:1:2", "It is the capital.")]
    # a rewritten fact is not in the reply verbatim: its span is the clause's source, not a fuzzy guess
    assert reply[slice(*items[1].span)].startswith("Lisbon is in Portugal and has")
    assert reply[slice(*items[2].span)] == "It is the capital."


def test_a_hybridialogue_facts_run_folder_with_two_methods(tmp_path):
    """Its rows carry the item's passages and the human label; the rows of two verifiers are one item."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"benchmark": "hybridialogue-facts"}))
    base = {"id": "dialogue-1", "type": "plain", "fact": "The bridge opened in 1937.", "human": "Supports",
            "query": "When did it open?", "history": [["user", "Hi"], ["assistant", "Hello"]],
            "response": "It opened in 1937.", "passages": [{"id": "p9", "title": "Bridge", "text": "The bridge opened in 1937."}]}
    rows = [{**base, "method": "nli", "label": "Supports", "evidence": [{"text": "opened in 1937", "title": "Bridge"}]},
            {**base, "method": "llm", "label": "Refutes", "evidence": []}]
    (run / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    [item] = read_path(run).items
    assert (item.item_id, item.gold, item.query, item.source) == ("dialogue-1", "Supports", "When did it open?", "plain")
    assert [p.id for p in item.evidence] == ["p9"] and item.history == (("user", "Hi"), ("assistant", "Hello"))
    changed = [rows[0], {**rows[1], "fact": "The bridge opened in 1932."}]
    (run / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in changed))
    with pytest.raises(AnnotationError, match="duplicate item id"):
        read_path(run)


@pytest.fixture()
def cli(capsys):
    """`python -m core annotation ...` in this process: (exit code, stdout, stderr)."""
    from core.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["annotation", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_command_line(tmp_path, cli):
    db = str(tmp_path / "cli.sqlite3")
    out = subprocess.run([sys.executable, "-m", "core", "annotation", "import", "--db", db, "--task", "t", str(SAMPLE)],
                         cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["items_added"] == 6  # the module entry point itself, once
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": f"hd-{k}", "annotator": who, "label": x}) + "\n"
                              for who, xs in (("a", "SSRR"), ("b", "SRRR")) for k, x in zip(range(1, 5), xs)).replace(
        '"S"', '"Supports"').replace('"R"', '"Refutes"'))
    assert cli("import", "--db", db, "--task", "t", str(labels))[0] == 0
    report = json.loads(cli("agreement", "--db", db, "--task", "t")[1])
    assert report["pairwise_kappa"] == {"a|b": pytest.approx(0.5)} and report["alpha"] == pytest.approx(16 / 30)
    assert report["items"] == 6 and report["annotators"] == ["a", "b"] and report["observed_agreement"] == pytest.approx(0.75)
    for fmt in ("jsonl", "csv"):
        target = tmp_path / f"out.{fmt}"
        assert cli("export", "--db", db, "--task", "t", "--format", fmt, "--out", str(target))[0] == 0
        assert len(read_path(target).labels) == 8
    code, _, err = cli("import", "--db", db, "--task", "new", str(REPO / "tests" / "fixtures" / "mtbench_small.jsonl"))
    assert code == 2 and "nothing stored" in err and "missing columns" in err
    assert AnnotationStore(db).find_task("new", owner="ws:cli") is None  # not even an empty task
    code, _, err = cli("agreement", "--db", db, "--task", "nope")
    assert code == 2 and "no task named 'nope'" in err
    assert cli("agreement", "--db", db, "--task", "t", "--owner", "ws:other")[0] == 2  # another workspace's task


def test_csv_export_neutralises_formulas_and_reads_them_back():
    """A spreadsheet must open an annotator's '=HYPERLINK(...)' as text, and the import gets it back unchanged."""
    import csv as csv_module
    import io

    from core.annotation.formats import export_rows

    texts = {"x1": "=HYPERLINK(\"http://evil\",\"click\")", "x2": "+1 555 0100", "x3": "-2 degrees", "x4": "@cmd",
             "x5": "'quoted already", "x6": "'=both", "x7": "plain"}
    rows = [{"item_id": k, "fact": v, "annotator": "ana", "label": "Supports", "comment": v} for k, v in texts.items()]
    batch = batch_from_rows(rows)
    text = write_csv(export_rows(batch.items, batch.labels, {}))
    cells = [row for row in csv_module.DictReader(io.StringIO(text, newline=""))]
    for row in cells:
        for column in ("fact", "comment"):
            assert not row[column].startswith(("=", "+", "-", "@")), row[column]
    assert {r["item_id"]: r["fact"] for r in cells}["x1"] == "'" + texts["x1"]
    assert {r["item_id"]: r["fact"] for r in cells}["x7"] == "plain"
    back = read_bytes("r.csv", text.encode())
    assert {item.item_id: item.fact for item in back.items} == texts
    assert {label.item_id: label.comment for label in back.labels} == texts
