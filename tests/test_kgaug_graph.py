"""The OpenDialKG loader and the knowledge graph: reverse relations, bad rows and lines skipped
and counted, RDF round trip, the content-keyed cache, and a million-line file streamed."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from core.data.opendialkg import in_split, load_opendialkg
from core.methods.kgaug.graph import FROM_DIALOGUE, FROM_ITEMS, GraphBuilder
from core.methods.kgaug.sources import KGSources, build_graph, load_graph, read_tsv_triples, sources_key
from core.methods.kgaug.triples import Triple, canonical, verbalize
from tests.kgaug_helpers import all_triples, dialogue_row, small_graph, write_csv


def test_reverse_relations_are_stored_once_in_the_plain_direction():
    assert canonical("Sidney Lumet", "~directed_by", "Find Me Guilty") == Triple("Find Me Guilty", "directed_by", "Sidney Lumet")
    kg = small_graph(extra=[("Sidney Lumet", "~directed_by", "Find Me Guilty")])  # the same fact read backwards
    assert kg.triple_ids([Triple("Find Me Guilty", "directed_by", "Sidney Lumet")])
    assert len(kg) == 14  # the duplicate collapsed
    assert kg.report["duplicates"] == 1
    assert Triple("Find Me Guilty", "written_by", "Sidney Lumet") in all_triples(kg)
    lumet = kg.entity_id("Sidney Lumet")
    touching = {kg.triple(int(i)) for i in kg.edges(lumet)}
    brute = {t for t in all_triples(kg) if "Sidney Lumet" in (t.head, t.tail)}
    assert touching == brute and len(brute) == 3
    assert kg.degree[lumet] == 3
    assert verbalize(Triple("Find Me Guilty", "starred_actors", "Vin Diesel")) == "Find Me Guilty starred actors Vin Diesel"


def test_sources_flags_merge_when_two_inputs_assert_a_fact():
    b = GraphBuilder()
    b.add("A", "r", "B", FROM_DIALOGUE)
    b.add("B", "~r", "A", FROM_ITEMS)
    kg = b.build()
    assert len(kg) == 1 and kg.source_names(0) == ["dialogue path", "item graph"]


def test_opendialkg_rows_bad_ones_skipped_and_counted(tmp_path):
    good = dialogue_row([("user", "Could you recommend films directed by Sidney Lumet?", None),
                         ("assistant", "He directed Find Me Guilty.", [("Sidney Lumet", "~directed_by", "Find Me Guilty")]),
                         ("user", "Who starred in it?", None)])
    path = tmp_path / "odkg.csv"
    write_csv(path, [good, ["{not json", "{}", "{}"], [json.dumps([{"type": "action", "action_id": "kgwalk/choose_path",
                                                                     "sender": "user", "metadata": {"path": [0.0, [["a", "b"]], ""]}}])],
                     [], good])
    dialogues, stats = load_opendialkg(path)
    assert [d.index for d in dialogues] == [0, 4]  # row positions survive skipped rows
    assert stats.rows == 5 and stats.skipped_rows == 3
    assert stats.skipped == {"Messages is not JSON": 1, "bad path triple": 1, "missing Messages column": 1}
    (ex,) = list(dialogues[0].examples())
    assert ex.query.startswith("Could you") and ex.gold == (("Sidney Lumet", "~directed_by", "Find Me Guilty"),)
    assert ex.response == "He directed Find Me Guilty." and ex.context == []
    assert [in_split(i, "eval") for i in range(6)] == [True, False, False, False, False, True]
    kg = build_graph(KGSources(dialogue_files=(str(path),)))
    assert all_triples(kg) == {Triple("Find Me Guilty", "directed_by", "Sidney Lumet")}
    assert kg.report["inputs"][0]["skipped"]


def test_tsv_lines_malformed_skipped_and_counted(tmp_path):
    path = tmp_path / "kg.tsv"
    path.write_text("# comment\nA\tr\tB\nbroken line\nC\t\tD\nE\tr\tF\textra\n\nB\t~s\tA\n", encoding="utf-8")
    skipped: dict = {}
    rows = list(read_tsv_triples(path, skipped))
    assert rows == [("A", "r", "B"), ("B", "~s", "A")]
    assert skipped == {"not 3 tab-separated fields": 3}
    kg = build_graph(KGSources(triple_files=(str(path),)))
    assert all_triples(kg) == {Triple("A", "r", "B"), Triple("A", "s", "B")}


def test_bytes_that_are_not_utf8_skip_their_row_or_line_and_are_counted(tmp_path):
    good = dialogue_row([("user", "Who directed Find Me Guilty?", None),
                         ("assistant", "Sidney Lumet.", [("Find Me Guilty", "directed_by", "Sidney Lumet")])])
    path = tmp_path / "odkg.csv"
    write_csv(path, [good, good])
    text = path.read_bytes()
    last = text.rindex(b"Sidney Lumet.")
    path.write_bytes(text[:last] + b"Sidney Lum\xe9t." + text[last + len(b"Sidney Lumet."):])  # latin-1 in row 1
    dialogues, stats = load_opendialkg(path)
    assert [d.index for d in dialogues] == [0] and stats.skipped == {"not UTF-8": 1} and stats.rows == 2
    tsv = tmp_path / "kg.tsv"
    tsv.write_bytes("A\tr\tB\nCaf\u00e9\tr\tD\n".encode() + b"Caf\xe9\tr\tE\n")
    skipped: dict = {}
    assert list(read_tsv_triples(tsv, skipped)) == [("A", "r", "B"), ("Caf\u00e9", "r", "D")]
    assert skipped == {"not UTF-8": 1}


def test_a_csv_that_is_not_opendialkg_is_refused_and_an_empty_one_is_empty(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("foo,bar\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="other.csv: no 'Messages' column"):
        load_opendialkg(path)
    path.write_text("", encoding="utf-8")
    dialogues, stats = load_opendialkg(path)
    assert dialogues == [] and stats.rows == 0


def test_a_damaged_cache_entry_is_rebuilt_not_trusted(tmp_path):
    a = tmp_path / "a.tsv"
    a.write_text("A\tr\tB\n")
    cache = tmp_path / "cache"
    load_graph(KGSources(triple_files=(str(a),)), cache)
    (entry,) = cache.iterdir()
    entry.write_bytes(entry.read_bytes()[:40])  # truncated
    again = load_graph(KGSources(triple_files=(str(a),)), cache)
    assert again.report["cache"]["hit"] is False and all_triples(again) == {Triple("A", "r", "B")}
    assert load_graph(KGSources(triple_files=(str(a),)), cache).report["cache"]["hit"] is True


@pytest.mark.parametrize("name, content", [
    ("kg.ttl", b"@prefix ex: <http://e/> .\nex:a ex:r ex:b .\nex:c ex:r \n"),
    ("kg.nt", b"<http://a> <http://b> .\n"),
    ("kg.rdf", b"<rdf:RDF><broken"),
    ("kg.jsonld", b"{not json"),
    ("kg.ttl", b"@prefix ex: <http://e/> .\nex:a ex:r \"caf\xe9\" .\n"),
])
def test_a_malformed_rdf_file_is_refused_with_its_name(tmp_path, name, content):
    """One syntax error spoils a whole RDF document (no line to skip): a clear error naming the file."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"{name}: not readable as RDF"):
        build_graph(KGSources(triple_files=(str(path),)))


def test_a_malformed_item_graph_is_refused_with_its_name(tmp_path):
    path = tmp_path / "id2info.json"
    path.write_text('{"1": {"name": "A", "actor": ["B"]', encoding="utf-8")
    with pytest.raises(ValueError, match="id2info.json: not an item-graph JSON file"):
        build_graph(KGSources(item_files=(str(path),)))
    path.write_text('{"1": {"name": "A", "actor": ["B", {"x": 1}]}, "2": {"actor": "C"}}', encoding="utf-8")
    kg = build_graph(KGSources(item_files=(str(path),)))
    assert all_triples(kg) == {Triple("A", "starred_actors", "B")}
    assert kg.report["inputs"][0]["skipped"] == {"bad attribute value": 1, "item without a name": 1}


def test_rdf_export_reads_back_as_the_same_triples(tmp_path):
    kg = small_graph(extra=[("Café <b>", "rel with space", "x/y#z")])
    path = tmp_path / "kg.ttl"
    kg.to_rdflib().serialize(path, format="turtle")
    again = load_graph(KGSources(triple_files=(str(path),)), use_cache=False)
    assert all_triples(again) == all_triples(kg)
    sub = kg.to_networkx(kg.edges(kg.entity_id("Vin Diesel")))
    assert set(sub.nodes) == {"Vin Diesel", "Find Me Guilty", "Fast Five"} and sub.number_of_edges() == 2


def test_cache_is_keyed_by_content_not_path(tmp_path):
    a = tmp_path / "a.tsv"
    a.write_text("A\tr\tB\n")
    cache = tmp_path / "cache"
    first = load_graph(KGSources(triple_files=(str(a),)), cache)
    assert first.report["cache"]["hit"] is False
    b = tmp_path / "b.tsv"
    b.write_text("A\tr\tB\n")
    second = load_graph(KGSources(triple_files=(str(b),)), cache)
    assert second.report["cache"]["hit"] is True and all_triples(second) == {Triple("A", "r", "B")}
    b.write_text("A\tr\tC\n")
    assert sources_key(KGSources(triple_files=(str(b),))) != sources_key(KGSources(triple_files=(str(a),)))
    third = load_graph(KGSources(triple_files=(str(b),)), cache)
    assert third.report["cache"]["hit"] is False and all_triples(third) == {Triple("A", "r", "C")}
    with pytest.raises(FileNotFoundError):
        load_graph(KGSources(triple_files=(str(tmp_path / "missing.tsv"),)), cache)
    same = KGSources(dialogue_files=(str(a),)).with_dialogues(str(tmp_path / "cache" / ".." / "a.tsv"), str(b))
    assert same.dialogue_files == (str(a), str(b))  # the same file by another path is not read twice


@pytest.mark.slow
def test_a_million_line_file_is_streamed_with_bounded_memory(tmp_path):
    """1,000,000 lines (~36 MB) over 5,000 entities: memory grows with what is stored, not with
    the file, and max_triples bounds it."""
    path = tmp_path / "big.tsv"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1_000_000):
            f.write(f"entity number {i % 5000}\trelation {i % 7}\tentity number {(i * 7919) % 5000}\n" if i % 1000 else "bad line\n")
    size = path.stat().st_size
    tracemalloc.start()
    kg = build_graph(KGSources(triple_files=(str(path),), max_triples=200_000))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert kg.report["inputs"][0]["skipped"] == {"not 3 tab-separated fields": 1000}
    assert kg.report["stored_rows"] == 200_000 and kg.report["over_cap"] == 999_000 - 200_000
    stored = [i for i in range(1_000_000) if i % 1000][:200_000]  # the lines kept before the cap
    names = {f"entity number {n}" for i in stored for n in (i % 5000, (i * 7919) % 5000)}
    assert set(kg.entities) == names  # nothing past the cap was interned either
    assert peak < size / 3, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
