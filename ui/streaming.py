"""A method's reply written into the page as it is made: first what the method is doing (the
reasoning tree as it grows, a knowledge index being built), then the answer's text as the LLM
generates it.

The method runs in a worker thread and hands progress and text to a queue; the script thread
draws them, and at least every `TICK` seconds updates the status line's clock. Each of those page
updates is where Streamlit stops a script whose run was interrupted (the Stop button or any other
widget reruns the script, or the page closes): the `finally` then cancels the reply, so its
generation stops and it sends no further LLM request (`core.llm.cancel`), and the shared model is
free for the next reply at once.
"""

from __future__ import annotations

import queue
import threading
import time

import streamlit as st

from core.dialogue import Dialogue, Reply
from core.methods import Method, Progress, ReplyStream
from ui import safe

_DONE = object()
TICK = 0.5  # seconds between page updates while a method works unseen (also how soon a Stop is noticed)


def stream_reply(method: Method, dialogue: Dialogue, query: str, max_tokens: int) -> tuple[Reply, bool]:
    """(the reply, whether its text was streamed). Errors of the method are raised here."""
    items: queue.Queue = queue.Queue()
    stream = ReplyStream(sink=lambda piece: items.put(("text", piece)), max_tokens=max_tokens,
                         progress=lambda event: items.put(("progress", event)))
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["reply"] = method.respond_streaming(dialogue, query, stream)
        except Exception as err:  # handed to the script thread and raised there, not hidden
            outcome["error"] = err
        finally:
            items.put(_DONE)

    worker = threading.Thread(target=work, name="reply", daemon=True)
    started = time.perf_counter()
    status = st.status(f"{method.name} is working…", expanded=True)
    trace_box = status.empty()
    text_box = st.empty()
    text = ""
    label = f"{method.name} is working…"
    worker.start()
    try:
        while True:
            try:
                item = items.get(timeout=TICK)
            except queue.Empty:
                status.update(label=f"{safe.literal(label)} ({time.perf_counter() - started:.0f} s)")
                continue
            if item is _DONE:
                break
            kind, value = item
            if kind == "progress":
                label = _draw_progress(status, trace_box, value, started)
            else:
                text += value
                text_box.markdown(safe.literal(text))  # model text as text, never HTML
    finally:
        stream.cancel.set()  # a stopped run (rerun, Stop, closed page) stops the reply's LLM work
    worker.join()
    if "error" in outcome:
        status.update(label="the reply failed", state="error")
        raise outcome["error"]
    status.update(label=f"{method.name}: done in {time.perf_counter() - started:.1f} s", state="complete",
                  expanded=False)
    return outcome["reply"], bool(text)


def _draw_progress(status, box, event: Progress, started: float) -> str:
    """The event's line in the status label, its trace lines in the box; returns the label."""
    percent = f" {event.fraction:.0%}" if event.fraction is not None else ""
    label = f"{event.stage}{percent}: {event.text}"
    status.update(label=f"{safe.literal(label)} ({time.perf_counter() - started:.0f} s)")
    if event.trace is not None and (view := _partial_view(event.trace.kind)) is not None:
        with box.container():
            view(event.trace)
    elif event.lines:
        box.code("\n".join(event.lines[-40:]), language=None)  # a code block shows text as text
    return label


def _partial_view(kind: str):
    """The page's drawing of a method's partial trace, where the method has one."""
    from ui import mcts

    return {"mcts": getattr(mcts, "render_partial", None)}.get(kind)


def queue_note(llm, slots: int) -> str:
    """A line for the page when the shared model is busy with other users' requests."""
    pending = getattr(llm, "pending", lambda: 0)()
    if pending >= slots:
        return f"The model is serving {pending} request(s); yours starts when one of its {slots} slots is free."
    return ""
