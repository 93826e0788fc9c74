"""Joining and verifying the embedded model's slices: a good join loads, anything else is refused."""

from __future__ import annotations

import hashlib
import sys

import pytest

from core.llm.gguf_models import GGUFModel, ModelFileError, Slice, model_file, resolve_gguf


def _slices(root, parts: list[bytes], prefix: str) -> tuple[Slice, ...]:
    """Installed-looking packages `prefix0`, `prefix1`, ... each holding data/partNN.bin."""
    out = []
    for i, data in enumerate(parts):
        pkg = root / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('slice packages are never imported')\n")
        (pkg / "data" / f"part{i + 1:02d}.bin").write_bytes(data)
        out.append(Slice(f"{prefix}{i}", f"data/part{i + 1:02d}.bin"))
    return tuple(out)


@pytest.fixture()
def slice_root(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def _model(slices, whole: bytes, **changes) -> GGUFModel:
    fields = dict(key="test", label="Test model", filename="test.gguf", size=len(whole),
                  sha256=hashlib.sha256(whole).hexdigest(), license="-", source="-", install_hint="make install",
                  slices=slices)
    fields.update(changes)
    return GGUFModel(**fields)


def test_good_slices_join_once_and_verify(slice_root, tmp_path):
    parts = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    whole = b"".join(parts)
    model = _model(_slices(slice_root, parts, "okslice"), whole)
    path = model_file(model, tmp_path / "cache")
    assert path.read_bytes() == whole
    assert not any(p.name.endswith(".part") for p in path.parent.iterdir())  # no half-written file left
    assert "okslice0" not in sys.modules  # located, never imported


def test_a_wrong_slice_is_refused_and_the_join_removed(slice_root, tmp_path):
    good = [b"GGUF" + b"a" * 100, b"b" * 50]
    model = _model(_slices(slice_root, [good[0], b"X" * 50], "badslice"), b"".join(good))  # same size, other bytes
    with pytest.raises(ModelFileError, match="sha256"):
        model_file(model, tmp_path / "cache")
    assert not (tmp_path / "cache" / "models" / "test.gguf").exists()


def test_a_short_slice_is_refused_by_size(slice_root, tmp_path):
    good = [b"GGUF" + b"a" * 100, b"b" * 50]
    model = _model(_slices(slice_root, [good[0], b"b" * 49], "shortslice"), b"".join(good))
    with pytest.raises(ModelFileError, match="bytes, expected"):
        model_file(model, tmp_path / "cache")


def test_a_missing_slice_names_the_install_command(tmp_path):
    model = _model((Slice("no_such_slice_package_xyz", "data/part01.bin"),), b"GGUF")
    with pytest.raises(ModelFileError, match="make install"):
        model_file(model, tmp_path)


def test_a_path_must_be_a_gguf_file(tmp_path):
    with pytest.raises(ModelFileError, match="no embedded model file"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"not a model")
    with pytest.raises(ModelFileError, match="bad magic"):
        resolve_gguf(str(corrupt))
