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

from core.dialogue import Dialogue, Reply
from core.methods import Method, ReplyStream
from ui import safe

_DONE = object()


def stream_reply(method: Method, dialogue: Dialogue, query: str, max_tokens: int) -> tuple[Reply, bool]:
    """(the reply, whether its text was streamed). Errors of the method are raised here."""
    pieces: queue.Queue = queue.Queue()
    stream = ReplyStream(sink=pieces.put, max_tokens=max_tokens)
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

    def written():
        try:
            while (piece := pieces.get()) is not _DONE:
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
