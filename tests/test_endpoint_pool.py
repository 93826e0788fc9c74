"""Several servers of one model addressed by the app (core/llm/endpoint_pool.py): the fair queue
places each request on the server where its first words are expected soonest (hand-made
timelines, an injected clock), the backend sends it there and skips a server that refuses, and
the queue in front of a pool of two local stub servers puts a short reply beside nothing long."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from core.config import LLMSettings
from core.llm import LLMError, make_llm
from core.llm.endpoint_pool import ServerPool, prefer_server, preferred_server, split_urls
from core.llm.fair_queue import HOLD_S, FairScheduler, QueueSettings, caller
from core.llm.queued import queued
from ops.llm_stub import LLMStub


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pool_queue(clock=None, up=None) -> FairScheduler:
    q = FairScheduler(QueueSettings(capacity=4, per_owner=1, servers=2), clock=clock or Clock(), server_up=up)
    q.rates.prefill_tps, q.rates.decode_tps, q.rates.completion_tokens = 100.0, 10.0, 20.0
    return q


def test_a_short_reply_starts_away_from_a_long_prefill():
    q = pool_queue()
    heavy = q.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True)
    light = q.submit("a", prompt_tokens=100, max_tokens=200, streaming=True)
    assert (heavy.server, light.server) == (0, 1)
    second = q.submit("b", prompt_tokens=100, max_tokens=200)
    assert not second.granted  # it waits for the first light's prompt, rather than be computed with it
    q.first_piece(light)  # a second or less later
    assert second.granted and second.server == 1  # beside the first light's writing, not the long prefill


def test_two_short_prompts_are_computed_one_after_the_other():
    """Two replies at once on a server computing one prompt at a time: started together, both have
    their first piece when the second alone would; one after the other, the first has it sooner."""
    q = pool_queue()
    a = q.submit("a", prompt_tokens=100, max_tokens=200, streaming=True)
    b = q.submit("b", prompt_tokens=100, max_tokens=200, streaming=True)
    assert (a.server, b.server) == (0, 1)  # two servers: each computes one
    c = q.submit("c", prompt_tokens=100, max_tokens=200, streaming=True)
    assert not c.granted and q.place(c).ahead == 0  # both compute a prompt: told its place while it waits
    q.first_piece(b)
    assert c.granted and c.server == 1
    d = q.submit("d", prompt_tokens=100, max_tokens=200, streaming=True)
    assert not d.granted  # server 1 is full; server 0 still computes a's prompt
    q.first_piece(a)
    assert d.granted and d.server == 0


def test_a_request_not_streamed_is_not_waited_for():
    """Nothing says when a request that is not streamed has its prompt computed: a request beside it
    starts at once, as before."""
    q = pool_queue()
    assert q.submit("a", prompt_tokens=100).server == 0 and q.submit("b", prompt_tokens=100).server == 1
    assert q.submit("c", prompt_tokens=100).granted


def test_a_short_reply_waits_for_a_slot_rather_than_start_beside_a_long_prefill():
    clock = Clock()
    q = pool_queue(clock)
    heavy = q.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True)
    a, b = q.submit("a", prompt_tokens=100), q.submit("b", prompt_tokens=100)
    c = q.submit("c", prompt_tokens=100)
    assert not c.granted and q.place(c).ahead == 0  # server 0 has a free slot, but a long prompt computing on it
    clock.now = 60.0  # however long it takes: the first piece says when it is done, not an estimate
    assert not q.submit("d", prompt_tokens=100).granted
    q.release(a)
    assert c.granted and c.server == 1
    q.first_piece(heavy)  # it only writes now: a short reply beside it waits for nothing
    assert q._state.in_flight[-1].owner == "d" and q._state.in_flight[-1].server == 0
    assert b.server == 1


def test_beside_a_long_prefill_when_every_server_computes_one():
    q = pool_queue()
    q.submit("h1", prompt_tokens=3000, max_tokens=200, streaming=True)
    q.submit("h2", prompt_tokens=3000, max_tokens=200, streaming=True)
    light = q.submit("a", prompt_tokens=100)
    assert light.granted  # no server without one to wait for


def test_a_long_prompt_goes_where_there_is_least_to_compute():
    q = pool_queue()
    q.submit("a", prompt_tokens=500)
    heavy = q.submit("heavy", prompt_tokens=3000)
    assert heavy.server == 1


def test_a_server_found_down_is_not_chosen_while_another_is_up():
    down = {0}
    q = pool_queue(up=lambda k: k not in down)
    first, second = q.submit("a"), q.submit("b")
    assert (first.server, second.server) == (1, 1)
    down.add(1)  # both down: a request still goes somewhere rather than wait for ever
    assert q.submit("c").granted


def test_one_server_keeps_the_old_rules():
    q = FairScheduler(QueueSettings(capacity=2, per_owner=2))
    assert [q.submit("a", prompt_tokens=5000).server, q.submit("b").server] == [0, 0]
    assert not q.submit("c").granted


def test_the_pool_order_prefers_the_queues_choice_then_the_least_busy():
    clock = Clock()
    pool = ServerPool(("u0", "u1", "u2"), clock=clock)
    with pool.serving(0):
        assert pool.order() == [1, 2, 0]
        assert pool.order(preferred=0) == [0, 1, 2]
    pool.mark_down(1, 10)
    assert pool.order(preferred=1) == [0, 2, 1]  # a down server is tried last, never dropped
    clock.now = 11
    assert pool.is_up(1)
    assert split_urls(" http://a/v1, http://b/v1 ,") == ("http://a/v1", "http://b/v1")
    assert split_urls("") == ("",)
    with prefer_server(2):
        assert preferred_server() == 2
    assert preferred_server() is None


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the block ends


def pool_settings(*urls: str) -> LLMSettings:
    return LLMSettings(backend="openai", model="stub", base_url=",".join(urls), timeout_s=5, max_retries=0)


def test_the_backend_sends_to_the_chosen_server_and_skips_one_that_refuses():
    with LLMStub() as one, LLMStub() as two:
        dead = f"http://127.0.0.1:{closed_port()}/v1"
        llm = make_llm(pool_settings(dead, one.url, two.url))
        with prefer_server(2):
            assert llm.chat("to two").text == "You said: to two"
            assert "".join(llm.stream("streamed to two")) == "You said: streamed to two"
        assert [r["messages"][-1]["content"] for r in two.requests] == ["to two", "streamed to two"]
        with prefer_server(0):  # refused: the next server answers, and the dead one is tried last from now on
            assert llm.chat("to the dead one").text == "You said: to the dead one"
            assert "".join(llm.stream("streamed to the dead one")) == "You said: streamed to the dead one"
        assert len(one.requests) + len(two.requests) == 4
        pool = llm._servers
        assert not pool.is_up(0) and pool.order()[-1] == 0
        one.mode = "502"  # a proxy in front of a dead server
        with prefer_server(1):
            assert llm.chat("past the proxy").text == "You said: past the proxy"
        assert two.requests[-1]["messages"][-1]["content"] == "past the proxy" and not pool.is_up(1)
        two.mode = "500"  # a server error is the reply's, not a reason to send it again
        with pytest.raises(LLMError, match="server error"):
            llm.chat("fails")


def test_every_server_refusing_is_a_clear_error():
    llm = make_llm(pool_settings(f"http://127.0.0.1:{closed_port()}/v1", f"http://127.0.0.1:{closed_port()}/v1"))
    with pytest.raises(LLMError, match="cannot reach http://127.0.0.1"):
        llm.chat("hello")


def test_the_queue_puts_a_short_reply_on_the_server_without_the_long_prompt():
    with LLMStub() as one, LLMStub() as two:
        one.hang_if = lambda body: len(body["messages"][-1]["content"]) > 3000
        llm = queued(make_llm(pool_settings(one.url, two.url)), pool_settings(one.url, two.url), env={})
        assert (llm.scheduler.settings.capacity, llm.scheduler.settings.servers) == (4, 2)

        def send_long() -> None:
            with caller("heavy"):
                llm.chat("x" * 4000)

        long_one = threading.Thread(target=send_long)
        long_one.start()
        assert one.hanging.wait(5)  # the long prompt holds server 0
        with caller("light"):
            assert llm.chat("hi").text == "You said: hi"
            assert "".join(llm.stream("and again")) == "You said: and again"
        assert [r["messages"][-1]["content"] for r in two.requests] == ["hi", "and again"]
        one.release()
        long_one.join(5)


def test_a_long_prompt_goes_where_it_slows_fewest_replies():
    q = pool_queue()
    q.release(q.submit("heavy", prompt_tokens=1000))  # the heavy owner's conversation is on server 0
    light = q.submit("a", prompt_tokens=100, max_tokens=200)
    assert light.server == 0
    # on server 0 its 2,000 new tokens (20 s) would slow the light reply by as much; on server 1 it
    # slows nothing and costs its history computed again (counted whole: 30 s)
    assert q.submit("heavy", prompt_tokens=3000, max_tokens=200).server == 1
    assert q.submit("b", prompt_tokens=100, max_tokens=200).server == 0


def test_a_next_paste_stays_with_its_conversation():
    """A heavy owner's next message adds a little to a long conversation that its server holds:
    computed there it costs 2 s (and delays the light reply there by as much), elsewhere 30 s.
    Moving it would also leave the light users' server computing it."""
    q = pool_queue()
    q.release(q.submit("heavy", prompt_tokens=2800))
    assert q.submit("a", prompt_tokens=100, max_tokens=200).server == 0
    assert q.submit("heavy", prompt_tokens=3000, max_tokens=200).server == 0


def test_a_paste_waits_for_the_short_reply_being_written_on_its_server():
    """A server computing a pasted note gives a reply beside it one token per step of that
    prefill: the load test saw a 47-token reply take 8.3 s beside one, where it would take 1-2 s
    alone. So the heavy owner's next paste waits until that reply is done, and a light request
    behind it in turn starts on the other server rather than on the one kept for the paste."""
    q = pool_queue()
    q.release(q.submit("heavy", prompt_tokens=2800))  # the heavy owner's conversation is on server 0
    q.release(q.submit("b", prompt_tokens=100))  # b was served after the heavy owner: behind it in turn
    a = q.submit("a", prompt_tokens=100, max_tokens=200, streaming=True)
    assert a.server == 0
    heavy = q.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True)
    assert not heavy.granted  # a's prompt is still computed (the rule before this one)
    q.first_piece(a)
    assert not heavy.granted  # a is being written: the paste waits for it to end
    c = q.submit("c", prompt_tokens=100, max_tokens=200, streaming=True)
    q.first_piece(c)
    assert c.server == 1
    b2 = q.submit("b", prompt_tokens=100, max_tokens=200, streaming=True)
    assert b2.granted and b2.server == 1  # server 0 had the cheaper slot (b's cache), but it is kept for the paste
    q.release(a)
    assert heavy.granted and heavy.server == 0


def test_a_paste_waits_for_replies_for_a_bounded_time_only():
    clock = Clock()
    q = pool_queue(clock)
    q.release(q.submit("heavy", prompt_tokens=2800))
    a = q.submit("a", prompt_tokens=100, max_tokens=200, streaming=True)
    q.first_piece(a)
    heavy = q.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True)
    assert not heavy.granted
    clock.now = HOLD_S - 0.1
    q.release(q.submit("x", prompt_tokens=100))  # any event looks again
    assert not heavy.granted
    clock.now = HOLD_S
    q.release(q.submit("y", prompt_tokens=100))
    assert heavy.granted and heavy.server == 0  # a reply may run to its token limit: the paste goes on


def test_a_paste_waits_for_no_reply_of_its_own_owner_nor_on_one_server():
    q = FairScheduler(QueueSettings(capacity=4, per_owner=2, servers=2), clock=Clock())
    q.rates.prefill_tps, q.rates.decode_tps, q.rates.completion_tokens = 100.0, 10.0, 20.0
    x, y = q.submit("x", prompt_tokens=100), q.submit("y", prompt_tokens=100)
    assert (x.server, y.server) == (0, 1)
    q.release(x)
    mine = q.submit("heavy", prompt_tokens=100, max_tokens=200, streaming=True)
    q.first_piece(mine)
    assert mine.server == 0
    paste = q.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True)
    assert paste.granted and paste.server == 0  # beside its own reply: the owner slows only itself
    one = FairScheduler(QueueSettings(capacity=2, per_owner=1))  # the embedded model: rules of one server
    a = one.submit("a", prompt_tokens=100, max_tokens=200, streaming=True)
    one.first_piece(a)
    assert one.submit("heavy", prompt_tokens=3000, max_tokens=200, streaming=True).granted


def test_the_trace_keeps_one_line_per_request(tmp_path):
    clock = Clock()
    trace = tmp_path / "trace.jsonl"
    q = FairScheduler(QueueSettings(capacity=1, trace=str(trace)), clock=clock)
    first, second = q.submit("a", prompt_tokens=10, max_tokens=5, streaming=True), q.submit("b", prompt_tokens=20)
    clock.now = 0.5
    q.first_piece(first)
    clock.now = 2.0
    q.release(first, 10, 5, 0.5, 2.0)
    clock.now = 3.0
    q.release(second)  # ended without being measured (failed, stopped)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(r["owner"], r["queued_s"], r["first_s"], r["total_s"], r["served"]) for r in lines] == [
        ("a", 0.0, 0.5, 2.0, True), ("b", 2.0, None, None, False)]


def test_with_the_queue_off_a_pool_sends_to_the_least_busy_server():
    with LLMStub() as one, LLMStub() as two:
        one.hang_if = lambda body: len(body["messages"][-1]["content"]) > 3000
        settings = pool_settings(one.url, two.url)
        llm = queued(make_llm(settings), settings, env={"WORKBENCH_LLM_QUEUE": "off"})
        assert not llm.scheduler.settings.enabled
        long_one = threading.Thread(target=lambda: llm.chat("x" * 4000))
        long_one.start()
        assert one.hanging.wait(5)
        assert llm.chat("hi").text == "You said: hi"  # the queue placed nothing: the pool's least busy server
        assert [r["messages"][-1]["content"] for r in two.requests] == ["hi"]
        one.release()
        long_one.join(5)
