"""The consistency judgement of chat replies: each reply's NLI label and CS against the turns
before it (the same windowed judgement as the MT-Bench-101 runner), made once and stored with the
turn in its `checks`, with the model that made it.

A new reply is judged by its round (`judge_consistency`, core/conversation.py); replies stored
without a judgement (before the NLI model was there, by a headless import) are judged when first
shown (`judge_replies`), and the judgements stored back, so a reload, another replica or a second
tab reads them instead of running the model again. Both judge against the same history window.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

from core.dialogue import ASSISTANT, Turn
from core.paths import MissingResource
from core.store import Store, StoredTurn

NLI_CONTEXT_TURNS = 100  # history a reply is judged against (the NLI window keeps only its latest chunks)

MemoKey = tuple[str, int, str]  # (conversation id, turn index, reply text): a changed text is judged again


def history_of(before: list[Turn]) -> list[str]:
    """The premise lines a reply is judged against: the last NLI_CONTEXT_TURNS turns before it."""
    from core.metrics.nli import history_lines  # the NLI module loads the tokenizer's helpers: not at import

    return history_lines(before[-NLI_CONTEXT_TURNS:])


def checks_of(judgement, model: str) -> dict:
    """What a turn keeps of its NLI judgement: the judgement and the model that made it."""
    return {"nli": {**judgement.to_dict(), "model": model}}


def judgement_of(checks: dict | None):
    """The NLIJudgement in a turn's checks (as `judge_consistency` made them), if any."""
    from core.metrics.nli import NLIJudgement

    nli = (checks or {}).get("nli")
    return NLIJudgement.from_dict(nli) if nli else None


def judge_consistency(scorer_of: Callable[[], object], before: list[Turn], text: str) -> dict | None:
    """The checks to store with a new reply, against the last NLI_CONTEXT_TURNS turns before it;
    None (nothing stored) when the NLI model is missing. `scorer_of` gives the (shared) scorer."""
    try:
        scorer = scorer_of()
    except MissingResource:
        return None
    return checks_of(scorer.judge(history_of(before), text), scorer.name)


def judged_reply(s: StoredTurn) -> bool:
    """Whether a stored turn is a reply to judge: an assistant turn with text (a reply stopped before
    any text was written says nothing to be consistent or not with)."""
    return s.turn.role == ASSISTANT and bool(s.turn.text.strip())


def _saved(s: StoredTurn, model: str):
    """The judgement stored with the turn, when the current model made it (another model's is redone)."""
    nli = s.checks.get("nli")
    return judgement_of(s.checks) if nli and nli.get("model") == model else None


def judge_replies(store: Store, cid: str, stored: list[StoredTurn], scorer_of: Callable[[], object],
                  memo: MutableMapping[MemoKey, object], *, owner: str, show_from: int = 0,
                  judge_from: int = 0) -> dict:
    """Turn index -> NLIJudgement for the replies of `stored` from turn index `show_from` on: those
    judged before (stored with the turn, or in `memo`, the caller's per-session memory), and new
    judgements for replies from `judge_from` on (earlier turns serve as history only), stored with
    their turns. `scorer_of` is called only when a reply lacks a judgement; its MissingResource (no
    NLI model) is the caller's to report, and nothing is judged or stored then."""
    shown = [(pos, s) for pos, s in enumerate(stored)
             if judged_reply(s) and s.index >= show_from and (cid, s.index, s.turn.text) not in memo]
    if shown:
        scorer = scorer_of()
        todo = []
        for pos, s in shown:
            key = (cid, s.index, s.turn.text)
            if (saved := _saved(s, scorer.name)) is not None:
                memo[key] = saved
            elif s.index >= judge_from:
                todo.append((key, history_of([t.turn for t in stored[:pos]]), s.turn.text))
        judged = scorer.judge_many([(h, r) for _, h, r in todo]) if todo else []
        for (key, _, _), judgement in zip(todo, judged):
            memo[key] = judgement
        if todo:
            store.put_checks(cid, {key[1]: checks_of(j, scorer.name) for (key, _, _), j in zip(todo, judged)}, owner=owner)
    return {s.index: memo[(cid, s.index, s.turn.text)] for s in stored
            if s.index >= show_from and (cid, s.index, s.turn.text) in memo}


def unjudged(cid: str, stored: list[StoredTurn], show_from: int, memo: MutableMapping[MemoKey, object]) -> int:
    """How many replies from `show_from` on have no judgement yet (none stored, none in `memo`)."""
    return sum(judged_reply(s) and s.index >= show_from and (cid, s.index, s.turn.text) not in memo
               and "nli" not in s.checks for s in stored)
