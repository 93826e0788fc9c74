"""Forgetting what a person said: chosen user turns of one conversation leave the store, every
method's memory and the database file, and an audit entry says who and when (never what).

    report = service.forget(cid, [4], phrase="4471")  # the user turns to forget (ConversationService)
    matching_turns(store, cid, "door code", owner=me)   # the user turns holding some words, to list first

What goes:
- the chosen user turns and the replies of their rounds: text "(forgotten)" (the dialogue keeps its
  shape), the reply's evidence, trace and draft dropped, their consistency checks dropped;
- any later reply holding the forgotten words (the phrase asked for, and each forgotten turn's
  content words and numbers: `forget_terms`): redacted the same way; a later reply that only
  shows them in its evidence, trace or check (a prompt held the earlier turn) keeps its text, loses those;
- the conversation's title when it holds them; votes on the redacted replies (their reply texts);
- every method's saved memory (`method:*` artifacts): rebuilt by a fresh instance that observes
  the remaining turns, as no method here can take a part out of its memory without leaving
  something derived from it (D-SMART's pruned history, SGMem's summaries, mem0's history store);
  a method that keeps no artifact (rag, sgmem, mcts) is rebuilt from the turns by its next reply.
  The report and the audit entry say which was done for each.

The store part (turns, title, votes, artifacts, audit) is one transaction: a forget interrupted
(SIGKILL) leaves the old state or the new one. Then the file: SQLite overwrites freed space
(secure_delete, core/db/engine.py) and its WAL is checkpointed and truncated; PostgreSQL's touched
tables are rewritten with VACUUM FULL (Database.scrub). A forget waits for the replies being
written to that conversation in this process (`forget_guard`, `round_begins`); a reply written in
another process across the forget saves no memory (ReplyRound checks the forget epoch).
"""

from __future__ import annotations

import json
import mmap
import re
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Protocol

from sqlalchemy import Connection, delete, func, insert, select, update

from core.db.schema import artifacts as A
from core.db.schema import conversations as C
from core.db.schema import forget_audit as F
from core.db.schema import turns as T
from core.db.schema import vote_history, votes
from core.dialogue import ASSISTANT, USER, Reply, Turn
from core.memory_artifact import memory_key, pack_memory
from core.methods import METHODS
from core.store import Store, StoredTurn, stored_json

FORGOTTEN = "(forgotten)"
MIN_TERM_CHARS = 4  # a content word this long or longer (or any token with a digit) is a forgotten term
TOUCHED_TABLES = ("turns", "conversations", "artifacts", "votes", "vote_history")  # vacuumed on PostgreSQL


class ConversationChanged(RuntimeError):
    """Turns were added while the forget rebuilt the memories (another process): nothing changed; try again."""


@dataclass(frozen=True)
class TurnMatch:
    index: int  # the user turn's index in the conversation
    round: int  # 1-based round number, as the page counts them
    text: str  # shown to its owner before anything is removed


@dataclass(frozen=True)
class ForgetReport:
    conversation_id: str
    user_turns: tuple[int, ...]  # the user turns chosen
    redacted: tuple[int, ...]  # every turn now "(forgotten)": the chosen ones, their replies, later replies repeating them
    cleaned: tuple[int, ...]  # later turns that kept their text but lost evidence, trace or checks holding it
    rounds: tuple[int, ...]  # 1-based round numbers of the redacted turns
    memories: dict  # method -> how its memory forgot ("rebuilt from N turns", "dropped: rebuilt by the next reply")
    file: tuple[str, ...]  # what was done to the database file
    seconds: float

    def summary(self) -> str:
        """What was forgotten, in words, without repeating it."""
        rounds = ", ".join(str(r) for r in self.rounds)
        mem = "; ".join(f"{name}: {how}" for name, how in sorted(self.memories.items())) or "no saved memory"
        return (f"Forgot {len(self.user_turns)} message(s) of yours and {len(self.redacted) - len(self.user_turns)} "
                f"repl(ies) (round(s) {rounds}); {len(self.cleaned)} later repl(ies) lost evidence holding it. "
                f"Memory: {mem}.")


# -- replies and forgets of one conversation, in this process ---------------------------------------------
class _RoundsAndForgets:
    """Replies being written to a conversation (any number at once) and a forget (alone): a forget
    waits for the replies in progress and new replies wait for the forget (core/forget.py), so a
    reply's memory, built before the forget, is never saved after it."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.rounds = 0
        self.forgetting = False


_GUARDS: dict[tuple[str, str], _RoundsAndForgets] = {}
_GUARDS_LOCK = threading.Lock()


def _guard(db: str, cid: str) -> _RoundsAndForgets:
    with _GUARDS_LOCK:
        return _GUARDS.setdefault((db, cid), _RoundsAndForgets())


@contextmanager
def forget_guard(store: Store, cid: str, wait_s: float) -> Iterator[None]:
    """Held by a forget: TimeoutError when replies are still being written after `wait_s`."""
    guard = _guard(str(store.db.url), cid)
    with guard.cond:
        if not guard.cond.wait_for(lambda: guard.rounds == 0 and not guard.forgetting, timeout=wait_s):
            raise TimeoutError(f"a reply was still being written after {wait_s:g} s: nothing was forgotten, try again")
        guard.forgetting = True
    try:
        yield
    finally:
        with guard.cond:
            guard.forgetting = False
            guard.cond.notify_all()


def round_begins(db: str, cid: str) -> Callable[[], None]:
    """A reply to `cid` in database `db` (its URL) starts, after any forget in progress: the
    function that says it ended (idempotent)."""
    guard = _guard(db, cid)
    with guard.cond:
        guard.cond.wait_for(lambda: not guard.forgetting)
        guard.rounds += 1
    ended = []

    def end() -> None:
        with guard.cond:
            if not ended:
                ended.append(True)
                guard.rounds -= 1
                guard.cond.notify_all()

    return end


class ForgetHost(Protocol):
    """What a forget needs of the conversation service (core.conversation.ConversationService)."""

    store: Store
    owner: str
    instances: MutableMapping
    make_method: Callable


# -- what counts as holding the forgotten words -----------------------------------------------------
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS  # a word list only; loads no model

    return frozenset(STOP_WORDS)


def forget_terms(texts: list[str], phrase: str = "") -> tuple[str, ...]:
    """The words whose presence makes a later reply a repetition of what is forgotten: the phrase
    asked for, and each forgotten turn's tokens holding a digit (codes, readings, dates) or
    content words (not stop words, at least MIN_TERM_CHARS long: names, places, conditions)."""
    from core.text import words

    stop = _stop_words()
    terms = {phrase.strip().lower()} if phrase.strip() else set()
    for text in texts:
        for token in words(text):
            if any(ch.isdigit() for ch in token) or (len(token) >= MIN_TERM_CHARS and token not in stop):
                terms.add(token)
    return tuple(sorted(terms))


def _matcher(terms: tuple[str, ...], texts: list[str]) -> re.Pattern | None:
    """One case-insensitive pattern: any term as a whole word, or any forgotten text whole."""
    parts = [rf"(?<!\w){re.escape(t)}(?!\w)" for t in terms if t] + [re.escape(t) for t in texts if t.strip()]
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def _holds(pattern: re.Pattern | None, value) -> bool:
    if pattern is None or value is None or value == "":
        return False
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return pattern.search(text) is not None


# -- listing before forgetting -----------------------------------------------------------------------
def matching_turns(store, cid: str, phrase: str, *, owner: str) -> list[TurnMatch]:
    """The owner's user turns of `cid` holding `phrase` (case-insensitive; not yet forgotten)."""
    needle = phrase.strip().lower()
    if not needle:
        return []
    return [TurnMatch(s.index, s.index // 2 + 1, s.turn.text) for s in store.turns(cid, owner=owner)
            if s.turn.role == USER and s.turn.text != FORGOTTEN and needle in s.turn.text.lower()]


def user_turn_of_round(store, cid: str, round_index: int | None, *, owner: str) -> int | None:
    """The index of the user turn of round `round_index` (0-based, as the DSM's history counts
    rounds), or None when there is none (an imported fact) or it is forgotten already."""
    if round_index is None or round_index < 0:
        return None
    users = [s for s in store.turns(cid, owner=owner) if s.turn.role == USER]
    if round_index >= len(users) or users[round_index].turn.text == FORGOTTEN:
        return None
    return users[round_index].index


# -- the redaction, computed before anything is written ------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    turns: list[StoredTurn]  # every turn after redaction
    changed: dict[int, StoredTurn]  # index -> the new row
    redacted: tuple[int, ...]
    cleaned: tuple[int, ...]
    pattern: re.Pattern | None
    texts: tuple[str, ...]  # the forgotten user texts (kept in memory only, for the file check)


def _redacted_reply(reply: Reply | None) -> Reply | None:
    if reply is None:
        return None
    return Reply(text=FORGOTTEN, method=reply.method, model=reply.model, timings=reply.timings,
                 llm_calls=reply.llm_calls, cost=reply.cost, stopped=reply.stopped)


def _cleaned_reply(reply: Reply, pattern: re.Pattern) -> Reply:
    evidence = tuple(e for e in reply.evidence if not _holds(pattern, e.text) and not _holds(pattern, e.meta))
    trace = None if _holds(pattern, reply.trace.to_dict() if reply.trace else None) else reply.trace
    draft = "" if _holds(pattern, reply.draft) else reply.draft
    return replace(reply, evidence=evidence, trace=trace, draft=draft)


def plan_forget(stored: list[StoredTurn], user_indices: list[int], phrase: str = "") -> _Plan:
    """The conversation after forgetting `user_indices` (KeyError unless each is a user turn of it)."""
    by_index = {s.index: s for s in stored}
    chosen = sorted(set(user_indices))
    for i in chosen:
        if i not in by_index or by_index[i].turn.role != USER:
            raise KeyError(f"no user turn {i} in this conversation")
    texts = [by_index[i].turn.text for i in chosen]
    pattern = _matcher(forget_terms(texts, phrase), texts)
    rounds = set(chosen) | {i + 1 for i in chosen if i + 1 in by_index and by_index[i + 1].turn.role == ASSISTANT}
    first = chosen[0] if chosen else len(stored)
    changed: dict[int, StoredTurn] = {}
    redacted, cleaned = [], []
    for s in stored:
        if s.index < first:
            continue
        repeats = s.turn.role == ASSISTANT and (_holds(pattern, s.turn.text) or _holds(pattern, s.reply.draft if s.reply else ""))
        if s.index in rounds or repeats:
            changed[s.index] = StoredTurn(s.index, replace(s.turn, text=FORGOTTEN), _redacted_reply(s.reply), {})
            redacted.append(s.index)
        elif s.reply is not None or s.checks:
            reply = _cleaned_reply(s.reply, pattern) if s.reply is not None and pattern is not None else s.reply
            checks = {} if _holds(pattern, s.checks) else s.checks
            if reply != s.reply or checks != s.checks:
                changed[s.index] = StoredTurn(s.index, s.turn, reply, checks)
                cleaned.append(s.index)
    turns = [changed.get(s.index, s) for s in stored]
    return _Plan(turns, changed, tuple(redacted), tuple(cleaned), pattern, tuple(texts))


# -- the memories ------------------------------------------------------------------------------------------
def rebuild_memories(service: ForgetHost, cid: str, turns: list[Turn]) -> tuple[dict[str, bytes | None], dict]:
    """Each saved method memory of `cid` rebuilt from `turns` by a fresh instance: kind -> new
    artifact (None: delete it), and how each method forgot, for the report."""
    artifacts: dict[str, bytes | None] = {}
    how: dict[str, str] = {}
    for kind in service.store.artifact_kinds(cid, owner=service.owner):
        name = kind.removeprefix("method:")
        if not kind.startswith("method:") or name not in METHODS:
            continue  # not a method's memory (none is written today); left as it is
        method = service.make_method(name)
        for turn in turns:
            method.observe(turn)
        method.wait()
        state = method.save_state()
        artifacts[memory_key(name)] = None if state is None else pack_memory(method.observed, state)
        how[name] = f"rebuilt from the {len(turns)} remaining turns"
    for key in [k for k in service.instances if isinstance(k, str) and k.startswith(f"method:{cid}:")]:
        how.setdefault(key.split(":", 2)[2], "dropped: rebuilt from the remaining turns by its next reply")
        del service.instances[key]
    return artifacts, how


# -- the operation -----------------------------------------------------------------------------------------
def forget_turns(service: ForgetHost, cid: str, user_indices: list[int], phrase: str = "",
           wait_s: float = 600.0) -> ForgetReport:
    """Forget the owner's user turns `user_indices` of `cid` (and everything derived from them).
    KeyError when the owner cannot see the conversation or an index is not one of its user turns;
    ReadOnlyConversation for a shared demo; TimeoutError when a reply is still being written after `wait_s`."""
    t0 = time.perf_counter()
    store, owner = service.store, service.owner
    with forget_guard(store, cid, wait_s):
        stored = store.turns(cid, owner=owner)
        plan = plan_forget(stored, user_indices, phrase)
        store.conversation(cid, owner=owner)  # (KeyError) before any memory is rebuilt
        artifacts, how = rebuild_memories(service, cid, [s.turn for s in plan.turns])
        chosen = sorted(set(user_indices))

        def write(c: Connection) -> None:
            last = c.execute(select(func.max(T.c.idx)).where(T.c.conversation_id == cid)).scalar()
            if (last if last is not None else -1) != (stored[-1].index if stored else -1):
                raise ConversationChanged("turns were added during the forget: nothing was changed, try again")
            for s in plan.changed.values():
                c.execute(update(T).where(T.c.conversation_id == cid, T.c.idx == s.index).values(
                    text=s.turn.text, reply=stored_json(s.reply.to_dict()) if s.reply else None,
                    checks=json.dumps(s.checks) if s.checks else None))
            title = c.execute(select(C.c.title).where(C.c.id == cid)).scalar()
            if _holds(plan.pattern, title) or any(t.startswith(title) for t in plan.texts if title):
                c.execute(update(C).where(C.c.id == cid).values(title=FORGOTTEN))
            for table in (votes, vote_history):
                rows = c.execute(select(table.c.owner, table.c.turn, table.c.replies, *table.primary_key.columns)
                                 .where(table.c.conversation == cid, table.c.turn.in_(plan.redacted))).all()
                for row in rows:
                    n = len(json.loads(row.replies or "[]"))
                    keys = [col == row._mapping[col.name] for col in table.primary_key.columns]
                    c.execute(update(table).where(*keys).values(replies=json.dumps([FORGOTTEN] * n)))
            for kind, data in artifacts.items():
                if data is None:
                    c.execute(delete(A).where(A.c.conversation_id == cid, A.c.kind == kind))
                else:
                    c.execute(update(A).where(A.c.conversation_id == cid, A.c.kind == kind)
                              .values(data=data, updated_at=time.time()))
            c.execute(insert(F).values(owner=owner, conversation=cid, turns=json.dumps(chosen),
                                       memories=json.dumps(how, sort_keys=True), created_at=time.time()))

        store.write_owned(cid, write, owner=owner)
        file = scrub_file(store, plan.texts)
    rounds = tuple(sorted({i // 2 + 1 for i in plan.redacted}))
    return ForgetReport(cid, tuple(chosen), plan.redacted, plan.cleaned, rounds, how, tuple(file),
                        time.perf_counter() - t0)


def scrub_file(store, texts: tuple[str, ...]) -> list[str]:
    """Leave no old copy in the database files (Database.scrub). SQLite: if a forgotten text is
    still in the file's bytes after the checkpoint (free pages of a file written before
    secure_delete was on), VACUUM rewrites it and the WAL is truncated again."""
    db = store.db
    done = db.scrub(TOUCHED_TABLES)
    if db.dialect == "sqlite" and db.path is not None and file_holds(db.path, texts):
        db.vacuum()
        done += ["vacuumed (an old copy was in a free page)"] + db.scrub(TOUCHED_TABLES)
    return done


def file_holds(path, texts) -> bool:
    """Whether any of `texts` (UTF-8, case-insensitive) is in the bytes of the file at `path`."""
    needles = [t.lower().encode("utf-8") for t in texts if t.strip()]
    if not needles:
        return False
    with open(path, "rb") as f:
        if f.seek(0, 2) == 0:
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            lowered = data[:].lower()
    return any(n in lowered for n in needles)
