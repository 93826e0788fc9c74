"""The fair queue in front of the shared model (core/llm/fair_queue.py, core/llm/queued.py): the order
of service on hand-made timelines (submit and release step by step, an injected clock: no sleeps),
priority, the per-owner limit, the bound, Stop while waiting, the wait estimate computed by hand,
and a round of the conversation service told its place while another owner holds the model."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.conversation import ConversationService, Queued, ReplyStored, ReplyText
from core.llm import LLMError
from core.llm.cancel import Cancelled, cancellable
from core.llm.fair_queue import (BACKGROUND, INTERACTIVE, FairScheduler, QueueFull, QueuePlace, QueueSettings, Rates,
                                 caller, current_caller)
from core.llm.fake import ScriptedLLM
from core.llm.queued import QueuedLLM, queue_settings
from core.methods import Toolkit, create_method
from core.store import Store
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def started(tickets) -> list[str]:
    return [name for name, t in tickets.items() if t.granted]


def test_one_owners_backlog_does_not_pass_another_owners_message():
    q = FairScheduler(QueueSettings(capacity=1))
    t = {"a1": q.submit("A"), "a2": q.submit("A"), "a3": q.submit("A"), "b1": q.submit("B")}
    assert started(t) == ["a1"]
    order = []
    for _ in range(4):
        running = next(name for name, ticket in t.items() if ticket.granted and not ticket.done)
        order.append(running)
        if running == "a2":  # C arrives while A's second request runs: served before A's third
            t["c1"] = q.submit("C")
        q.release(t[running])
    order.append(next(name for name, ticket in t.items() if ticket.granted and not ticket.done))
    assert order == ["a1", "b1", "a2", "c1", "a3"]


def test_the_expected_order_alternates_owners():
    q = FairScheduler(QueueSettings(capacity=1))
    running = q.submit("A")
    waiting = [q.submit("A"), q.submit("A"), q.submit("B"), q.submit("B"), q.submit("C")]
    assert [t.owner for t in q.order()] == ["B", "C", "A", "B", "A"]  # A was served last: it goes after the others
    assert [q.place(t).ahead for t in waiting] == [2, 4, 0, 3, 1]
    assert q.place(running) is None


def test_interactive_replies_go_before_page_started_work():
    q = FairScheduler(QueueSettings(capacity=1))
    first = q.submit("A")
    bench = q.submit("B", BACKGROUND)
    reply = q.submit("C", INTERACTIVE)
    q.release(first)
    assert reply.granted and not bench.granted
    q.release(reply)
    assert bench.granted  # the benchmark still runs once nobody waits for a reply


def test_an_owner_keeps_one_slot_free_for_others():
    q = FairScheduler(QueueSettings(capacity=2))  # per_owner 0: a quarter of the slots, at least one
    a1, a2 = q.submit("A"), q.submit("A")
    assert a1.granted and not a2.granted and q.in_flight() == 1  # the free slot waits for someone else
    assert [QueueSettings(capacity=c).owner_limit for c in (1, 2, 4, 8, 32)] == [1, 1, 1, 2, 8]
    b1 = q.submit("B")
    assert b1.granted and q.in_flight() == 2
    q.release(b1)
    assert not a2.granted  # A still holds its one slot
    q.release(a1)
    assert a2.granted
    wide = FairScheduler(QueueSettings(capacity=2, per_owner=2))
    assert wide.submit("A").granted and wide.submit("A").granted


def test_a_full_queue_refuses_with_a_clear_error():
    q = FairScheduler(QueueSettings(capacity=1, max_waiting=2, max_waiting_per_owner=2))
    q.submit("A")
    q.submit("B")
    q.submit("C")
    with pytest.raises(QueueFull, match="the model is busy: 2 requests are waiting"):
        q.submit("D")
    assert q.waiting() == 2  # the refused request left nothing behind
    per_owner = FairScheduler(QueueSettings(capacity=1, max_waiting_per_owner=1))
    per_owner.submit("A")
    per_owner.submit("A")
    with pytest.raises(QueueFull, match="1 of them yours"):
        per_owner.submit("A")
    assert per_owner.submit("B").owner == "B"  # another owner still gets in
    assert issubclass(QueueFull, LLMError)  # every caller's LLM failure path handles it


def test_stop_while_waiting_takes_the_request_out():
    q = FairScheduler(QueueSettings(capacity=1))
    holder = q.submit("A")
    stop = threading.Event()
    outcome, places = [], []

    def wait() -> None:
        with cancellable(stop), caller("B", on_wait=places.append):
            try:
                q.acquire(poll_s=0.01)
                outcome.append("started")
            except Cancelled:
                outcome.append("cancelled")

    worker = threading.Thread(target=wait)
    worker.start()
    while not places:  # told its place: it is in the queue
        worker.join(0.01)
    assert places[0].ahead == 0 and q.waiting() == 1
    stop.set()
    worker.join(5)
    assert outcome == ["cancelled"] and q.waiting() == 0
    q.release(holder)
    assert q.in_flight() == 0  # nothing was started for the stopped request


def test_a_stopped_stream_gives_its_slot_back():
    llm = QueuedLLM(ScriptedLLM(["one two three four"]), FairScheduler(QueueSettings(capacity=1)))
    pieces = llm.stream("Hi")
    assert next(pieces) == "one "
    assert llm.pending() == 1
    pieces.close()  # the consumer stopped reading (Stop, a closed page)
    assert llm.pending() == 0
    assert llm.chat("Hi").text == "one two three four"  # the next request gets the slot
    assert llm.pending() == 0


def test_a_request_made_while_holding_a_slot_does_not_wait_for_itself():
    q = FairScheduler(QueueSettings(capacity=1))
    outer = q.acquire()
    inner = q.acquire()  # same thread, same owner: granted at once rather than a deadlock
    assert outer.granted and inner.granted
    other = q.submit("B", thread=-1)
    assert not other.granted


def test_switched_off_every_request_goes_straight_through():
    q = FairScheduler(QueueSettings(capacity=1, enabled=False))
    assert all(q.submit("A").granted for _ in range(5))
    assert queue_settings(2, {"WORKBENCH_LLM_QUEUE": "off"}).enabled is False
    assert queue_settings(2, {"WORKBENCH_LLM_QUEUE_SLOTS": "4"}) == QueueSettings(capacity=4)


def test_the_wait_estimate_by_hand():
    clock = Clock()
    q = FairScheduler(QueueSettings(capacity=1), clock=clock)
    q.rates = Rates(prefill_tps=100.0, decode_tps=10.0, completion_tokens=50.0)
    # each request: 100 prompt tokens / 100 tps = 1 s, then min(80, 50) = 50 tokens / 10 tps = 5 s: 6 s
    running = q.submit("A", prompt_tokens=100, max_tokens=80)
    b = q.submit("B", prompt_tokens=100, max_tokens=80)
    c = q.submit("C", prompt_tokens=100, max_tokens=80)
    clock.now = 2.0  # A's request has run 2 of its 6 s
    assert q.place(b) == QueuePlace(ahead=0, waiting=2, wait_s=4.0)
    assert q.place(c) == QueuePlace(ahead=1, waiting=2, wait_s=10.0)
    two = FairScheduler(QueueSettings(capacity=2, per_owner=2), clock=clock)
    two.rates = q.rates
    two.submit("A", prompt_tokens=100, max_tokens=80)  # started at 2 s
    d = two.submit("D", prompt_tokens=100, max_tokens=80)
    assert d.granted  # a free slot: no wait
    e = two.submit("E", prompt_tokens=100, max_tokens=80)
    clock.now = 5.0  # both run 3 of 6 s
    assert two.place(e) == QueuePlace(ahead=0, waiting=1, wait_s=3.0)
    assert running.granted


def test_rates_follow_measured_requests():
    r = Rates(prefill_tps=100.0, decode_tps=10.0, completion_tokens=50.0, alpha=0.5)
    r.observe(prompt_tokens=400, completion_tokens=41, first_s=2.0, total_s=4.0)  # 200 tps prefill; 41 tokens in 2 s
    assert r.prefill_tps == pytest.approx(150.0)  # 100 + 0.5 * (200 - 100)
    assert r.decode_tps == pytest.approx(15.25)  # 10 + 0.5 * (20.5 - 10)
    assert r.completion_tokens == pytest.approx(45.5)
    r.observe(prompt_tokens=300, completion_tokens=0, first_s=None, total_s=1.0)  # scoring: all prefill
    assert r.prefill_tps == pytest.approx(225.0)
    assert r.service_s(450, 20) == pytest.approx(2.0 + 20 / 15.25)


def test_the_caller_reaches_a_thread_only_through_a_copied_context():
    import contextvars

    seen = []
    with caller("anon:ana", BACKGROUND):
        ctx = contextvars.copy_context()
    ctx.run(lambda: seen.append(current_caller()))
    assert (seen[0].owner, seen[0].priority) == ("anon:ana", BACKGROUND)
    assert current_caller().owner == "cli"  # outside any block: the command line's owner


def test_a_batch_waits_one_slot_per_conversation():
    q = FairScheduler(QueueSettings(capacity=2, per_owner=2))
    llm = QueuedLLM(ScriptedLLM(lambda m: m[-1].content.upper()), q)
    assert [c.text for c in llm.chat_batch(["a", "b", "c"])] == ["A", "B", "C"]
    assert q.pending() == 0 and llm.calls == 3
    assert llm.score("x y", ["x", "z"]) == ScriptedLLM().score("x y", ["x", "z"])


def test_a_round_is_told_its_place_while_another_owner_holds_the_model(tmp_path):
    q = FairScheduler(QueueSettings(capacity=1))
    llm = QueuedLLM(ScriptedLLM(["Nice to meet you, Ana."]), q)
    other = q.submit("anon:other")  # someone else's reply holds the only slot
    svc = ConversationService(Store(tmp_path / "db.sqlite3"), "anon:ana",
                              lambda name: create_method(name, Toolkit(llm=llm)), reply_check=None)
    seen = []
    with svc.start(None, "base", "Hi, I'm Ana.") as round_:
        for event in round_.events(max_tokens=32, tick_s=0.05):
            seen.append(event)
            if isinstance(event, Queued) and not event.place.started:
                assert event.place.ahead == 0 and event.place.waiting == 1
                q.release(other)  # the other reply ends: this one starts
            if isinstance(event, ReplyStored):
                break
    kinds = [type(e).__name__ for e in seen if not type(e).__name__ == "Working"]
    first_wait = kinds.index("Queued")
    assert [e.place.started for e in seen if isinstance(e, Queued)] == [False, True]
    assert kinds.index("ReplyText") > first_wait and kinds[-1] == "ReplyStored"
    assert "".join(e.piece for e in seen if isinstance(e, ReplyText)).strip() == "Nice to meet you, Ana."


# -- the Chat page --------------------------------------------------------------------------------------

def test_the_chat_page_says_the_model_is_busy_when_the_queue_is_full(stub, monkeypatch):
    import os

    from core.config import llm_settings_from
    from core.llm import make_llm
    from core.llm.queued import queued
    from tests.page_fixtures import open_page

    monkeypatch.setenv("WORKBENCH_LLM_QUEUE_MAX", "0")  # nothing may wait
    settings = llm_settings_from(os.environ)
    scheduler = queued(make_llm(settings), settings).scheduler  # the endpoint's queue, as the page's client gets it
    held = [scheduler.submit("anon:other"), scheduler.submit("anon:third")]  # two other people hold both slots
    try:
        at = open_page(str(Path(__file__).resolve().parent.parent / "pages" / "1_Chat.py"), "anon:ana")
        at.chat_input[0].set_value("Hello, I am Ana.").run()
        assert not at.exception
        assert any("Not sent: the model is busy" in e.value for e in at.error)
        assert "Hello, I am Ana." in [c.value for c in at.code]  # the message, to copy
        assert at.session_state["conversation_id"] is None  # nothing was kept
    finally:
        for ticket in held:
            scheduler.release(ticket)
    assert scheduler.pending() == 0


# -- the real model ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_two_owners_take_turns_on_the_real_model():
    """SmolLM2-135M under llama.cpp with one slot: owner A's three replies are queued, then B's one;
    B is told it is next and is answered second, before A's backlog; the rates are measured."""
    pytest.importorskip("xllamacpp")
    from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

    inner = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=1, threads=2))
    q = FairScheduler(QueueSettings(capacity=1))
    llm = QueuedLLM(inner, q)
    done, places = [], []

    def ask(owner: str, k: int) -> None:
        with caller(owner, on_wait=places.append if owner == "B" else None):
            text = "".join(llm.stream(f"Count from one to five in words. ({owner} {k})", temperature=0.0, max_tokens=48))
        done.append((owner, k, text))

    def until(condition, who: list[threading.Thread]) -> None:
        for _ in range(2000):  # at most ~20 s
            if condition():
                return
            who[0].join(0.01)
        raise AssertionError("the queue never reached the expected state")

    try:
        a = [threading.Thread(target=ask, args=("A", k)) for k in range(3)]
        for t in a:
            t.start()
        until(lambda: q.in_flight() == 1 and q.waiting() == 2, a)
        b = threading.Thread(target=ask, args=("B", 0))
        b.start()
        for t in [*a, b]:
            t.join(120)
        assert [owner for owner, _, _ in done] == ["A", "B", "A", "A"]
        assert all(text.strip() for _, _, text in done)
        assert places[0].ahead == 0 and places[0].waiting == 3 and places[-1].started
        assert q.rates.decode_tps != Rates().decode_tps and q.pending() == 0  # measured on the served requests
    finally:
        inner.close()


def test_checks_for_an_endpoint_see_the_backend_behind_the_queue():
    from core.llm.queued import backend_of

    inner = ScriptedLLM()
    llm = QueuedLLM(inner, FairScheduler())
    assert backend_of(llm) is inner and backend_of(inner) is inner
    assert llm.name == "scripted" and llm.requests is inner.requests  # the backend's own attributes show through
