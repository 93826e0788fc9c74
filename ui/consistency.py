"""Per-reply consistency in the chat: each assistant reply's CS and NLI label against the
conversation before it (the same windowed NLI judgement as the MT-Bench-101 runner).

A reply is judged once: when it is written (`judge_reply`, stored with the turn) or, for turns
stored without one, when first shown; the judgement is stored in the turn's `checks` with the
model that made it, so a reload, a reconnect to another replica or a second tab reads it instead
of running the model again. This session's st.session_state keeps them too. The NLI model is the
shared cached resource."""

from __future__ import annotations

import streamlit as st

from core.conversation import NLI_CONTEXT_TURNS as CONTEXT_TURNS, checks_of, judge_consistency, judgement_of  # noqa: F401 (judgement_of: for pages)
from core.dialogue import Turn
from core.metrics.nli import NLIJudgement, history_lines
from core.paths import MissingResource
from core.store import Store, StoredTurn
from ui import resources, safe

_MEMO = "consistency_memo"  # session key: (conversation id, turn index, reply text) -> judgement
_LABEL_COLOURS = {"entailment": "green", "neutral": "gray", "contradiction": "red"}


def judge_reply(before: list[Turn], text: str) -> dict | None:
    """The checks to store with a new reply (core.conversation.judge_consistency with the shared
    NLI model); None when the model is missing."""
    return judge_consistency(resources.nli_scorer, before, text)


def _saved(s: StoredTurn, model: str) -> NLIJudgement | None:
    nli = s.checks.get("nli")
    return NLIJudgement.from_dict(nli) if nli and nli.get("model") == model else None


def judged_reply(s: StoredTurn) -> bool:
    """Whether a stored turn is a reply to judge: an assistant turn with text (a reply stopped before
    any text was written says nothing to be consistent or not with)."""
    return s.turn.role == "assistant" and bool(s.turn.text.strip())


def judge_turns(cid: str | None, stored: list[StoredTurn], show_from: int = 0, judge_from: int = 0,
                store: Store | None = None, owner: str = "") -> dict[int, NLIJudgement]:
    """Turn index -> judgement for the assistant replies of `stored` from turn index `show_from` on:
    those judged before (stored with the turn or kept in the session), and new judgements for
    replies from `judge_from` on (earlier turns serve as history only), stored back when `store`
    is given; {} (with a notice) when the NLI model is missing."""
    if not cid:
        return {}
    memo: dict = st.session_state.setdefault(_MEMO, {})
    shown = [(pos, s) for pos, s in enumerate(stored)
             if judged_reply(s) and s.index >= show_from and (cid, s.index, s.turn.text) not in memo]
    if shown:
        try:
            scorer = resources.nli_scorer()
        except MissingResource as err:
            st.caption(f"Consistency check off: {err}")
            return {}
        todo = []
        for pos, s in shown:
            key = (cid, s.index, s.turn.text)
            if (saved := _saved(s, scorer.name)) is not None:
                memo[key] = saved
            elif s.index >= judge_from:
                todo.append((key, history_lines([t.turn for t in stored[max(0, pos - CONTEXT_TURNS):pos]]), s.turn.text))
        judged = scorer.judge_many([(h, r) for _, h, r in todo]) if todo else []
        for (key, _, _), judgement in zip(todo, judged):
            memo[key] = judgement
        if store is not None and todo:
            store.put_checks(cid, {key[1]: checks_of(j, scorer.name) for (key, _, _), j in zip(todo, judged)}, owner=owner)
    return {s.index: memo[(cid, s.index, s.turn.text)] for s in stored
            if s.index >= show_from and (cid, s.index, s.turn.text) in memo}


def unjudged(cid: str | None, stored: list[StoredTurn], show_from: int) -> int:
    """How many assistant replies from `show_from` on have no judgement yet."""
    memo: dict = st.session_state.get(_MEMO, {})
    return sum(judged_reply(s) and s.index >= show_from and (cid, s.index, s.turn.text) not in memo
               and "nli" not in s.checks for s in stored)


def badge(judgement: NLIJudgement) -> str:
    """Markdown: coloured NLI label and CS, e.g. ':green[entailment]' · CS 0.91."""
    p = judgement.probs
    colour = _LABEL_COLOURS[judgement.label]
    return (f"Consistency vs. the conversation so far: :{colour}[**{judgement.label}**] · CS {judgement.consistency:.2f} "
            f"(P_E {p.entailment:.2f}, P_N {p.neutral:.2f}, P_C {p.contradiction:.2f})")


def render(judgement: NLIJudgement | None) -> None:
    if judgement is None:
        return
    st.caption(badge(judgement),
               help="CS = ((P_E - P_C) + 1) / 2 from the NLI model, the reply judged against the earlier turns "
                    f"(decisive chunk {judgement.chunk_index + 1} of {judgement.n_chunks}: "
                    f"\"{safe.literal(judgement.premise_chunk[:200])}\").")  # tooltips render Markdown
