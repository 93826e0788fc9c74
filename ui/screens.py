"""Each method's own parts of the Chat page, beside the method registry (core.methods.METHODS maps
a name to its class; SCREENS maps the same name to its screen): options in the sidebar, the
method's settings for the chat, and what must be ready before it replies (drawn in the reply box).
A method without an entry has none of these. A new method with options adds one entry here; the
page never asks which method it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ui import mcts


def _nothing() -> None:
    """No options to show, nothing to wait for."""


def _default_config():
    return None  # the method's own defaults


@dataclass(frozen=True)
class MethodScreen:
    sidebar: Callable[[], None] = _nothing  # widgets under the method picker
    chat_config: Callable[[], object] = _default_config  # the method's config with this user's choices
    get_ready: Callable[[], None] = _nothing  # in the reply box, before the reply: e.g. a knowledge index's progress


PLAIN = MethodScreen()
SCREENS: dict[str, MethodScreen] = {
    "mcts": MethodScreen(sidebar=mcts.kb_picker, chat_config=mcts.chat_config, get_ready=mcts.wait_for_kb),
}


def screen_of(method_name: str) -> MethodScreen:
    return SCREENS.get(method_name, PLAIN)
