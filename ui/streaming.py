"""A method's reply written into the page as the LLM generates it.

The method runs in a worker thread and hands each piece of text to a queue; the script thread
writes the pieces with `st.write_stream`. When the run is interrupted (the Stop button or any
other widget reruns the script, or the page closes), the generator is closed and its `finally`
cancels the generation, so an abandoned reply stops using the model.
"""

from __future__ import annotations

import queue
import threading

import streamlit as st

from core.dialogue import Dialogue, Reply, Trace
from core.methods import Method, ReplyStream
from ui import safe

_DONE = object()


class _Partial:
    """A partial trace in the queue of text pieces (drawn above the answer, not written into it)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace


def render_partial(trace: Trace) -> None:
    """What a method has found so far, in the reply box: the method's own short view where it has one."""
    from ui import mcts

    views = {"mcts": mcts.render_partial}
    view = views.get(trace.kind)
    if view is not None:
        view(trace)
    else:
        st.caption(f"{len(trace.nodes)} step(s) so far…")


def stream_reply(method: Method, dialogue: Dialogue, query: str, max_tokens: int) -> tuple[Reply, bool]:
    """(the reply, whether its text was streamed). Errors of the method are raised here. Partial
    traces the method hands over while it works are drawn above the answer as they come."""
    pieces: queue.Queue = queue.Queue()
    stream = ReplyStream(sink=pieces.put, max_tokens=max_tokens, trace=lambda trace: pieces.put(_Partial(trace)))
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["reply"] = method.respond_streaming(dialogue, query, stream)
        except Exception as err:  # handed to the script thread and raised there, not hidden
            outcome["error"] = err
        finally:
            pieces.put(_DONE)

    worker = threading.Thread(target=work, name="reply", daemon=True)
    worker.start()

    partial = st.empty()

    def written():
        try:
            while (piece := pieces.get()) is not _DONE:
                if isinstance(piece, _Partial):
                    with partial.container():
                        render_partial(piece.trace)
                    continue
                yield safe.literal(piece)  # model text as text, piece by piece (the escape is per character)
        finally:
            stream.cancel.set()

    shown = st.write_stream(written())
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["reply"], bool(shown)


def queue_note(llm, slots: int) -> str:
    """A line for the page when the shared model is busy with other users' requests."""
    pending = getattr(llm, "pending", lambda: 0)()
    if pending >= slots:
        return f"The model is serving {pending} request(s); yours starts when one of its {slots} slots is free."
    return ""
