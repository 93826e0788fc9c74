"""An owner's live comparisons (the Compare page): each is a group of per-method conversations that
received the same messages, named by its key (the conversation ids joined by commas, the votes'
`conversation`). The list is kept in the owner's settings (`Store.get_settings`), most recently
used first, so a new visit reopens the latest comparison and offers the earlier ones; a
comparison one of whose conversations is gone (deleted, forgotten) is left out."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from core.store import Store

SETTINGS_KEY = "comparisons"
MAX_KEPT = 50  # the oldest fall off the list (their conversations and votes stay)


@dataclass(frozen=True)
class Comparison:
    key: str  # the group's conversation ids, joined by commas
    methods: tuple[str, ...]  # in the order they were chosen, one per conversation of the key
    title: str
    used_at: float  # when a message was last sent in it

    @property
    def group(self) -> dict[str, str]:
        """method -> conversation id."""
        return dict(zip(self.methods, self.key.split(",")))


def _parse(entry: object) -> Comparison | None:
    """An entry of the settings list, or None for one this code cannot read (hand-edited, older)."""
    if not isinstance(entry, dict):
        return None
    key, methods = entry.get("key"), entry.get("methods")
    if not isinstance(key, str) or not isinstance(methods, list) or len(methods) != len(key.split(",")) or len(methods) < 2:
        return None
    return Comparison(key, tuple(str(m) for m in methods), str(entry.get("title", "")), float(entry.get("used_at", 0.0)))


def comparisons(store: Store, owner: str) -> list[Comparison]:
    """The owner's comparisons whose conversations all still exist, most recently used first."""
    kept = [c for c in map(_parse, store.get_settings(owner=owner).get(SETTINGS_KEY, [])) if c is not None]
    mine = {c.id for c in store.list_conversations(owner=owner, include_shared=False)}
    return [c for c in sorted(kept, key=lambda c: -c.used_at) if set(c.key.split(",")) <= mine]


def remember(store: Store, owner: str, group: dict[str, str], title: str,
             now: Callable[[], float] = time.time) -> Comparison:
    """Put the comparison `group` (method -> conversation id) first in the owner's list (added, or
    moved there when a message is sent in it again); its first title stays."""
    settings = store.get_settings(owner=owner)
    key = ",".join(group.values())
    earlier = [c for c in map(_parse, settings.get(SETTINGS_KEY, [])) if c is not None]
    title = next((c.title for c in earlier if c.key == key), title)
    this = Comparison(key, tuple(group), title, now())
    entries = [this, *(c for c in earlier if c.key != key)][:MAX_KEPT]
    settings[SETTINGS_KEY] = [{"key": c.key, "methods": list(c.methods), "title": c.title, "used_at": c.used_at}
                              for c in entries]
    store.put_settings(settings, owner=owner)
    return this
