"""Keys and values (the KV cache) of recently run prompts, found again by their token ids.

Reasoning-tree prompts grow step by step: a child state's prompt is its parent's plus the new
step, and the policy and value prompts of one state differ only in their last lines. So a prompt
reuses the longest prefix of its tokens that an earlier prompt already ran, and pays only for its
new tokens. Entries are kept least-recently-used first out, bounded by their total tokens (a
token's keys and values take 2 x layers x kv-heads x head-dim numbers: ~23 KB for SmolLM2-135M in
bfloat16). A hit needs identical token ids from position 0, so what one prompt reuses is exactly
what running it again would compute.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

Layers = tuple  # per layer (keys, values), each [1, kv_heads, tokens, head_dim]


class PromptCache:
    def __init__(self, max_tokens: int = 12_000) -> None:
        self.max_tokens = max_tokens
        self._entries: OrderedDict[tuple[int, ...], Layers] = OrderedDict()
        self._arrays: dict[tuple[int, ...], np.ndarray] = {}
        self.hits = 0  # tokens served from the cache (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def tokens(self) -> int:
        return sum(map(len, self._entries))

    def lookup(self, ids: list[int], limit: int) -> tuple[int, Layers | None]:
        """(n, keys and values of ids[:n]) for the longest cached prefix, n <= limit; (0, None) if none."""
        if not self._entries or limit <= 0:
            return 0, None
        query = np.asarray(ids[:limit])
        best, best_key = 0, None
        for key, array in self._arrays.items():
            n = _common_length(array, query)
            if n > best:
                best, best_key = n, key
        if best_key is None:
            return 0, None
        self._entries.move_to_end(best_key)
        self.hits += best
        return best, tuple((k[:, :, :best], v[:, :, :best]) for k, v in self._entries[best_key])

    def store(self, ids: list[int], layers: Layers) -> None:
        """Keep ids' keys and values; an entry that is a prefix of ids is now redundant and goes."""
        key = tuple(ids)
        if not key or len(key) > self.max_tokens:
            return
        array = np.asarray(key)
        for other in [k for k in self._entries if len(k) <= len(key) and _common_length(self._arrays[k], array) == len(k)]:
            self._drop(other)
        self._entries[key] = layers
        self._arrays[key] = array
        while self.tokens > self.max_tokens:
            self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        self._entries.clear()
        self._arrays.clear()

    def _drop(self, key: tuple[int, ...]) -> None:
        del self._entries[key]
        del self._arrays[key]


def _common_length(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n
