"""Splitting a benchmark's items into shards that any scheduler can run apart.

`--shard K/N` keeps the items whose id hashes to K modulo N (K counts from 0, as Slurm's
`$SLURM_ARRAY_TASK_ID` with `--array=0-(N-1)` and Kubernetes' `$JOB_COMPLETION_INDEX` do); items
that must stay together (the rows of one QA question) hash a shared key instead (BenchContext.plan).
The hash is SHA-1 of the id, not Python's `hash()` (salted per process), so every machine, process
and rerun puts an item in the same shard: the N shards never overlap and together cover every item.

A shard run records in its summary which shard it was and the ids the whole run plans (in run
order), so `bench-merge` can name every item that is missing or duplicated and write the joined items
in the single run's order.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Shard:
    index: int  # K, 0 <= K < N
    count: int  # N

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"a shard is K/N with 0 <= K < N, got {self.index}/{self.count}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, item_id: str) -> bool:
        return shard_of(item_id, self.count) == self.index

    def as_dict(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str) -> Shard:
    """'2/3' -> Shard(2, 3)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match:
        raise ValueError(f"--shard wants K/N (e.g. 0/3), got {text!r}")
    return Shard(int(match.group(1)), int(match.group(2)))


def shard_of(item_id: str, count: int) -> int:
    digest = hashlib.sha1(str(item_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def split(ids: Iterable[str], count: int) -> list[list[str]]:
    """The ids of each of `count` shards, each in the given order."""
    out: list[list[str]] = [[] for _ in range(count)]
    for item_id in ids:
        out[shard_of(item_id, count)].append(item_id)
    return out


def duplicates(ids: Iterable[str]) -> list[str]:
    seen, twice = set(), []
    for item_id in ids:
        if item_id in seen and item_id not in twice:
            twice.append(item_id)
        seen.add(item_id)
    return twice
