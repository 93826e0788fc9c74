"""Replies: what each method's chat replies say, not only whether the fact is in them (issue 39).

Data: a `chat --script` JSONL (core.chat): `{"new_dialogue": true}` starts a conversation,
`{"user": "...", "expect": [...]}` is a user turn. Each method chats through every dialogue as the
Chat page does (a fresh memory per dialogue, turns dated the day they are said), and every reply
is scored by core.metrics.reply_defects: correct, voice, attribution, leak, meta, refusal, echo,
repeat, length; and by core.metrics.off_turn: whether the reply answers the user's previous message
instead of this one (by meaning, with MiniLM; reported beside the bar, not in it); and by the
issue-52 checks of core.metrics.conversing: restatement, recital, unsupported attribution, and on a
turn marked `never_told`, whether the reply declines. `--limit N` keeps
the first N dialogues. `--records DIR` scores transcripts that
`python -m core chat --method M --script DATA --out DIR/M.jsonl` wrote instead of chatting again.

Replies go through the Chat page's reply check (core.reply_check; `--no-reply-check` turns it
off); where it changed a reply, the method's own text (`draft`) is scored too.

Reported per method: accuracy over the questions, the count of each defect, the issue's bar set
(`defective`: voice, leak, meta or echo) as a count and a rate, the replies the check changed and
the bar defects of the methods' own texts (`draft_defective`), the off-turn replies (`off_turn`, and
their rate among replies that have a previous message), median sentences and tokens, replies over
three sentences, median reply time; the statement turns said back (`said_back`: restatement or
recital, and `said_back_rate`), `recital` over all replies, the statement turns answered with a bare
acknowledgement (`bare`, `bare_rate`: "That's great!"), `unsupported`, the never-told questions
declined (`declined`, `declined_rate`) and the told questions declined (`declined_told`), each
also for the method's own texts (`draft_...`); the summary's `examples` holds up to three replies
per method and defect.
"""

from __future__ import annotations

import argparse
import json
import statistics
from importlib import resources
from pathlib import Path

from core.benchmarks.runner import BenchContext, BenchResult
from core.chat import SPEED_KEYS, ScriptStep, read_script, speed_medians
from core.metrics import off_turn
from core.metrics.conversing import CHECKS, TurnCase, TurnFlags, summarise_turns, turn_flags
from core.metrics.reply_defects import DEFECTS, ReplyCase, ReplyScore, score_reply, summarise_scores, template_shingles
from core.metrics.report import grouped_median_ci
from core.reply_check import ReplyCheckSettings

DEFAULT_METHODS = "base,rag,sgmem,sgmem-h,mcts"
EXAMPLES = 3


def add_arguments(parser) -> None:
    parser.add_argument("--records", type=Path, default=None,
                        help="score recorded replies instead of chatting: a folder of `chat --script --out` transcripts "
                             "(METHOD.jsonl), or an earlier run's items.jsonl")
    parser.add_argument("--max-tokens", type=int, default=0, help="bound on each reply (0 = each method's own)")
    parser.add_argument("--reply-check", action=argparse.BooleanOptionalAction, default=True,
                        help="repair each reply as the Chat page does (core.reply_check); the method's own text is "
                             "scored too, as `draft_defective`")
    parser.add_argument("--off-turn-embedder", default=off_turn.EMBEDDER,
                        help="the embedder that judges off-turn replies (core.metrics.off_turn; `hashing` for tests)")


def split_dialogues(steps: list[ScriptStep]) -> list[list[ScriptStep]]:
    """The script's dialogues, each the list of its user turns."""
    out: list[list[ScriptStep]] = []
    for step in steps:
        if step.new_dialogue or not out:
            out.append([])
        if not step.new_dialogue:
            out[-1].append(step)
    return [d for d in out if d]


def prompt_templates() -> list[str]:
    """The text of every prompt of the package (core/llm/prompts): a reply that repeats six words of
    one in a row shows prompt text."""
    folder = resources.files("core.llm").joinpath("prompts")
    return [p.read_text(encoding="utf-8") for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".txt")]


def item_id(item: dict) -> str:
    return f"{item['method']}/{item['dialogue']}/{item['turn']}"


def scored_item(method: str, d: int, t: int, step: ScriptStep, earlier: list[str], reply: str, seconds: float,
                shingles, previous_reply: str = "", draft: str = "") -> tuple[dict, ReplyScore]:
    """The reply's item and score; `draft` (the method's text where the reply check changed it) is
    scored too, its bar defect as `draft_defective`."""
    score = score_reply(ReplyCase(reply, step.user, tuple(earlier), step.expect, previous_reply), shingles)
    written = score if not draft else score_reply(ReplyCase(draft, step.user, tuple(earlier), step.expect,
                                                            previous_reply), shingles)
    item = {"method": method, "dialogue": d, "turn": t, "user": step.user, "reply": reply, "seconds": seconds,
            **({"expected": list(step.expect), "correct": score.correct} if step.expect else {}),
            "voice": list(score.voice), "attribution": list(score.attribution), "leak": list(score.leak),
            "meta": list(score.meta), "refusal": score.refusal, "echo_chars": score.echo_chars, "echo": score.echo,
            "repeat": score.repeat,
            "sentences": score.sentences, "tokens": score.tokens, "defective": score.defective,
            "draft_defective": written.defective, **({"draft": draft} if draft else {})}
    return item, score


def _chat_replies(ctx: BenchContext, method: str, dialogues: list[list[ScriptStep]]):
    """(dialogue, turn, reply, seconds, draft, speed) of `method` chatting through the dialogues."""
    from core.chat import ChatSession

    check = ReplyCheckSettings() if ctx.options.get("reply_check", True) else None
    session = ChatSession(method, ctx.make_tools(), max_tokens=int(ctx.options.get("max_tokens") or 0), reply_check=check)
    for d, turns in enumerate(dialogues):
        if d:
            session.new_dialogue()
        for t, step in enumerate(turns):
            record = session.send(step.user)
            yield d, t, record["reply"], record["seconds"], record.get("draft", ""), speed_of(record)


def _recorded_replies(records: Path, method: str, dialogues: list[list[ScriptStep]]):
    """The same from a `chat --script --out` transcript (a folder with METHOD.jsonl), or from the
    items.jsonl of an earlier `bench replies` run (its rows of `method`), to score them again with
    the current checks; its user turns must be the script's."""
    path = records if records.is_file() else records / f"{method}.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"no transcript {path} for method {method!r}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("method", method) == method]
    if not rows:
        raise ValueError(f"{path} holds no replies of method {method!r}")
    for r in rows:
        d, t = r["dialogue"], r["turn"]
        if d >= len(dialogues):
            return
        if t >= len(dialogues[d]) or dialogues[d][t].user != r["user"]:
            raise ValueError(f"{path}: dialogue {d} turn {t} is not the script's turn (was it run on another file?)")
        yield d, t, r["reply"], r["seconds"], r.get("draft", ""), speed_of(r)


def run(ctx: BenchContext) -> BenchResult:
    dialogues = split_dialogues(read_script(ctx.data))
    if ctx.limit:
        dialogues = dialogues[: ctx.limit]
    shingles = template_shingles(prompt_templates())
    records = ctx.options.get("records")
    from core.resources import load_embedder

    judge = load_embedder(ctx.options.get("off_turn_embedder") or off_turn.EMBEDDER)
    results, timings, examples = {}, {}, {}
    for method in ctx.methods:
        scores: list[ReplyScore] = []
        seconds: list[float] = []
        speeds: list[dict] = []
        speed_dialogues: list[int] = []  # the dialogue of each speed record, for the intervals
        examples[method] = {k: [] for k in (*DEFECTS, "off_turn", *CHECKS)}
        replies = (_recorded_replies(Path(records), method, dialogues) if records
                   else _chat_replies(ctx, method, dialogues))
        previous: dict[int, str] = {}  # dialogue -> the method's last reply in it
        shown: dict[int, list[str]] = {}  # dialogue -> the replies shown so far, and the method's own texts
        own: dict[int, list[str]] = {}
        flags: list[TurnFlags] = []
        draft_flags: list[TurnFlags] = []
        never: list[bool] = []
        checked = draft_defective = 0  # replies the reply check changed; the method's own texts with a bar defect
        off, after_first = 0, 0  # off-turn replies; replies to a message that has a previous one
        with ctx.metered(method):
            for d, t, reply, secs, draft, speed in replies:
                earlier = [s.user for s in dialogues[d][:t]]
                item, score = scored_item(method, d, t, dialogues[d][t], earlier, reply, secs, shingles,
                                          previous.get(d, ""), draft)
                before = dialogues[d][t - 1].user if t else ""
                item["off_turn"] = off_turn.off_turn_flags(judge, [reply], [item["user"]], [before])[0]
                step = dialogues[d][t]
                case = TurnCase(reply, step.user, tuple(earlier), tuple(shown.get(d, ())), step.never_told,
                                bool(step.expect))
                flags.append(turn_flags(case))
                draft_flags.append(turn_flags(TurnCase(draft or reply, step.user, tuple(earlier), tuple(own.get(d, ())),
                                                       step.never_told, bool(step.expect))))
                never.append(step.never_told)
                shown.setdefault(d, []).append(reply)
                own.setdefault(d, []).append(draft or reply)
                item.update({"statement": flags[-1].statement, **({"never_told": True} if step.never_told else {}),
                             **flags[-1].as_item(), **draft_flags[-1].as_item("draft_")})
                item["invented"] = step.never_told and not flags[-1].declined
                item.update({k: v for k, v in speed.items() if v is not None})
                speeds.append(speed)
                speed_dialogues.append(d)
                off += item["off_turn"]
                after_first += bool(t)
                checked += bool(draft)
                draft_defective += item["draft_defective"]
                previous[d] = reply
                ctx.write_item(item)
                scores.append(score)
                seconds.append(secs)
                for k in (*DEFECTS, "off_turn", *CHECKS):
                    if item[k] and len(examples[method][k]) < EXAMPLES:
                        examples[method][k].append({"dialogue": d, "turn": t, "user": step_head(item["user"]),
                                                    "reply": item["reply"]})
        results[method] = {**summarise_scores(scores), "changed_by_check": checked, "draft_defective": draft_defective,
                           "off_turn": off, "off_turn_rate": round(off / after_first, 3) if after_first else None,
                           "median_s": round(statistics.median(seconds), 3) if seconds else None,
                           **reply_speed(speeds[1:], speed_dialogues[1:]),
                           **summarise_turns(flags, never), **summarise_turns(draft_flags, never, "draft_")}
        timings[method] = {"reply": seconds}
    settings = {"dialogues": len(dialogues), "source": "records" if records else "chat",
                "off_turn": {"embedder": judge.name, "margin": off_turn.MARGIN},
                "reply_check": bool(ctx.options.get("reply_check", True)) if not records else "as recorded"}
    return BenchResult(results, timings, settings, {"examples": examples})


def speed_of(record: dict) -> dict:
    """Where a reply's time went (core.chat's record: first words, prompt tokens computed and reused,
    prefill and decode seconds); None for what a recorded run did not keep."""
    return {k: record.get(k) for k in SPEED_KEYS}


def reply_speed(speeds: list[dict], dialogues: list[int]) -> dict:
    """The median of each speed figure over the replies given (the run's first left out by the
    caller: it waits for the model and the method's one-time loads, as `chat --script` counts), and
    its 95% interval resampling whole dialogues (`median_KEY_ci95`): how far another run of the same
    prompts may land, replies being sampled."""
    out = {f"median_{key}": value for key, value in speed_medians(speeds).items()}
    for key in SPEED_KEYS:
        pairs = [(s[key], d) for s, d in zip(speeds, dialogues, strict=True) if s.get(key) is not None]
        if len({d for _, d in pairs}) >= 2:
            lo, hi = grouped_median_ci([v for v, _ in pairs], [d for _, d in pairs])
            out[f"median_{key}_ci95"] = [round(lo, 3), round(hi, 3)]
    return out


def step_head(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
