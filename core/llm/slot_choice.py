"""Which of llama.cpp's slots a chat request goes to: the one holding most of its prompt.

Left to itself the server gives a request the slot whose cached tokens share the longest common
prefix with it (if that prefix is at least `--slot-prompt-similarity` of the slot's cache), else
the least recently used slot. A conversation whose window was cut at its start shares only the
system message with its own slot, so it fails that test and goes to the least recently used slot,
which after a one-person conversation is the other one: the whole window is computed again, while
`n_cache_reuse` could have shifted it into place in the slot that holds it (4 of 24 late turns of
the long dev dialogues, docs/speed.md).

Here a request is matched by what it shares, beyond the chat opening every conversation has, with
the prompt last sent to each slot: its common prefix, or the messages it has in common anywhere
(the window after a cut), whichever is longer; ties go to the least recently used slot, and a free
slot before a busy one. A prompt that shares nothing (a new person's first message, a one-off call
of the memory) takes the slot holding the fewest messages, so it does not evict a conversation
while a slot holds none. The backend then pins the request there (`id_slot`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

RoleText = tuple[str, str]  # (role, content) of one chat message


@dataclass
class SlotContent:
    """What this chooser last sent to one slot, and whether it is serving now."""

    prompt: tuple[RoleText, ...] = ()  # the last prompt (empty: unknown, e.g. a scoring request by tokens)
    busy: int = 0
    last_used: int = 0  # the chooser's tick when the slot was last given a request


def common_prefix_chars(messages: Sequence[RoleText], held: Sequence[RoleText]) -> int:
    """Characters of content the two prompts share from their start: whole messages, then the
    common start of the first message that differs (a prompt template), if its role is the same."""
    total = 0
    for (role, content), (held_role, held_content) in zip(messages, held):
        if role != held_role:
            break
        if content != held_content:
            return total + len(os.path.commonprefix([content, held_content]))
        total += len(content)
    return total


def shared_chars(messages: Sequence[RoleText], slot: SlotContent) -> int:
    """How much of a prompt beyond a leading system message (the chat opening every conversation
    shares) a slot already holds, in characters of content: the longer of the common prefix and
    the messages found anywhere in the slot's last prompt (a window cut at its start)."""
    has_opening = bool(messages) and messages[0][0] == "system"
    # the same opening is not counted; another system message's common start is (a prompt template)
    opening = len(messages[0][1]) if has_opening and slot.prompt[:1] == tuple(messages[:1]) else 0
    prefix = common_prefix_chars(messages, slot.prompt) - opening
    held = set(slot.prompt)
    anywhere = sum(len(content) for role, content in (messages[1:] if has_opening else messages) if (role, content) in held)
    return max(prefix, anywhere, 0)


@dataclass
class SlotChooser:
    """Thread-safe slot bookkeeping for one server with `slots` sequences."""

    slots: int
    _content: list[SlotContent] = field(init=False)
    _tick: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError("a server has at least one slot")
        self._content = [SlotContent() for _ in range(self.slots)]

    def acquire(self, messages: Sequence[RoleText]) -> int:
        """The slot for this prompt, marked busy until `release`; it now holds this prompt."""
        with self._lock:
            free = [i for i, s in enumerate(self._content) if not s.busy]
            # with every slot busy the server waits for the chosen one: prefer the one sharing most anyway
            pool = free or range(self.slots)
            shared = {i: shared_chars(messages, self._content[i]) for i in pool}
            if max(shared.values()) > 0:
                best = max(pool, key=lambda i: (shared[i], -self._content[i].last_used))
            else:  # a new prompt: the slot holding the fewest messages (no conversation if one is free), then the oldest
                best = min(pool, key=lambda i: (len(self._content[i].prompt), self._content[i].last_used))
            self._take(best, tuple(messages))
            return best

    def hold(self, slot: int) -> None:
        """A request pinned to `slot` by its caller (token-level scoring): its content is not known."""
        with self._lock:
            self._take(slot, ())

    def release(self, slot: int) -> None:
        with self._lock:
            self._content[slot].busy -= 1

    def _take(self, slot: int, prompt: tuple[RoleText, ...]) -> None:
        self._tick += 1
        content = self._content[slot]
        content.prompt, content.last_used = prompt, self._tick
        content.busy += 1
