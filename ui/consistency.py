"""Per-reply consistency in the chat: each assistant reply's CS and NLI label against the
conversation before it, drawn as a badge. The judging (once per reply, stored with the turn, the
same history window as a new reply's) is core/judging.py's, through the conversation service; this
module keeps the session's memo of judgements, says when the NLI model is missing, and draws. The
NLI model is the shared cached resource."""

from __future__ import annotations

import streamlit as st

from core.conversation import ConversationService
from core.dialogue import Turn
from core.judging import judge_consistency, judgement_of  # noqa: F401 (judgement_of: for pages)
from core.judging import unjudged as _unjudged
from core.metrics.nli import NLIJudgement
from core.paths import MissingResource
from core.store import StoredTurn
from ui import resources, safe

_MEMO = "consistency_memo"  # session key: (conversation id, turn index, reply text) -> judgement
_LABEL_COLOURS = {"entailment": "green", "neutral": "gray", "contradiction": "red"}


def judge_reply(before: list[Turn], text: str) -> dict | None:
    """The checks to store with a new reply (core.judging.judge_consistency with the shared
    NLI model); None when the model is missing."""
    return judge_consistency(resources.nli_scorer, before, text)


def judge_turns(service: ConversationService, cid: str | None, stored: list[StoredTurn], show_from: int = 0,
                judge_from: int = 0) -> dict[int, NLIJudgement]:
    """Turn index -> judgement for the assistant replies of `stored` from turn index `show_from` on:
    those judged before (stored with the turn or kept in the session), and new judgements for
    replies from `judge_from` on, stored by the service; {} (with a notice) when the NLI model is missing."""
    if not cid:
        return {}
    memo: dict = st.session_state.setdefault(_MEMO, {})
    try:
        return service.judge_replies(cid, stored, resources.nli_scorer, memo, show_from=show_from, judge_from=judge_from)
    except MissingResource as err:
        st.caption(f"Consistency check off: {err}")
        return {}


def unjudged(cid: str | None, stored: list[StoredTurn], show_from: int) -> int:
    """How many assistant replies from `show_from` on have no judgement yet."""
    return _unjudged(cid, stored, show_from, st.session_state.get(_MEMO, {}))


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
