"""The conversation service (core/conversation.py) on SQLite with the scripted LLM: a round stores
both turns or neither, judges once, saves the method's memory in the versioned artifact (old
artifacts still read), and keeps a message whose reply was interrupted."""

from __future__ import annotations

import threading

import pytest

from core.conversation import (ARTIFACT_VERSION, ConversationService, MemorySaved, MethodProgress, ReplyStored,
                               ReplyText, Working, load_memory, memory_key, pack_memory, unpack_memory)
from core.dialogue import ASSISTANT, USER, Dialogue, Reply, Turn
from core.llm import LLMError
from core.llm.base import Message
from core.llm.fake import ScriptedLLM
from core.methods import Method, Toolkit, create_method
from core.store import Store

ME = "anon:tester"


class CountingMethod(Method):
    """A method whose memory is worth saving: the user turns it observed (a real Method, tiny)."""

    name = "counting"
    label = "counting"

    def __init__(self, tools, config=None) -> None:
        super().__init__(tools, config)
        self.seen: list[str] = []

    def observe(self, turn: Turn) -> None:
        super().observe(turn)
        if turn.role == USER:
            self.seen.append(turn.text)

    def save_state(self) -> bytes:
        return "\n".join(self.seen).encode()

    def load_state(self, data: bytes, observed: int) -> None:
        self.seen = data.decode().split("\n") if data else []
        self.observed = observed

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        text = self._write([Message("user", f"{len(self.seen)} earlier: {query}")], 0.0, 32)
        return Reply(text=text, method=self.name, model=self.tools.llm.name)


@pytest.fixture()
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite3")


def service(store, llm=None, judge=None, instances=None, name="base") -> ConversationService:
    llm = llm or ScriptedLLM(["Nice to meet you, Ana."])

    def make(method_name: str) -> Method:
        return CountingMethod(Toolkit(llm=llm)) if method_name == "counting" else create_method(method_name, Toolkit(llm=llm))

    return ConversationService(store, ME, make, instances=instances, judge=judge, today=lambda: "2026-11-26")


def run(svc, cid, message, method="base"):
    with svc.start(cid, method, message) as round_:
        events = list(round_.events(max_tokens=64, tick_s=0.05))
    return round_, events


def test_a_round_streams_stores_both_turns_dated_and_judges_once(store):
    calls = []

    def judge(before, text):
        calls.append((tuple(t.text for t in before), text))
        return {"nli": {"label": "neutral"}}

    round_, events = run(service(store, judge=judge), None, "  Hi, I am Ana.  ")
    kinds = [type(e) for e in events]
    assert ReplyText in kinds and kinds[-2:] == [ReplyStored, MemorySaved]
    assert all(k in (MethodProgress, ReplyText, Working) for k in kinds[:-2])
    stored = events[-2]
    assert "".join(e.piece for e in events if isinstance(e, ReplyText)).strip() == stored.reply.text.strip()
    turns = store.turns(round_.conversation_id, owner=ME)
    assert [(t.turn.role, t.turn.text, t.turn.date) for t in turns] == [
        (USER, "Hi, I am Ana.", "2026-11-26"), (ASSISTANT, "Nice to meet you, Ana.", "2026-11-26")]
    assert (stored.user_index, stored.reply_index) == (0, 1) and not turns[1].reply.stopped
    assert calls == [(("Hi, I am Ana.",), "Nice to meet you, Ana.")]  # once, against the turns before the reply
    assert turns[1].checks == {"nli": {"label": "neutral"}} and not turns[0].checks
    [info] = store.list_conversations(owner=ME)
    assert info.title == "Hi, I am Ana." and info.method == "base"


def test_a_failing_backend_keeps_neither_turn_and_no_created_conversation(store):
    class Failing(ScriptedLLM):
        def _complete(self, *args):
            raise LLMError("the endpoint is down")

        def stream(self, *args, **kwargs):
            raise LLMError("the endpoint is down")

    with pytest.raises(LLMError):
        run(service(store, llm=Failing()), None, "Hello")
    assert store.list_conversations(owner=ME) == []
    cid = store.create_conversation("kept", owner=ME)
    with pytest.raises(LLMError):
        run(service(store, llm=Failing()), cid, "Hello")
    assert store.turns(cid, owner=ME) == [] and [c.id for c in store.list_conversations(owner=ME)] == [cid]


def test_both_turns_go_in_one_write(store, monkeypatch):
    writes = []
    real = store.add_turns
    monkeypatch.setattr(store, "add_turns", lambda cid, turns, owner: writes.append([t.role for t, _ in turns]) or real(cid, turns, owner=owner))
    run(service(store), None, "Hello")
    assert writes == [[USER, ASSISTANT]]


class _Stop(Exception):
    """What Streamlit raises in the script thread when a new message or Stop reruns the page."""


def test_an_interrupted_round_keeps_the_message_and_the_partial_reply_marked_stopped(store):
    release = threading.Event()

    def slow(messages):
        release.wait(5)
        return "A very long story about mangoes."

    svc = service(store, llm=ScriptedLLM(slow))
    with pytest.raises(_Stop):
        with svc.start(None, "base", "My favourite fruit is mango. Tell me a long story.") as round_:
            for event in round_.events(tick_s=0.05):
                if isinstance(event, Working):
                    release.set()  # the worker finishes (or is cancelled) as the run stops
                    raise _Stop()
    cid = round_.conversation_id
    turns = store.turns(cid, owner=ME)
    assert [t.turn.text for t in turns][:1] == ["My favourite fruit is mango. Tell me a long story."]
    assert turns[1].turn.role == ASSISTANT and turns[1].reply.stopped and turns[1].reply.text == turns[1].turn.text
    assert round_.pending.kept and not turns[1].checks  # a stopped reply is not judged
    # the next message lands after it, and the method catches up with the kept round
    again, events = run(service(store, llm=ScriptedLLM(["Mango."])), cid, "What is my favourite fruit?")
    assert [t.turn.text for t in store.turns(cid, owner=ME)][2:] == ["What is my favourite fruit?", "Mango."]
    assert svc.keep(round_.pending) == []  # kept once


def test_a_round_stopped_before_the_method_starts_keeps_the_message(store):
    svc = service(store)
    with pytest.raises(_Stop):
        with svc.start(None, "base", "First message") as round_:
            raise _Stop()
    [info] = store.list_conversations(owner=ME)
    assert info.turns == 2 and store.turns(info.id, owner=ME)[1].reply.stopped


def test_the_memory_artifact_round_trips_and_the_old_format_still_reads(store):
    instances: dict = {}
    svc = service(store, instances=instances)
    round_, _ = run(svc, None, "I live in Lisbon.", method="counting")
    cid = round_.conversation_id
    saved = load_memory(store, cid, "counting", owner=ME)
    assert (saved.observed, saved.state, saved.version) == (2, b"I live in Lisbon.", ARTIFACT_VERSION)
    assert store.get_artifact(cid, memory_key("counting"), owner=ME).startswith(b"WBMEMORY")
    assert list(instances) == [ConversationService.instance_key(cid, "counting")]
    # A new session (no cached instance) restores the memory from the artifact, then catches up.
    fresh = service(store, instances={})
    assert fresh.method(cid, "counting").seen == ["I live in Lisbon."]
    # An artifact from before the version: 8-byte count, then the state.
    store.put_artifact(cid, memory_key("counting"), (2).to_bytes(8, "little") + b"I live in Porto.", owner=ME)
    old = load_memory(store, cid, "counting", owner=ME)
    assert (old.observed, old.state, old.version) == (2, b"I live in Porto.", 0)
    restored = service(store, instances={}).method(cid, "counting")
    assert restored.seen == ["I live in Porto."] and restored.observed == 2
    assert unpack_memory(pack_memory(7, b"")).observed == 7
    with pytest.raises(ValueError, match="newer"):
        unpack_memory(b"WBMEMORY" + bytes([ARTIFACT_VERSION + 1]) + (1).to_bytes(8, "little"))


def test_each_method_keeps_its_own_memory_in_one_conversation(store):
    """The seam a comparison needs: several methods answer in one conversation, each with its own memory."""
    instances: dict = {}
    svc = service(store, instances=instances)
    round_, _ = run(svc, None, "I have two cats.", method="counting")
    cid = round_.conversation_id
    run(svc, cid, "And a dog.", method="base")
    assert store.get_artifact(cid, memory_key("base"), owner=ME) is None  # base keeps nothing worth saving
    run(svc, cid, "How many pets?", method="counting")
    counting = instances[ConversationService.instance_key(cid, "counting")]
    assert counting.seen == ["I have two cats.", "And a dog.", "How many pets?"]  # synced with base's round too
    assert store.conversation(cid, owner=ME).method == "counting"


def test_a_stale_instance_is_rebuilt_from_the_saved_memory(store):
    instances: dict = {}
    round_, _ = run(service(store, instances=instances), None, "One.", method="counting")
    cid = round_.conversation_id
    old = instances[ConversationService.instance_key(cid, "counting")]
    svc = ConversationService(store, ME, lambda n: CountingMethod(Toolkit(llm=ScriptedLLM(["x"]))), instances=instances,
                              is_current=lambda m: m is not old)
    rebuilt = svc.method(cid, "counting")
    assert rebuilt is not old and rebuilt.seen == ["One."]


def test_a_recorded_exchange_is_stored_and_taken_into_memory_without_answering(store):
    from core.chat import ChatSession

    llm = ScriptedLLM(["Noted."])
    session = ChatSession("base", Toolkit(llm=llm), store=store, today=lambda: "2026-11-26")
    session.replay("I live in Lisbon.", "Lovely.")
    record = session.send("Where do I live?")
    assert len(llm.requests) == 1 and "Lisbon" in str(llm.requests[0])  # the replayed round is in the prompt
    turns = store.turns(session.conversation_id, owner=ChatSession.OWNER)
    assert [t.turn.text for t in turns] == ["I live in Lisbon.", "Lovely.", "Where do I live?", "Noted."]
    assert {t.turn.date for t in turns} == {"2026-11-26"} and record["turn"] == 1
