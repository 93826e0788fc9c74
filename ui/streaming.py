"""A reply written into the page as it is made (the events of a core.conversation round): first
what the method is doing (the reasoning tree as it grows, a knowledge index being built), then the
answer's text as the LLM generates it.

The method runs in the round's worker thread; this draws its events in the script thread, and
at least every `TICK` seconds updates the status line's clock. Each of those page updates is where
Streamlit stops a script whose run was interrupted (the Stop button, another message, or any
other widget reruns the script, or the page closes): the exception leaves the round's `with`
block, which cancels the reply (its generation stops and it sends no further LLM request, so the
shared model is free for the next reply at once) and keeps the message with the partial reply.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import streamlit as st

from core.conversation import MethodProgress, Queued, ReplyStored, ReplyText, RoundEvent, Working
from core.llm.fair_queue import QueueFull, QueuePlace
from core.methods import Progress
from ui import safe, screens

TICK = 0.5  # seconds between page updates while a method works unseen (also how soon a Stop is noticed)


def draw_reply(events: Iterator[RoundEvent], method_name: str) -> ReplyStored:
    """Draw the round's events up to its stored reply, and return that event (the memory update
    comes after it: the caller drains `events`). Errors of the method are raised here."""
    started = time.perf_counter()
    label = f"{method_name} is working…"
    status = st.status(label, expanded=True)
    trace_box = status.empty()
    queue_box = st.empty()  # where the reply stands while the shared model serves others
    text_box = st.empty()
    text = ""
    try:
        for event in events:
            if isinstance(event, Working):
                status.update(label=f"{safe.literal(label)} ({event.elapsed_s:.0f} s)")
            elif isinstance(event, Queued):
                if event.place.started:
                    queue_box.empty()
                else:
                    queue_box.caption(queue_line(event.place))
            elif isinstance(event, MethodProgress):
                label = _draw_progress(status, trace_box, event.progress, started)
            elif isinstance(event, ReplyText):
                text += event.piece
                text_box.markdown(safe.literal(text))  # model text as text, never HTML
            elif isinstance(event, ReplyStored):
                status.update(label=f"{method_name}: done in {event.seconds:.1f} s", state="complete", expanded=False)
                if not event.streamed:
                    st.markdown(safe.literal(event.reply.text))
                elif event.reply.text != text:  # a method that changed its text after streaming it (the reply check runs as it streams)
                    text_box.markdown(safe.literal(event.reply.text))
                return event
    except Exception:
        status.update(label="the reply failed", state="error")
        raise
    raise RuntimeError("the round ended without a stored reply")


def _draw_progress(status, box, event: Progress, started: float) -> str:
    """The event's line in the status label, its trace lines in the box; returns the label."""
    percent = f" {event.fraction:.0%}" if event.fraction is not None else ""
    label = f"{event.stage}{percent}: {event.text}"
    status.update(label=f"{safe.literal(label)} ({time.perf_counter() - started:.0f} s)")
    if event.trace is not None and (view := screens.trace_view(event.trace.kind).partial) is not None:
        with box.container():
            view(event.trace)
    elif event.lines:
        box.code("\n".join(event.lines[-40:]), language=None)  # a code block shows text as text
    return label


QUEUE_MARK = "⏳ Waiting for the model"  # the load test finds the line by it


def queue_line(place: QueuePlace) -> str:
    """Where a waiting reply stands, for a caption: its place and the estimated wait."""
    where = "next in line" if place.ahead == 0 else f"{ordinal(place.ahead + 1)} in line"
    return f"{QUEUE_MARK}: {where} ({place.waiting} waiting), about {max(1, round(place.wait_s))} s; others are being served."


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def failure_line(err: Exception) -> str:
    """What the page says when a round failed and kept nothing."""
    if isinstance(err, QueueFull):
        return f"Not sent: {safe.literal(str(err))}. Nothing was saved; your message is below to copy."
    return f"The LLM backend failed: {safe.literal(str(err))}. Nothing was saved; your message is below to copy."
