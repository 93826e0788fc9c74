"""The memory artifact of a method in a conversation (key `memory_key(method)`): `MAGIC`, a format
version byte, the number of turns it covers (8 bytes, little-endian), then the method's
`save_state()`. Artifacts written before the version (the count, then the state) still read.
`load_memory` and `save_memory` read and write them (the conversation service, the Memory graph's
replay); core.forget rebuilds them; core.db.grep decodes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

MAGIC = b"WBMEMORY"  # never the first 8 bytes of an old artifact: that would be a count of ~6e18 turns
ARTIFACT_VERSION = 1


@dataclass(frozen=True)
class SavedMemory:
    observed: int  # turns the memory covers
    state: bytes  # what the method's save_state() wrote
    version: int = ARTIFACT_VERSION  # 0: written before the format had a version


def memory_key(method_name: str) -> str:
    """The artifact kind a method's memory is stored under, one per method in a conversation."""
    return f"method:{method_name}"


def pack_memory(observed: int, state: bytes) -> bytes:
    return MAGIC + bytes([ARTIFACT_VERSION]) + observed.to_bytes(8, "little") + state


def unpack_memory(blob: bytes) -> SavedMemory:
    """Either format; ValueError for an artifact of a newer version than this code reads."""
    if blob.startswith(MAGIC):
        version = blob[len(MAGIC)]
        if version > ARTIFACT_VERSION:
            raise ValueError(f"memory artifact version {version} is newer than this code reads ({ARTIFACT_VERSION})")
        head = len(MAGIC) + 1
        return SavedMemory(int.from_bytes(blob[head:head + 8], "little"), blob[head + 8:], version)
    return SavedMemory(int.from_bytes(blob[:8], "little"), blob[8:], version=0)


class ArtifactStore(Protocol):
    """The part of core.store.Store the artifact needs; a protocol, since core.db (below the store)
    decodes artifacts with this module."""

    def get_artifact(self, cid: str, kind: str, *, owner: str) -> bytes | None: ...

    def put_artifact(self, cid: str, kind: str, data: bytes, *, owner: str) -> None: ...


def load_memory(store: ArtifactStore, cid: str, method_name: str, *, owner: str) -> SavedMemory | None:
    blob = store.get_artifact(cid, memory_key(method_name), owner=owner)
    return None if blob is None else unpack_memory(blob)


def save_memory(store: ArtifactStore, cid: str, method_name: str, observed: int, state: bytes, *, owner: str) -> None:
    store.put_artifact(cid, memory_key(method_name), pack_memory(observed, state), owner=owner)
