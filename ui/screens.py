"""Each method's own parts of the Chat page, beside the method registry (core.methods.METHODS maps
a name to its class; SCREENS maps the same name to its screen): options in the sidebar, the
method's settings for the chat, what must be ready before it replies (drawn in the reply box), and
how its trace is drawn (ui.trace_views). Every method has an entry; a new method adds one here, and
the page never asks which method it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ui import mcts, trace_views
from ui.trace_views import TraceView


def _nothing() -> None:
    """No options to show, nothing to wait for."""


def _default_config():
    return None  # the method's own defaults


@dataclass(frozen=True)
class MethodScreen:
    sidebar: Callable[[], None] = _nothing  # widgets under the method picker
    chat_config: Callable[[], object] = _default_config  # the method's config with this user's choices
    get_ready: Callable[[], None] = _nothing  # in the reply box, before the reply: e.g. a knowledge index's progress
    trace: TraceView = trace_views.PROMPT  # the view of the trace its replies carry, whole and while it grows


PLAIN = MethodScreen()  # no options; the trace is the prompt sent
STEPS = MethodScreen(trace=trace_views.STEPS)
TREE = MethodScreen(trace=trace_views.TREE)
KG = MethodScreen(trace=trace_views.KG)
SCREENS: dict[str, MethodScreen] = {
    "base": PLAIN,
    "rag": PLAIN,
    "dsm": PLAIN,
    "dsmart": TREE,
    "rt": TREE,
    "sgmem": STEPS,
    "sgmem-h": STEPS,
    "mcts": MethodScreen(sidebar=mcts.kb_picker, chat_config=mcts.chat_config, get_ready=mcts.wait_for_kb,
                         trace=trace_views.MCTS),
    "kgaug": KG,
    "kgaug-c": KG,
    "mem0": STEPS,
}

# The screens' views by the kind of trace they draw. A trace is drawn by its own kind, not by the
# method named on the reply: any method's reply without a trace of its own carries the prompt
# (core.methods.Method), and a stored reply keeps the kind it was made with.
TRACE_VIEWS: dict[str, TraceView] = {s.trace.kind: s.trace for s in (PLAIN, *SCREENS.values())}


def screen_of(method_name: str) -> MethodScreen:
    return SCREENS.get(method_name, PLAIN)  # a conversation of a method this version does not have


def trace_view(kind: str) -> TraceView:
    """The view of a trace of this kind; a kind no screen draws (a reply stored by another version)
    shows as the plain table of its nodes and prompt."""
    return TRACE_VIEWS.get(kind, PLAIN.trace)
