"""Per-reply consistency in the chat: each assistant reply's CS and NLI label against the
conversation before it (the same windowed NLI judgement as the MT-Bench-101 runner).

Judgements are computed once per turn and kept in this user's st.session_state; the NLI model
itself is the shared cached resource."""

from __future__ import annotations

import streamlit as st

from core.metrics.nli import NLIJudgement, history_lines
from core.paths import MissingResource
from core.store import StoredTurn
from ui import resources, safe

_MEMO = "consistency_memo"  # session key: (conversation id, turn index, reply text) -> judgement
_LABEL_COLOURS = {"entailment": "green", "neutral": "gray", "contradiction": "red"}


def judge_turns(cid: str | None, stored: list[StoredTurn], show_from: int = 0, judge_from: int = 0) -> dict[int, NLIJudgement]:
    """Turn index -> judgement for the assistant replies of `stored` from turn index `show_from` on:
    those judged before (kept in the session), and new judgements for replies from `judge_from` on
    (earlier turns serve as history only); {} (with a notice) when the NLI model is missing."""
    if not cid:
        return {}
    memo: dict = st.session_state.setdefault(_MEMO, {})
    todo = []
    for pos, s in enumerate(stored):
        key = (cid, s.index, s.turn.text)
        if s.turn.role == "assistant" and s.index >= max(show_from, judge_from) and key not in memo:
            todo.append((key, history_lines([t.turn for t in stored[:pos]]), s.turn.text))
    if todo:
        try:
            scorer = resources.nli_scorer()
        except MissingResource as err:
            st.caption(f"Consistency check off: {err}")
            return {}
        for (key, _, _), judgement in zip(todo, scorer.judge_many([(h, r) for _, h, r in todo])):
            memo[key] = judgement
    return {s.index: memo[(cid, s.index, s.turn.text)] for s in stored
            if s.index >= show_from and (cid, s.index, s.turn.text) in memo}


def unjudged(cid: str | None, stored: list[StoredTurn], show_from: int) -> int:
    """How many assistant replies from `show_from` on have no judgement yet."""
    memo: dict = st.session_state.get(_MEMO, {})
    return sum(s.turn.role == "assistant" and s.index >= show_from and (cid, s.index, s.turn.text) not in memo
               for s in stored)


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
