"""Durable blind votes in the same database as the conversations (SQLite or PostgreSQL, core/db).

Owners keep people apart, as in core/store.py and core/annotation/store.py:

- every vote belongs to one owner (a browser's private id, a named workspace, a signed-in
  account); every call that reads votes takes `owner=` and filters on it in SQL, so a person sees
  their own votes plus the read-only shared demo ones (`SHARED_OWNER`, put there only by an
  import), never another person's;
- `outcomes_of_everyone()` gives the rankings of everyone who shares the database: methods and
  winners only, with no owner, conversation or reply, so no single vote can be traced to anyone;
- `all_votes()` is the operator's (the `votes export` command, which holds the database anyway).

One current vote per owner per turn: the key is (owner, conversation, turn), written with INSERT
... ON CONFLICT, so a new click replaces the vote; every vote given is also appended to
`vote_history`. Each vote is one short transaction, committed before `vote()` returns, so a process
killed with SIGKILL loses nothing acknowledged. An import is one transaction: a bad line anywhere
leaves the votes exactly as they were.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import Connection, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.db import Database
from core.db.migrate import ensure_schema
from core.db.schema import vote_history as HIST
from core.db.schema import votes as VOTES
from core.store import SHARED_OWNER, check_owner
from core.votes.model import Vote, VoteError, make_vote

_COLUMNS = ("owner", "conversation", "turn", "methods", "winner", "replies", "measures", "created_at")


def _row(row) -> Vote:
    owner, conversation, turn, methods, winner, replies, measures, created = row
    return Vote(owner, conversation, int(turn), tuple(json.loads(methods)), winner, tuple(json.loads(replies)),
                json.loads(measures), float(created))


def _values(vote: Vote) -> dict:
    return dict(owner=vote.owner, conversation=vote.conversation, turn=vote.turn,
                methods=json.dumps(list(vote.methods), ensure_ascii=False), winner=vote.winner,
                replies=json.dumps(list(vote.replies), ensure_ascii=False),
                measures=json.dumps(vote.measures, ensure_ascii=False, sort_keys=True), created_at=vote.created_at)


def _upsert(conn: Connection, values: dict):
    insert_ = sqlite_insert if conn.dialect.name == "sqlite" else pg_insert
    stmt = insert_(VOTES).values(**values)
    keys = ["owner", "conversation", "turn"]
    return stmt.on_conflict_do_update(index_elements=keys, set_={k: stmt.excluded[k] for k in values if k not in keys})


@dataclass(frozen=True)
class ImportReport:
    added: int  # votes for turns the owner had not voted on
    replaced: int  # a newer vote from the file became the current one
    unchanged: int  # the same vote was there already (a file imported twice adds nothing)
    history_only: int  # an older vote from the file: kept in the history, the current one stays


class VoteStore:
    """`target`: the same database as core.store.Store (an SQLite path, sqlite:/// or postgresql:// URL)."""

    def __init__(self, target: str | Path, retry_s: float = 30.0) -> None:
        self.db = Database(target, retry_s=retry_s)
        self.path = self.db.path
        self.url = self.db.url
        ensure_schema(self.db)

    # -- writing ----------------------------------------------------------------------------------
    def vote(self, conversation: str, turn: int, methods, winner: str, *, owner: str, replies=(), measures=None) -> Vote:
        """Give or change `owner`'s vote on one turn; committed before this returns. The same
        judgement again changes nothing; a different one replaces it and joins the history."""
        if check_owner(owner) == SHARED_OWNER:
            raise PermissionError("the shared demo owner is read-only")
        new = make_vote(owner, conversation, turn, methods, winner, replies, measures)

        def run(db: Connection) -> Vote:
            current = self._current(db, owner, new.conversation, new.turn)
            if current is not None and current.same_judgement(new) and current.measures == new.measures:
                return current  # a double click, or a retry after the commit went through
            stamped = replace(new, created_at=time.time())
            values = _values(stamped)
            db.execute(_upsert(db, values))
            db.execute(insert(HIST).values(**values, via="page"))
            return stamped

        return self.db.write(run)

    def import_votes(self, votes: list[Vote], *, owner: str | None = None) -> ImportReport:
        """Merge votes (from `votes export` of this or another database) in one transaction, without
        duplicates: a vote already there (same owner, turn, created_at and judgement) is skipped; for
        a turn the owner voted on, the newer vote is the current one and both stay in the history.
        `owner` puts every vote under that owner (e.g. "shared/demo" for demo votes everyone sees)."""
        votes = [replace(v, owner=check_owner(owner)) if owner else v for v in votes]
        for v in votes:
            check_owner(v.owner)
            if not v.created_at:
                raise VoteError(f"a vote on {v.conversation!r} turn {v.turn} has no created_at: an import keeps when votes were given")

        def run(db: Connection) -> list[int]:
            counts = [0, 0, 0, 0]
            for v in votes:
                values = _values(v)
                seen = db.execute(select(HIST.c.seq).where(*(HIST.c[k] == values[k] for k in
                                  ("owner", "conversation", "turn", "winner", "methods", "created_at")))).first()
                current = self._current(db, v.owner, v.conversation, v.turn)
                if seen is not None and current is not None and current.created_at >= v.created_at:
                    counts[2] += 1
                    continue
                if seen is None:
                    db.execute(insert(HIST).values(**values, via="import"))
                if current is None or current.created_at < v.created_at:
                    db.execute(_upsert(db, values))
                    counts[0 if current is None else 1] += 1
                else:
                    counts[3] += 1
            return counts

        return ImportReport(*self.db.write(run))

    # -- reading ----------------------------------------------------------------------------------
    @staticmethod
    def _current(db: Connection, owner: str, conversation: str, turn: int) -> Vote | None:
        row = db.execute(select(*(VOTES.c[k] for k in _COLUMNS)).where(
            VOTES.c.owner == owner, VOTES.c.conversation == conversation, VOTES.c.turn == turn)).first()
        return _row(row) if row else None

    def get(self, conversation: str, turn: int, *, owner: str) -> Vote | None:
        """The owner's current vote on the turn (None: not voted)."""
        check_owner(owner)
        return self.db.read(lambda db: self._current(db, owner, conversation, turn))

    def votes(self, *, owner: str, include_shared: bool = True, conversation: str | None = None) -> list[Vote]:
        """The owner's current votes (and the shared demo ones), oldest first."""
        visible = (check_owner(owner), SHARED_OWNER if include_shared else owner)
        query = select(*(VOTES.c[k] for k in _COLUMNS)).where(VOTES.c.owner.in_(visible))
        if conversation is not None:
            query = query.where(VOTES.c.conversation == conversation)
        query = query.order_by(VOTES.c.created_at, VOTES.c.conversation, VOTES.c.turn)
        return [_row(r) for r in self.db.read(lambda db: db.execute(query).all())]

    def history(self, conversation: str, turn: int, *, owner: str) -> list[Vote]:
        """Every vote the owner gave on the turn, oldest first."""
        query = (select(*(HIST.c[k] for k in _COLUMNS))
                 .where(HIST.c.owner == check_owner(owner), HIST.c.conversation == conversation, HIST.c.turn == turn)
                 .order_by(HIST.c.seq))
        return [_row(r) for r in self.db.read(lambda db: db.execute(query).all())]

    def outcomes_of_everyone(self) -> list[tuple[tuple[str, ...], str]]:
        """(methods, winner) of every current vote of every owner: what the rankings of everyone who
        shares the database need, and nothing that says who voted, on what or about which reply."""
        query = select(VOTES.c.methods, VOTES.c.winner).order_by(VOTES.c.created_at)
        return [(tuple(json.loads(m)), w) for m, w in self.db.read(lambda db: db.execute(query).all())]

    def all_votes(self, owners: list[str] | None = None) -> list[Vote]:
        """Every current vote (of `owners` only, when given), oldest first: the operator's export."""
        query = select(*(VOTES.c[k] for k in _COLUMNS))
        if owners:
            query = query.where(VOTES.c.owner.in_([check_owner(o) for o in owners]))
        query = query.order_by(VOTES.c.created_at, VOTES.c.owner, VOTES.c.conversation, VOTES.c.turn)
        return [_row(r) for r in self.db.read(lambda db: db.execute(query).all())]

    def counts(self, *, owner: str) -> dict[str, int]:
        """{"mine": the owner's current votes, "everyone": all current votes in the database}."""
        check_owner(owner)

        def run(db: Connection) -> dict[str, int]:
            mine = db.execute(select(func.count()).where(VOTES.c.owner == owner)).scalar()
            return {"mine": int(mine), "everyone": int(db.execute(select(func.count()).select_from(VOTES)).scalar())}

        return self.db.read(run)

