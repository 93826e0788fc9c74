"""The sha256 of a file, read in blocks: model weights are hundreds of MB, so never read whole."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: str | Path, block: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        while chunk := f.read(block):
            digest.update(chunk)
    return digest.hexdigest()
