"""One reply round of a stored conversation, the same for every caller: the Chat page, the Memory
graph page (its memory artifact) and `python -m core chat`.

    service = ConversationService(store, owner, make_method, instances=cache, judge=judge)
    with service.start(cid, "dsm", "Hi, I live in Lisbon.") as round_:
        for event in round_.events(max_tokens=256):
            ...  # MethodProgress, Queued, ReplyText, Working, then ReplyStored, then MemorySaved

A round: the method (cached by the caller, per owner, conversation and method) catches up with
the stored turns and streams its reply; both turns are stored in one transaction, dated by
`today()`; the reply goes through the reply check (core.reply_check: echoes of the user's message
out, the user's facts said in the second person; the method's text kept as `Reply.draft`) sentence
by sentence as it streams (core.reply_stream), so the text shown is the text stored; its
consistency is judged once and stored with it; the method observes the two
turns, its maintenance is waited for and its memory saved. A round left before its turns are
stored (Stop, another message sent while it was written, a closed page) keeps the user's message
and the text written so far, marked stopped (`Reply.stopped`); a failure of the LLM backend keeps
nothing (the page shows the message to copy) and removes a conversation the round created.

The memory artifact (key `memory_key(method)`) is read and written through core.memory_artifact
(`load_memory`, `save_memory`): `MAGIC`, a format version byte, the number of turns it covers
(8 bytes, little-endian), then the method's `save_state()`.

Beside the rounds, the service owns a comparison's group of conversations (core/compare_group.py),
the judging of replies stored without a judgement (core/judging.py) and the Memory graph's view
and replay of a conversation's graph memory (core/memory_replay.py).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field, replace

from core import compare_group, judging, memory_replay
from core.dialogue import ASSISTANT, USER, Reply, Turn, chat_day
from core.forget import ForgetReport, TurnMatch, forget_turns, matching_turns, round_begins
from core.judging import NLI_CONTEXT_TURNS, checks_of, judge_consistency, judgement_of  # noqa: F401 (re-exported)
from core.limits import clean_message
from core.llm import LLM, LLMError
from core.llm.fair_queue import QueuePlace, caller
from core.memory_artifact import (ARTIFACT_VERSION, MAGIC, SavedMemory, load_memory, memory_key,  # noqa: F401 (re-exported)
                                  pack_memory, save_memory, unpack_memory)
from core.methods import Method, Progress, ReplyStream
from core.paths import MissingResource
from core.reply_check import ReplyCheckSettings, check_reply, second_try_note
from core.reply_stream import CheckedStream
from core.store import Store, StoredTurn

TITLE_CHARS = 48
JOIN_S = 30.0  # how long a stopped round waits for its reply's worker (cancelled, it ends in moments)

MethodFactory = Callable[[str], Method]  # method name -> a new instance (toolkit and config chosen by the caller)
ReplyJudge = Callable[[list[Turn], str], "dict | None"]  # (turns before the reply, reply text) -> checks to store


# -- the memory artifact (its format: core/memory_artifact.py) ------------------------------------
def save_method_memory(store: Store, cid: str, method: Method, *, owner: str) -> bool:
    """Wait for the method's maintenance, then store its memory if it keeps one worth saving."""
    method.wait()
    state = method.save_state()
    if state is None:
        return False
    save_memory(store, cid, method.name, method.observed, state, owner=owner)
    return True


# -- the reply check -------------------------------------------------------------------------------------
def checked(reply: Reply, message: str, earlier_user: list[str], settings: ReplyCheckSettings,
            earlier_replies: list[str] = ()) -> Reply:
    """The reply after the reply check; the method's own text kept as `draft` when it changed."""
    t0 = time.perf_counter()
    result = check_reply(reply.text, message, earlier_user, settings, earlier_replies)
    timings = {**reply.timings, "reply_check": time.perf_counter() - t0}
    if not result.changed:
        return replace(reply, timings=timings)
    return replace(reply, text=result.text, draft=reply.text, timings=timings)


def as_shown(reply: Reply, stream: CheckedStream, seconds: float) -> Reply:
    """The reply whose text was checked as it streamed: the text shown, the method's kept as `draft`."""
    timings = {**reply.timings, "reply_check": seconds}
    if stream.shown == reply.text:
        return replace(reply, timings=timings)
    return replace(reply, text=stream.shown, draft=reply.text, timings=timings)


# -- events of a round ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MethodProgress:
    """What the method is doing before its text comes (its partial trace in `progress.trace`)."""

    progress: Progress
    elapsed_s: float


@dataclass(frozen=True)
class ReplyText:
    piece: str


@dataclass(frozen=True)
class Working:
    """Nothing new for a while: a caller may update its clock (and notice it was stopped)."""

    elapsed_s: float


@dataclass(frozen=True)
class _WrittenAgain:
    """In a round's queue: the reply's first text said only the message back (the stream's check
    held all of it: nothing was shown), and the model writes it once more
    (`core.reply_check.needs_second_try`). Not an event of the round's caller."""


@dataclass(frozen=True)
class Queued:
    """The reply's next model request waits its turn (core.llm.fair_queue): where it stands, and
    (`place.started`) when it has its slot."""

    place: QueuePlace
    elapsed_s: float


@dataclass(frozen=True)
class ReplyStored:
    conversation_id: str
    reply: Reply
    user_index: int  # the stored turns' indices
    reply_index: int
    checks: dict | None  # the judgement stored with the reply, if any
    streamed: bool  # whether its text came as ReplyText pieces
    seconds: float  # from the method's start (instance ready, turns read) to the finished reply


@dataclass(frozen=True)
class MemorySaved:
    conversation_id: str
    method_name: str
    observed: int
    saved: bool  # False: the method keeps no memory worth saving (it is rebuilt from the turns)


RoundEvent = MethodProgress | ReplyText | Working | Queued | ReplyStored | MemorySaved


@dataclass
class PendingRound:
    """A sent message whose round is not finished: what to keep if it never is. A caller may hold
    it across runs (the page's session) and hand it to `ConversationService.keep` on the next."""

    conversation_id: str
    method_name: str
    message: str
    partial: str = ""  # the reply's text so far
    model: str = ""
    kept: bool = False  # its turns are stored (finished, or kept as stopped)
    stopped: bool = False  # kept unfinished: the reply is marked stopped


# -- the service ----------------------------------------------------------------------------------------
class ConversationService:
    """An owner's conversations in `store`. `make_method(name)` builds a method instance; instances
    are kept in `instances` (the caller's per-session mapping) under `instance_key(cid, name)`,
    and rebuilt from the saved memory when `is_current(instance)` is False (new backend settings)."""

    def __init__(self, store: Store, owner: str, make_method: MethodFactory, *,
                 instances: MutableMapping | None = None, judge: ReplyJudge | None = None,
                 today: Callable[[], str] = chat_day, is_current: Callable[[Method], bool] = lambda method: True,
                 reply_check: ReplyCheckSettings | None = ReplyCheckSettings()) -> None:
        self.store, self.owner = store, owner
        self.reply_check = reply_check  # None: replies are stored as the method wrote them
        self.make_method = make_method
        self.instances = instances if instances is not None else {}
        self.judge = judge
        self.today = today
        self.is_current = is_current

    @staticmethod
    def instance_key(cid: str, method_name: str) -> str:
        return f"method:{cid}:{method_name}"

    def method(self, cid: str, method_name: str) -> Method:
        """The cached instance for this conversation and method, restored from its saved memory
        when it is new (the turns after that are observed by the next round's sync). An instance
        built before the conversation's latest forget (in any process: its epoch) is built again."""
        key = self.instance_key(cid, method_name)
        method = self.instances.get(key)
        epoch = self.store.forget_epoch(cid, owner=self.owner)
        if method is None or not self.is_current(method) or method.forget_epoch != epoch:
            method = self.make_method(method_name)
            saved = load_memory(self.store, cid, method_name, owner=self.owner)
            if saved is not None:
                method.load_state(saved.state, saved.observed)
            method.forget_epoch = epoch
            self.instances[key] = method
        return method

    def forget(self, cid: str, user_indices: list[int], phrase: str = "") -> ForgetReport:
        """Forget the owner's user turns `user_indices` of `cid` and what came from them (core/forget.py)."""
        return forget_turns(self, cid, user_indices, phrase)

    def matching_turns(self, cid: str, phrase: str) -> list[TurnMatch]:
        """The owner's user turns of `cid` holding `phrase`, to list before forgetting them."""
        return matching_turns(self.store, cid, phrase, owner=self.owner)

    # -- a comparison: one conversation per method (core/compare_group.py) --
    def start_comparison(self, methods: list[str], message: str) -> dict[str, str]:
        """A new comparison of `methods` for its first `message`: method -> its new conversation."""
        return compare_group.start_comparison(self, methods, message)

    def comparison_rounds(self, group: dict[str, str], order: list[str], message: str) -> dict[str, "ReplyRound"]:
        """One round per method of the comparison `group` for `message`, in `order` (not entered yet)."""
        return compare_group.comparison_rounds(self, group, order, message)

    def comparison_rows(self, group: dict[str, str]) -> tuple[list[compare_group.Row], bool]:
        """The comparison's latest turns, and whether its conversations went apart."""
        return compare_group.comparison_rows(self.store, group, self.owner)

    def discard_comparison(self, group: dict[str, str]) -> bool:
        """Remove a comparison's conversations when nothing compared was stored: True when removed."""
        return compare_group.discard_comparison(self, group)

    # -- judging replies stored without a judgement (core/judging.py) --
    def judge_replies(self, cid: str, stored: list[StoredTurn], scorer_of: Callable[[], object], memo: MutableMapping,
                      *, show_from: int = 0, judge_from: int = 0) -> dict:
        """Turn index -> judgement of the replies from `show_from` on, those from `judge_from` on
        judged now when they have none, and stored (MissingResource from `scorer_of`: no NLI model)."""
        return judging.judge_replies(self.store, cid, stored, scorer_of, memo, owner=self.owner,
                                     show_from=show_from, judge_from=judge_from)

    # -- the Memory graph's view and replay (core/memory_replay.py) --
    def graph_memory(self, cid: str) -> memory_replay.GraphMemory | None:
        """The conversation's graph memory to draw (the live instance's, else the stored one), if any."""
        return memory_replay.graph_memory(self, cid)

    def rebuild_graph_memory(self, cid: str, llm: LLM | None, *, strong: bool) -> None:
        """Build and store a graph memory from the conversation's turns, round by round."""
        memory_replay.rebuild_graph_memory(self, cid, llm, strong=strong)

    def start(self, cid: str | None, method_name: str, message: str, *, title: str | None = None) -> "ReplyRound":
        """A round for `message` (checked and trimmed; InvalidMessage when empty or too long) in
        conversation `cid`, created first when None. Use it as a context manager and iterate
        `events()`; the conversation id is known at once (`round.conversation_id`)."""
        message = clean_message(message)
        created = cid is None
        if created:
            cid = self.store.create_conversation(title=title or message[:TITLE_CHARS], method=method_name, owner=self.owner)
        return ReplyRound(self, PendingRound(cid, method_name, message), created)

    def keep(self, pending: PendingRound) -> list[int]:
        """Store an unfinished round: the user's message and the partial reply, marked stopped (no
        judgement: the reply is not what the method would say). Nothing when already kept."""
        if pending.kept:
            return []
        day = self.today()
        dialogue = self.store.dialogue(pending.conversation_id, owner=self.owner)
        session = dialogue.next_session
        reply = Reply(text=pending.partial, method=pending.method_name, model=pending.model, stopped=True)
        stored = self.store.add_turns(pending.conversation_id, [(Turn(USER, pending.message, session=session, date=day), None),
                                                                 (Turn(ASSISTANT, pending.partial, session=session, date=day), reply)],
                                      owner=self.owner)
        pending.kept = pending.stopped = True
        self._remember_method(pending.conversation_id, pending.method_name)
        return stored

    def add_exchange(self, cid: str, method_name: str, message: str, reply: Reply) -> list[int]:
        """Store a message and a reply made elsewhere (a recorded transcript) as a round of
        `method_name`, dated as any round, and take it into the method's memory: no answer, no
        judgement."""
        method = self.method(cid, method_name)
        dialogue = self.store.dialogue(cid, owner=self.owner)
        method.sync(dialogue)
        day, session = self.today(), dialogue.next_session
        turns = (dialogue.add(Turn(USER, clean_message(message), session=session, date=day)),
                 dialogue.add(Turn(ASSISTANT, reply.text, session=session, date=day)))
        stored = self.store.add_turns(cid, [(turns[0], None), (turns[1], reply)], owner=self.owner)
        self._remember_method(cid, method_name)
        with caller(self.owner):  # its model requests take their turn as the owner's
            for turn in turns:
                method.observe(turn)
            save_method_memory(self.store, cid, method, owner=self.owner)
        return stored

    def _remember_method(self, cid: str, method_name: str) -> None:
        """Record the method a conversation was last continued with, so reopening it picks that one."""
        if self.store.conversation(cid, owner=self.owner).method != method_name:
            self.store.update_conversation(cid, owner=self.owner, method=method_name)


@dataclass
class _Outcome:
    reply: Reply | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class ReplyRound:
    """One message and its reply. Leaving the `with` block before `ReplyStored` (an exception in
    the caller, e.g. Streamlit stopping the run) cancels the reply and keeps the message with the
    partial reply marked stopped; an LLM failure (LLMError, MissingResource) keeps nothing."""

    def __init__(self, service: ConversationService, pending: PendingRound, created: bool) -> None:
        self.service = service
        self.pending = pending
        self.created = created  # the round made the conversation (removed again if the backend fails)
        self.cancel = threading.Event()
        self._items: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self._check: CheckedStream | None = None  # the reply check on the streamed text, once events() runs
        self._check_s = 0.0  # seconds spent in it
        self._fresh_check: Callable[[], CheckedStream | None] = lambda: None  # a new check, for a reply written again
        self._ended: Callable[[], None] = lambda: None  # tells a waiting forget this round is over

    @property
    def conversation_id(self) -> str:
        return self.pending.conversation_id

    @property
    def method_name(self) -> str:
        return self.pending.method_name

    def __enter__(self) -> "ReplyRound":
        return self

    def __exit__(self, kind, err, tb) -> bool:
        self._stop()
        if kind is not None and not self.pending.kept:
            if issubclass(kind, (LLMError, MissingResource)):
                self.discard()
            else:
                self.service.keep(self.pending)
        return False

    def discard(self) -> None:
        """Keep nothing of this round: remove the conversation it created (left empty)."""
        if self.created and not self.pending.kept:
            self.service.store.delete_conversation(self.conversation_id, owner=self.service.owner)

    def _stop(self) -> None:
        """Cancel the reply's work and collect the text it wrote before it stopped."""
        self.cancel.set()
        if self._worker is not None:
            self._worker.join(JOIN_S)
        self._ended()
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, ReplyText):
                self.pending.partial += self._checked(item.piece)
            elif isinstance(item, _WrittenAgain):
                self._check = self._fresh_check()
        if self._check is not None:  # what it held back (an unfinished sentence) is kept, checked, too
            self.pending.partial += self._checked("", final=True)

    def _checked(self, piece: str, final: bool = False) -> str:
        """The text to show for a streamed piece: the piece itself without a reply check; with one,
        the checked sentences it completes (all the rest when `final`)."""
        if self._check is None:
            return piece
        t0 = time.perf_counter()
        shown = self._check.finish() if final else self._check.feed(piece)
        self._check_s += time.perf_counter() - t0
        return shown

    def events(self, max_tokens: int = 0, tick_s: float = 0.5) -> Iterator[RoundEvent]:
        """The round's events; the method's work runs in a worker thread, so a `Working` event
        comes at least every `tick_s` seconds while it is quiet."""
        service, pending = self.service, self.pending
        self._ended = round_begins(str(service.store.db.url), pending.conversation_id)
        epoch = service.store.forget_epoch(pending.conversation_id, owner=service.owner)
        method = service.method(pending.conversation_id, pending.method_name)
        pending.model = getattr(method.tools.llm, "name", "")
        dialogue = service.store.dialogue(pending.conversation_id, owner=service.owner)
        started = time.perf_counter()  # the reply's time, as the headless chat has always counted it
        put = self._items.put
        stream = ReplyStream(sink=lambda piece: put(ReplyText(piece)), cancel=self.cancel, max_tokens=max_tokens,
                             progress=lambda event: put(MethodProgress(event, time.perf_counter() - started)))
        outcome = _Outcome()
        before = dialogue.turns()
        earlier_user = [t.text for t in before if t.role == USER]
        earlier_replies = [t.text for t in before if t.role == ASSISTANT]
        settings = service.reply_check
        first: list[str] = []  # the method's first text, when it was written again
        # which text the worker writes (0, then 1 once written again) and which one the check reads:
        # `enough` stops the text being checked only, never a second one begun meanwhile
        texts = {"written": 0, "checked": 0}
        texts_lock = threading.Lock()

        def again(text: str) -> str | None:  # in the worker: the first text is in the queue before the marker
            """The note for writing `text` once more, when it only says the message back or is not in
            the user's language; else None."""
            note = second_try_note(text, pending.message, earlier_user, settings, earlier_replies)
            if note is None:
                return None
            first.append(text)
            with texts_lock:
                texts["written"] += 1
                stream.enough.clear()  # it may have stopped the first text; the second is written whole
            put(_WrittenAgain())
            return note

        if settings is not None:
            self._fresh_check = lambda: CheckedStream(pending.message, earlier_user, settings, earlier_replies)
            self._check = self._fresh_check()
            stream = replace(stream, again=again)
        on_wait = lambda place: put(Queued(place, time.perf_counter() - started))  # noqa: E731

        def work() -> None:
            try:
                with caller(service.owner, on_wait=on_wait):  # the model's queue serves owners in turn
                    method.sync(dialogue)  # turns stored since the memory was saved (a stopped round's, another tab's)
                    outcome.reply = method.respond_streaming(dialogue, pending.message, stream)
            except BaseException as error:  # handed to the caller's thread and raised there, not hidden
                outcome.error = error
            finally:
                outcome.done.set()
                put(None)

        self._worker = threading.Thread(target=work, name="reply", daemon=True)
        self._worker.start()
        streamed = False
        while True:
            try:
                item = self._items.get(timeout=tick_s)
            except queue.Empty:
                yield Working(time.perf_counter() - started)
                continue
            if item is None:
                break
            if isinstance(item, _WrittenAgain):  # its text was all held back: the check starts over
                self._check = self._fresh_check()
                texts["checked"] += 1
                continue
            if isinstance(item, ReplyText):
                streamed = True
                item = ReplyText(self._checked(item.piece))
                if self._check is not None and (self._check.closed or self._check.written_in_vain):
                    with texts_lock:  # the check decided this text: the model stops writing it
                        if texts["written"] == texts["checked"]:
                            stream.enough.set()
                if not item.piece:
                    continue  # held until its sentence is complete
                pending.partial += item.piece
            yield item
        self._worker.join()
        if outcome.error is not None:
            raise outcome.error
        reply = outcome.reply
        if streamed and self._check is not None and (rest := self._checked("", final=True)):
            pending.partial += rest
            yield ReplyText(rest)
        if self._check is not None and streamed and self._check.raw.strip() == reply.text.strip():
            reply = as_shown(reply, self._check, self._check_s)
        elif self._check is not None:  # not streamed, or the method changed its text after streaming it
            reply = checked(reply, pending.message, earlier_user, settings, earlier_replies)
        if first and first[0] != reply.text:  # the method's own text is its first: the draft beside what was shown
            reply = replace(reply, draft=first[0])
        seconds = time.perf_counter() - started
        stored, turns = self._store(dialogue, reply, streamed, seconds)
        yield stored
        with caller(service.owner):  # no yield inside: the context variable is set and reset in this step
            for turn in turns:  # the reply is on screen first; maintenance runs while it is read
                method.observe(turn)
            saved = False
            if service.store.forget_epoch(pending.conversation_id, owner=service.owner) == epoch:
                saved = save_method_memory(service.store, pending.conversation_id, method, owner=service.owner)
            else:  # another process forgot part of this conversation meanwhile: this memory may hold it
                method.wait()
                service.instances.pop(service.instance_key(pending.conversation_id, pending.method_name), None)
        self._ended()
        yield MemorySaved(pending.conversation_id, pending.method_name, method.observed, saved)

    def _store(self, dialogue, reply: Reply, streamed: bool, seconds: float) -> tuple[ReplyStored, tuple[Turn, Turn]]:
        """Both turns in one transaction, then the judgement once, stored with the reply."""
        service, pending = self.service, self.pending
        day = service.today()  # the turns' date: a memory resolves "yesterday" against it
        user_turn = dialogue.add(Turn(USER, pending.message, session=dialogue.next_session, date=day))
        before = dialogue.turns()
        bot_turn = dialogue.add(Turn(ASSISTANT, reply.text, session=dialogue.next_session, date=day))
        user_index, reply_index = service.store.add_turns(pending.conversation_id, [(user_turn, None), (bot_turn, reply)],
                                                          owner=service.owner)
        pending.kept = True
        service._remember_method(pending.conversation_id, pending.method_name)
        checks = service.judge(before, reply.text) if service.judge is not None else None
        if checks is not None:
            service.store.put_checks(pending.conversation_id, {reply_index: checks}, owner=service.owner)
        return ReplyStored(pending.conversation_id, reply, user_index, reply_index, checks, streamed, seconds), (user_turn, bot_turn)
