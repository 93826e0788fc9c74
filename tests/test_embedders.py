"""Named embedders (issue 21): slices joined once and verified (refused on any mismatch), the named
choice resolving offline, embedding caches that never mix embedders, and a case where the two real
embedders rank differently."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from core.embedders import MPNET, STAMP, ModelIntegrityError, SlicedModel, ensure_sliced_model, resolve_embedder, slice_paths
from core.paths import MissingResource
from core.resources import Embedder, HashingEmbedder
from core.retrieval.cache import CachedEmbedder

WEIGHTS = bytes(range(256)) * 400  # stands in for model.safetensors


def sliced_zip(tmp_path: Path, parts: int = 3) -> tuple[SlicedModel, list[Path]]:
    """A zipped model folder cut into `parts` raw slices, and the spec that verifies it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("tiny-model/config.json", '{"dim": 4}')
        z.writestr("tiny-model/model.safetensors", WEIGHTS)
    data = buffer.getvalue()
    cut = [len(data) * i // parts for i in range(parts + 1)]
    slices = []
    for i in range(parts):
        path = tmp_path / f"tiny.zip.{i + 1:03d}"
        path.write_bytes(data[cut[i]:cut[i + 1]])
        slices.append(path)
    spec = SlicedModel("tiny-model", tuple(f"tiny-part-{i}" for i in range(parts)), "tiny-model", "model.safetensors",
                       len(WEIGHTS), hashlib.sha256(WEIGHTS).hexdigest())
    return spec, slices


def test_slices_join_once_into_the_cache_and_verify(tmp_path):
    spec, slices = sliced_zip(tmp_path)
    folder = ensure_sliced_model(spec, tmp_path / "cache", slices)
    assert folder == tmp_path / "cache" / "models" / "tiny-model"
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS and (folder / "config.json").is_file()
    assert (folder / STAMP).is_file()
    for s in slices:  # a second call uses the verified folder and never reads the slices
        s.unlink()
    assert ensure_sliced_model(spec, tmp_path / "cache", slices) == folder
    assert not list((tmp_path / "cache" / "models").glob(".tiny-model-*"))  # no temporary folder left


def test_a_wrong_slice_is_refused_and_leaves_nothing(tmp_path):
    spec, slices = sliced_zip(tmp_path)
    # a slice from "another release": same length, different bytes inside the stored file
    data = bytearray(slices[1].read_bytes())
    data[len(data) // 2] ^= 0xFF
    slices[1].write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match="tiny-model"):
        ensure_sliced_model(spec, tmp_path / "cache", slices)
    assert not (tmp_path / "cache" / "models" / "tiny-model").exists()


def test_slices_in_the_wrong_order_are_refused(tmp_path):
    spec, slices = sliced_zip(tmp_path)
    with pytest.raises(ModelIntegrityError, match="do not join into a valid zip|sha256|bytes"):
        ensure_sliced_model(spec, tmp_path / "cache", [slices[1], slices[0], slices[2]])


def test_a_right_zip_with_the_wrong_weights_is_refused_by_hash(tmp_path):
    spec, slices = sliced_zip(tmp_path)
    wrong = SlicedModel(spec.name, spec.distributions, spec.folder_in_zip, spec.checked_file, spec.size, "0" * 64)
    with pytest.raises(ModelIntegrityError, match="sha256"):
        ensure_sliced_model(wrong, tmp_path / "cache", slices)
    short = SlicedModel(spec.name, spec.distributions, spec.folder_in_zip, spec.checked_file, spec.size + 1, spec.sha256)
    with pytest.raises(ModelIntegrityError, match="bytes, expected"):
        ensure_sliced_model(short, tmp_path / "cache", slices)


def test_a_file_changed_after_joining_is_hashed_again_and_rebuilt(tmp_path):
    spec, slices = sliced_zip(tmp_path)
    folder = ensure_sliced_model(spec, tmp_path / "cache", slices)
    weights = folder / "model.safetensors"
    damaged = bytearray(weights.read_bytes())
    damaged[0] ^= 0xFF
    weights.write_bytes(bytes(damaged))  # same size, new mtime: the stamp no longer matches
    assert ensure_sliced_model(spec, tmp_path / "cache", slices) == folder
    assert weights.read_bytes() == WEIGHTS  # rebuilt from the slices


def test_missing_slice_packages_name_the_install_command():
    missing = SlicedModel("x", ("no-such-slice-package-zz",), "x", "model.safetensors", 1, "0" * 64)
    with pytest.raises(MissingResource, match="requirements-models.txt"):
        slice_paths(missing)


def test_named_choices_resolve_offline(tmp_path):
    path, name = resolve_embedder("minilm")
    assert name == "all-MiniLM-L6-v2" and (Path(path) / "config.json").is_file()
    assert resolve_embedder("sentence-transformers/all-MiniLM-L12-v2") == ("sentence-transformers/all-MiniLM-L12-v2", "all-MiniLM-L12-v2")
    assert resolve_embedder(str(tmp_path / "my-model")) == (str(tmp_path / "my-model"), "my-model")
    assert resolve_embedder("")[1] in ("all-MiniLM-L6-v2", MPNET.name)  # the default is one of the named two


@pytest.mark.slow
def test_mpnet_resolves_to_the_verified_folder():
    path, name = resolve_embedder("mpnet")
    folder = Path(path)
    assert name == "all-mpnet-base-v2" and (folder / "modules.json").is_file()
    assert (folder / "model.safetensors").stat().st_size == MPNET.size and (folder / STAMP).is_file()


class _Fixed(Embedder):
    """Same name and dimension as its sibling, different vectors: only the fingerprint tells them apart."""

    def __init__(self, seed: int) -> None:
        self.name, self.dim, self.seed, self.calls = "same-name", 8, seed, 0

    def encode(self, texts, batch_size=64):
        self.calls += len(texts)
        rows = [np.random.default_rng([self.seed, len(t)]).normal(size=8) for t in texts]
        v = np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_embedding_caches_do_not_mix_embedders(tmp_path):
    a, b = _Fixed(1), _Fixed(2)
    texts = ["a sentence", "another one here"]
    cached_a = CachedEmbedder(a, tmp_path)
    va = cached_a.encode(texts)
    cached_b = CachedEmbedder(b, tmp_path)  # same folder, same name and dimension
    vb = cached_b.encode(texts)
    assert cached_a.path != cached_b.path
    np.testing.assert_allclose(vb, b.encode(texts), atol=1e-6)
    assert not np.allclose(va, vb)
    # a new process with embedder A reads A's vectors back without calling the model
    again = CachedEmbedder(_Fixed(1), tmp_path)
    np.testing.assert_allclose(again.encode(texts), va, atol=1e-6)
    assert again.computed == 0
    h = CachedEmbedder(HashingEmbedder(16), tmp_path)
    assert h.encode(texts).shape == (2, 16) and h.path not in (cached_a.path, cached_b.path)


@pytest.mark.slow
def test_mpnet_and_minilm_rank_a_small_case_differently():
    """The answer without the query's words against a distractor that repeats them: all-mpnet-base-v2
    ranks the answer first (cosine .59 vs .47 on 2026-11-23), all-MiniLM-L6-v2 the distractor (.58 vs .65)."""
    from core.resources import load_embedder

    query = "What pet does Caroline have?"
    docs = ["Caroline: My guinea pig Oscar loves carrots.", "Caroline: I have a lot of pet projects at work."]
    best = {}
    for name in ("minilm", "mpnet"):
        e = load_embedder(name)
        best[name] = int(np.argmax(e.encode(docs) @ e.encode([query])[0]))
    assert best == {"minilm": 1, "mpnet": 0}


def test_a_lazy_embedder_loads_its_model_on_first_use_only():
    from core.resources import LazyEmbedder, load_embedder

    lazy = LazyEmbedder("hashing")
    assert lazy._model is None  # building a toolkit with it loads nothing
    texts = ["My dog is Rex.", "I cycle to work."]
    assert np.allclose(lazy.encode(texts), load_embedder("hashing").encode(texts))
    assert lazy.model is load_embedder("hashing") and lazy.dim == load_embedder("hashing").dim
