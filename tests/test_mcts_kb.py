"""The GenericsKB loader and the on-disk KB cache: clean-up, round-trip, header checks, bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.methods.mcts.config import KBSettings
from core.methods.mcts.kb import (KBFormatError, KnowledgeBase, clean_sentence, ensure_groups, load_or_build,
                                  read_genericskb, save_array)
from core.resources import HashingEmbedder
from tests.mcts_helpers import ROWS, write_kb


class CountingEmbedder(HashingEmbedder):
    def __init__(self, dim: int = 128) -> None:
        super().__init__(dim)
        self.encoded = 0

    def encode(self, texts, batch_size: int = 64):
        self.encoded += len(texts)
        return super().encode(texts, batch_size)


def test_clean_sentence_rewrites_isa_and_drops_part():
    assert clean_sentence("A pet isa animal.") == "A pet is a animal."
    assert clean_sentence("Birds have (part) wings.") == "Birds have wings."
    assert clean_sentence("Isabel is a name.") == "Isabel is a name."  # only the word "isa"


def test_reader_handles_crlf_and_duplicates(tmp_path):
    rows = ROWS + [("dog", "Dogs are loyal animals.", "0.5")]
    rows_read = read_genericskb(write_kb(tmp_path, rows, "\r\n"))
    assert len(rows_read.texts) == len(ROWS) and rows_read.dropped_duplicates == 1
    assert rows_read.texts[17] == "A pet is a animal." and rows_read.texts[18] == "Birds have wings."
    assert not any(t.endswith("\r") for t in rows_read.texts + rows_read.terms)
    assert rows_read.scores[1] == 0.9
    assert read_genericskb(write_kb(tmp_path, ROWS, "\n")).sha256 != rows_read.sha256


@pytest.mark.parametrize("content, message", [
    (b"dog\tDogs bark.\r\n", "2 tab-separated column(s), expected 3"),
    (b"dog\tDogs bark.\t1.0\textra\r\n", "line 1: 4 tab-separated"),
    (b"dog\tDogs bark.\tlots\r\n", "score 'lots' is not a number"),
    (b"dog\tDogs bark.\t1.0\r\ncaf\xe9\tCaf\xe9s sell coffee.\t1.0\r\n", "not UTF-8 (line 2"),
    (b"\r\n\r\n", "no rows"),
])
def test_bad_files_give_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(KBFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_genericskb(path)
    with pytest.raises(KBFormatError, match="no knowledge-base file"):
        read_genericskb(tmp_path / "missing.txt")


def test_a_second_build_of_the_same_kb_keeps_the_first_folder_and_caches_write_safely(tmp_path):
    """Two builds of one key at once (two embedder objects of one name, test_mcts_prepare): the second
    to save leaves the first's complete folder where it is, since that build may be writing its
    groups there; a cache array whose folder is gone is skipped, not an error."""
    settings = KBSettings(concepts_per_group=4, cache_dir=str(tmp_path / "cache"))
    path = write_kb(tmp_path)
    first = load_or_build(path, HashingEmbedder(128), settings)
    marker = first.folder / "groups-marker.npy"
    save_array(marker, np.arange(3))
    first.save(first.folder)  # the same build again: the folder, and what was cached in it, stay
    assert np.array_equal(np.load(marker), np.arange(3))
    assert not [p for p in first.folder.parent.iterdir() if ".tmp-" in p.name]  # no temporary left behind
    save_array(tmp_path / "gone" / "knn-3.npy", np.arange(3))  # no folder: nothing written, nothing raised
    assert not (tmp_path / "gone").exists()


def test_build_save_load_round_trip(tmp_path):
    settings = KBSettings(concepts_per_group=4, cache_dir=str(tmp_path / "cache"))
    embedder = CountingEmbedder()
    path = write_kb(tmp_path)
    built = load_or_build(path, embedder, settings)
    first = embedder.encoded
    # sentences, concepts, and two probes (the KB folder's key, the embedding cache's key)
    assert first == len(ROWS) + len(built.concepts) + 2
    header = json.loads((built.folder / "header.json").read_text())
    assert header["format"] == "mcts-kb" and header["sentences"] == len(ROWS) and header["source"] == "kb.txt"

    loaded = load_or_build(path, embedder, settings)
    assert embedder.encoded == first + 1  # only the probe: nothing rebuilt
    assert loaded.texts == built.texts and loaded.terms == built.terms and loaded.concepts == built.concepts
    assert np.array_equal(loaded.vectors, built.vectors) and np.array_equal(loaded.concept_vectors, built.concept_vectors)
    for a, b in [(loaded.sent_ptr, built.sent_ptr), (loaded.sent_concepts, built.sent_concepts),
                 (loaded.concept_ptr, built.concept_ptr), (loaded.concept_sents, built.concept_sents)]:
        assert np.array_equal(a, b)
    assert np.array_equal(loaded.groups.labels, built.groups.labels)

    # postings are the transpose of the sentence -> concept lists
    dog = built.concept_id["dog"]
    assert {i for i in range(len(built)) if dog in built.sentence_concepts(i)} == set(_postings(built, dog).tolist())
    assert "park" in [built.concepts[c] for c in built.sentence_concepts(1)]
    assert "pet" in [built.concepts[c] for c in built.sentence_concepts(17)]  # the term column counts


def _postings(kb, c: int):
    """The sentences of concept `c`, read from the postings arrays the search and groups use."""
    return kb.concept_sents[kb.concept_ptr[c]: kb.concept_ptr[c + 1]]


def test_changed_file_or_header_means_rebuild(tmp_path):
    settings = KBSettings(concepts_per_group=4, cache_dir=str(tmp_path / "cache"))
    embedder = CountingEmbedder()
    path = write_kb(tmp_path)
    kb = load_or_build(path, embedder, settings)
    header = json.loads((kb.folder / "header.json").read_text())
    (kb.folder / "header.json").write_text(json.dumps({**header, "version": 999}))
    before = embedder.encoded
    again = load_or_build(path, embedder, settings)
    assert json.loads((kb.folder / "header.json").read_text())["version"] == 1 and again.texts == kb.texts  # rebuilt
    assert embedder.encoded == before + 2  # ... from the embedding cache: nothing embedded again but the probes
    write_kb(tmp_path, ROWS[:10])
    smaller = load_or_build(path, embedder, settings)
    assert len(smaller) == 10 and smaller.folder != kb.folder  # another file hash, another folder


def test_slice_and_groups(tmp_path):
    settings = KBSettings(concepts_per_group=4, cache_dir=str(tmp_path / "cache"))
    kb = load_or_build(write_kb(tmp_path), HashingEmbedder(128), settings, limit=12)
    assert len(kb) == 12
    groups = ensure_groups(kb, settings)
    assert groups.n_groups == max(1, round(len(kb.concepts) / 4))
    c = kb.concept_id["dog"]
    members = groups.concepts_of_group(groups.labels[c])
    expected = set(np.concatenate([_postings(kb, m) for m in members]).tolist())
    assert set(kb.group_sentences(c).tolist()) == expected
    assert isinstance(kb, KnowledgeBase)
