"""The issue-52 checks of one reply together, and their counts over a method's replies.

Each reply is judged as a turn of its conversation (`TurnCase`): restatement (a statement said
back), bare (an acknowledgement of a statement that adds nothing), recital (an earlier reply
said again), unsupported attribution (a claim about the user
nothing the user said supports), another language (a sentence not in the language of the user's
messages, core.language.other_language), and on a question about a fact never told, whether it declines;
on a question about a told fact, whether it declines all the same (`declined_told`). `bench
replies` scores both the reply shown and the method's own text (`draft`), so a rewrite by the
reply check cannot hide what a method does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.language import other_language, users_language
from core.metrics.abstention import declines
from core.metrics.reply_defects import DEFECTS, ReplyCase, flagged, is_statement, score_reply
from core.metrics.saying_back import bare, recites, restates
from core.metrics.unsupported import unsupported_claims
from core.text import split_sentences

CHECKS = ("restatement", "recital", "bare", "unsupported", "other_language", "invented")  # the defects with examples in a summary


@dataclass(frozen=True)
class TurnCase:
    reply: str
    user: str  # the message it answers
    earlier_user: tuple[str, ...] = ()
    earlier_replies: tuple[str, ...] = ()  # the same kind of text (shown replies, or the method's drafts) before it
    never_told: bool = False  # the message asks for a fact the dialogue never gave
    told_question: bool = False  # the message asks for a told fact (the script's `expect`)


@dataclass(frozen=True)
class TurnFlags:
    statement: bool
    restatement: bool
    recital: bool
    bare: bool
    unsupported: tuple[str, ...]
    declined: bool | None  # on a never-told or told question; None elsewhere
    other_language: bool = False  # a sentence not in the user's language

    def as_item(self, prefix: str = "") -> dict:
        return {f"{prefix}restatement": self.restatement, f"{prefix}recital": self.recital, f"{prefix}bare": self.bare,
                f"{prefix}unsupported": list(self.unsupported), f"{prefix}other_language": self.other_language,
                **({f"{prefix}declined": self.declined} if self.declined is not None else {})}


def turn_flags(case: TurnCase) -> TurnFlags:
    statement = is_statement(case.user) and not case.never_told and not case.told_question
    asked = case.never_told or case.told_question
    return TurnFlags(
        statement=statement,
        restatement=statement and restates(case.reply, case.user),
        recital=recites(case.reply, case.earlier_replies),
        bare=statement and bare(case.reply),
        unsupported=unsupported_claims(case.reply, (*case.earlier_user, case.user)),
        declined=declines(case.reply) if asked else None,
        other_language=in_other_language(case.reply, (*case.earlier_user, case.user)),
    )


def in_other_language(reply: str, user_messages: Sequence[str]) -> bool:
    """Whether a sentence of `reply` is not in the language of the user's messages."""
    return bool(other_language(split_sentences(reply), users_language(user_messages)))


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def summarise_turns(flags: Sequence[TurnFlags], never_told: Sequence[bool], prefix: str = "") -> dict:
    """Counts over one method's replies (`prefix` names the draft's): statement turns said back
    (restatement or recital) and their rate, recital over all replies, replies with an unsupported
    claim, and on the never-told questions the declines and their rate; declines of told questions."""
    statements = [f for f in flags if f.statement]
    said_back = sum(f.restatement or f.recital for f in statements)
    asked_never = [f for f, n in zip(flags, never_told) if n]
    asked_told = [f for f, n in zip(flags, never_told) if not n and f.declined is not None]
    declined = sum(bool(f.declined) for f in asked_never)
    out = {"statements": len(statements)} if not prefix else {}
    out.update({
        f"{prefix}restatement": sum(f.restatement for f in statements),
        f"{prefix}recital": sum(f.recital for f in flags),
        f"{prefix}recital_on_statements": sum(f.recital for f in statements),
        f"{prefix}said_back": said_back,
        f"{prefix}said_back_rate": _rate(said_back, len(statements)),
        f"{prefix}unsupported": sum(bool(f.unsupported) for f in flags),
        f"{prefix}other_language": sum(f.other_language for f in flags),
        f"{prefix}bare": sum(f.bare for f in statements),
        f"{prefix}bare_rate": _rate(sum(f.bare for f in statements), len(statements)),
    })
    if not prefix:
        out["never_told"] = len(asked_never)
    out.update({f"{prefix}declined": declined, f"{prefix}declined_rate": _rate(declined, len(asked_never)),
                f"{prefix}declined_told": sum(bool(f.declined) for f in asked_told)})
    return out


def tripped_checks(reply: str, user: str, earlier_user: Sequence[str] = (), earlier_replies: Sequence[str] = ()) -> tuple[str, ...]:
    """The checks of `bench replies` one live reply trips, by name, as a reader of the Compare page
    sees them (issue 52): the bar's defects (core.metrics.reply_defects: voice, attribution, leak,
    meta, refusal, echo, repeat) and the conversing ones (restatement, recital, bare, unsupported,
    other_language). No
    expected answer and no never-told mark: a live message has neither."""
    score = score_reply(ReplyCase(reply, user, tuple(earlier_user), (), earlier_replies[-1] if earlier_replies else ""))
    flags = turn_flags(TurnCase(reply, user, tuple(earlier_user), tuple(earlier_replies)))
    conversing = {"restatement": flags.restatement, "recital": flags.recital, "bare": flags.bare,
                  "unsupported": bool(flags.unsupported), "other_language": flags.other_language}
    return (*(d for d in DEFECTS if flagged(score, d)), *(name for name, hit in conversing.items() if hit))
