"""What `locomo-qa` and `longmemeval-qa` share: per conversation, each method builds its memory;
per question, each method's context is cut to one budget in tokens and the reader answers with
one shared prompt; answers are scored offline (EM, token F1) and, when asked, by a judge LLM
chosen apart from the reader.

Reader calls for one question go out as one `chat_batch` (the local backend batches them over its
slots, an endpoint gets them concurrently). Two methods whose contexts come out identical share
one call (temperature 0: the same prompt gives the same answer); the item says `reused_from`.

Resumable: rows already in items.jsonl with the same run key (reader, judge, budget, prompt,
data) are kept and their (method, question) pairs skipped; a row cut off by a kill is dropped.

Shardable (`bench NAME --shard K/N`, core.benchmarks.shards): an item is one (question, method) row, but the
shard is chosen by the question, so every method of a question is answered in one shard. The
figures come from the rows alone, in the planned order (`summarise`), so merged shards, a resumed
run and a single run give the same figures.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from core.benchmarks.qa_sources import FullSource, Piece, Source, make_sources, pack, retriever_names, shown

RUN_KEY_FIELDS = ("benchmark", "data", "reader", "judge", "budget", "prompt", "layout", "max_tokens", "stop", "embedder",
                  "window", "anchor_time")
ANCHOR_TIME = ("on", "off", "both")
AS_SAID = "/as-said"  # --anchor-time both: the method's rows without anchoring carry this suffix
LAYOUTS = ("dialogue", "ranked")
# What each run measures afresh (a rerun or a shard times it again), in the rows and in the results:
# left out when a merge is checked against the single run (core.benchmarks.merge.compare_runs).
TIMED_FIELDS = frozenset({"retrieve_s", "answer_s", "batch_s", "latency_s", "latency_p50_s", "latency_p95_s"})
# Extra summary fields that count a shard's work, not its rows: a merge adds them up or keeps the largest.
MERGE_EXTRA = {"resumed_items": "sum", "cpu_s": "sum", "answer_wall_s": "max"}
STOP = ["\n"]  # the answer is one short line; a model that goes on is cut there


@dataclass(frozen=True)
class QAQuestion:
    qid: str
    conv_id: str
    question: str
    gold: str  # "" = no gold answer (bad input: counted, not scored)
    category: str  # category or question type name
    kind: str = "locomo"  # judge prompt family: "locomo" or the LongMemEval question type
    abstention: bool = False
    date: str = ""
    evidence: tuple[str, ...] = ()
    category_id: int | None = None


@dataclass(frozen=True)
class View:
    """One method's rows: its source (its memory) shown to the reader with or without time anchoring."""

    source: Source
    anchor_time: bool
    name: str


def views_of(sources: Sequence[Source], anchor_time: str) -> list[View]:
    """--anchor-time on/off: one view per source; both: two, sharing the source's memory."""
    if anchor_time not in ANCHOR_TIME:
        raise ValueError(f"--anchor-time must be one of {', '.join(ANCHOR_TIME)}, not {anchor_time!r}")
    out = []
    for s in sources:
        if anchor_time in ("on", "both"):
            out.append(View(s, True, s.name))
        if anchor_time in ("off", "both"):
            out.append(View(s, False, s.name + AS_SAID if anchor_time == "both" else s.name))
    return out


@dataclass
class QAConversation:
    conv_id: str
    dialogue: object
    questions: list[QAQuestion]
    values: dict = field(default_factory=dict)  # prompt values shared by its questions (speakers)


@dataclass(frozen=True)
class QAFormat:
    """The benchmark's side: the shared reader prompt, how context is shown, how answers score."""

    prompt: str  # prompt name in core/llm/prompts
    build: Callable[[QAConversation, QAQuestion, str], str]  # (conversation, question, context) -> prompt
    render: Callable[[list[Piece], str], str]  # (kept pieces in rank order, layout) -> context text
    score: Callable[[str, QAQuestion], dict | None]  # answer -> {"em", "f1"}; None: not scored by F1
    max_tokens: int = 32


def add_qa_arguments(parser, default_budget: int) -> None:
    g = parser.add_argument_group("question answering")
    g.add_argument("--budget", type=int, default=default_budget,
                   help="context tokens every method gets (approximate LLM tokens; full ignores it)")
    g.add_argument("--window", type=int, default=0,
                   help="reader's window in tokens for `full` (0 = the embedded model's context; endpoints 16384)")
    g.add_argument("--reader", default="", help="reader LLM as a spec (local:default, local:large, openai:MODEL); "
                   "default the --backend/--model flags")
    g.add_argument("--judge", default="none", help="none | reader | local:MODEL | openai:MODEL (key from "
                   "WORKBENCH_JUDGE_API_KEY, else WORKBENCH_LLM_API_KEY); judged with the published prompts")
    g.add_argument("--judge-base-url", default="", help="endpoint of an openai: judge")
    g.add_argument("--judge-agreement", default="", help="JSON written by `python -m core judge-agreement --out`: "
                   "the judge's agreement with the hand labels, recorded with its accuracy (else marked unvalidated)")
    g.add_argument("--layout", choices=LAYOUTS, default="dialogue",
                   help="dialogue: kept turns in dialogue order under their session dates (the benchmark's own "
                   "layout); ranked: the most relevant last, next to the question, each turn with its date")
    g.add_argument("--anchor-time", choices=ANCHOR_TIME, default="on",
                   help="every method's turns and dated memories reach the reader with relative times resolved "
                   "('yesterday (7 May 2023)'): on (default), off (as said), or both (each method twice, the "
                   f"unanchored rows named METHOD{AS_SAID}; one memory build serves both)")
    g.add_argument("--fresh", action="store_true", help="start over: discard items.jsonl in --out instead of resuming")
    g.add_argument("--boot", type=int, default=2000, help="bootstrap resamples for the intervals")


def stratified_sample(questions: Sequence[QAQuestion], limit: int | None, seed: int) -> list[QAQuestion]:
    """`limit` questions spread over categories in proportion to their size (largest remainders,
    at least one per category while the limit allows), drawn at random with `seed`; then in file order."""
    import numpy as np

    if not limit or limit >= len(questions):
        return list(questions)
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(q.category, []).append(i)
    total = len(questions)
    quota = {c: limit * len(ix) / total for c, ix in groups.items()}
    take = {c: min(len(groups[c]), max(1, int(v))) for c, v in quota.items()}
    while sum(take.values()) > limit:  # more categories than the limit allows one each
        take[min((c for c in take if take[c] > 0), key=lambda c: (quota[c], c))] -= 1
    for c in sorted(quota, key=lambda c: (-(quota[c] - int(quota[c])), c)):
        if sum(take.values()) >= limit:
            break
        if take[c] < len(groups[c]):
            take[c] += 1
    rng = np.random.default_rng(seed)
    chosen = sorted(i for c, ix in groups.items() for i in rng.choice(ix, size=take[c], replace=False).tolist())
    return [questions[i] for i in chosen]


def run_key(values: dict) -> str:
    text = json.dumps({k: values.get(k) for k in RUN_KEY_FIELDS}, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def previous_rows(ctx, key: str) -> list[dict]:
    """Rows of an earlier run of this command in --out (resume); refuses rows of other settings."""
    rows = getattr(ctx, "previous_items", [])
    other = {r.get("run_key") for r in rows} - {key}
    if other:
        raise ValueError(f"{ctx.out}/items.jsonl holds rows of a run with other settings (run key {sorted(map(str, other))[0]}, "
                         f"this run {key}); pass --fresh to start over or choose another --out")
    return rows


def item_id(item: dict) -> str:
    """A row is one (question, method); its id names both (the shard is chosen by the question: plan)."""
    return f"{item['question_id']}::{item['method']}"


def plan(ctx, conversations: list[QAConversation], names: Sequence[str]) -> list[QAConversation]:
    """Declare every (question, method) row of the run in run order and keep the questions this run
    owns (all of them, or its shard's). A shard takes whole questions, so the reader call shared by
    identical contexts (`reused_from`) is the single run's; a LoCoMo conversation whose questions
    fall in several shards has its memory built in each of them (more work, the same figures)."""
    rows = [(q.qid, m) for c in conversations for q in c.questions for m in names]
    mine = ctx.plan([item_id({"question_id": q, "method": m}) for q, m in rows], keys=[q for q, _ in rows])
    owned = {q for q, m in rows if item_id({"question_id": q, "method": m}) in mine}
    kept = [QAConversation(c.conv_id, c.dialogue, [q for q in c.questions if q.qid in owned], c.values) for c in conversations]
    return [c for c in kept if c.questions]


def check_previous(ctx, rows: list[dict]) -> None:
    """Rows of a killed run must be rows this run plans and owns (not another shard's or --limit's)."""
    planned = set(ctx.planned or [])
    foreign = [item_id(r) for r in rows
               if item_id(r) not in planned or (ctx.shard is not None and not ctx.shard.owns(r["question_id"]))]
    if foreign:
        raise ValueError(f"{ctx.out}/items.jsonl holds {len(foreign)} rows this run does not plan (another --shard, "
                         f"--limit or selection?): {', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}; "
                         f"pass --fresh to start over or choose another --out")


def in_plan_order(ctx, rows: list[dict]) -> list[dict]:
    """The rows in the planned order: the bootstrap resamples by position, so a resumed run and
    merged shards must hand it the rows in the single run's order."""
    rank = {i: n for n, i in enumerate(ctx.planned)}
    return sorted(rows, key=lambda r: rank[item_id(r)])


def summarise(items: Sequence[dict], settings: dict) -> tuple[dict, dict]:
    """(results, extra) from the rows alone (a single run and bench-merge both come here): the QA
    report per method in `settings["views"]` (else `sources`) order, with the run's bootstrap resamples and seed."""
    from core.benchmarks import qa_report

    names = list(settings.get("views") or settings.get("sources") or dict.fromkeys(i["method"] for i in items))
    report = qa_report.summarise(items, names, boot=int(settings.get("boot", 2000)), seed=int(settings.get("seed", 0)))
    for m in names:
        row = report["results"].setdefault(m, {})
        if "judge_accuracy" in row:
            row["judge_status"] = settings.get("judge_status", "unvalidated")
    extra = {"questions": len({i["question_id"] for i in items}), "conversations": len({i["conv_id"] for i in items}),
             "paired": report["paired"], "bad_input": report["bad_input"]}
    return report["results"], extra


@dataclass
class Job:
    view: View
    question: QAQuestion
    item: dict
    prompt: str = ""


def answer_conversation(ctx, conv: QAConversation, views: Sequence[View], fmt: QAFormat, reader, judge,
                        budget: int, window: int, key: str, done: set, timings: dict, on_question=None,
                        layout: str = "dialogue") -> None:
    """Build every method's memory of `conv` (once per source, whatever its views), then answer its
    pending questions."""
    pending = [(q, [v for v in views if (v.name, q.qid) not in done]) for q in conv.questions]
    pending = [(q, vs) for q, vs in pending if vs]
    if not pending:
        return
    needed = {id(v.source) for _, vs in pending for v in vs}
    for s in dict.fromkeys(v.source for v in views):
        if id(s) in needed:
            t0 = time.perf_counter()
            with ctx.metered(s.name):
                s.prepare(conv.dialogue)
            timings.setdefault(s.name, {}).setdefault("build", []).append(time.perf_counter() - t0)
    for q, vs in pending:
        jobs = [_job(v, conv, q, fmt, reader, budget, window, key, timings, layout) for v in vs]
        _read(jobs, reader, fmt)
        _judge(jobs, judge)
        for job in jobs:
            ctx.write_item(job.item)
        if on_question:
            on_question()


def _job(view: View, conv: QAConversation, q: QAQuestion, fmt: QAFormat, reader, budget: int, window: int,
         key: str, timings: dict, layout: str = "dialogue") -> Job:
    source = view.source
    item = {"method": view.name, "question_id": q.qid, "conv_id": conv.conv_id, "category": q.category,
            "category_id": q.category_id, "question": q.question, "gold": q.gold, "run_key": key}
    if not q.gold.strip():
        return Job(view, q, {**item, "status": "no_gold"})
    t0 = time.perf_counter()
    pieces = shown(source.pieces(q.question, budget), view.anchor_time)  # anchoring counts in the budget
    retrieve_s = time.perf_counter() - t0
    timings.setdefault(view.name, {}).setdefault("retrieve", []).append(retrieve_s)
    if source.needs_budget:
        kept, cut = pack(pieces, budget)
    else:
        kept, cut = pieces, False
    context = fmt.render(kept, layout)
    prompt = fmt.build(conv, q, context)
    kept_turns = {p.source for p in kept if p.turn is not None}
    item.update({
        "context_tokens": sum(p.tokens for p in kept), "budget": budget if source.needs_budget else None,
        "memory_tokens": sum(p.tokens for p in pieces), "cut_to_budget": cut, "context": context,
        "sources": [p.source for p in kept], "retrieve_s": round(retrieve_s, 4),
        "evidence_recall": (len(kept_turns & set(q.evidence)) / len(set(q.evidence))) if q.evidence else None,
    })
    if isinstance(source, FullSource) and not _fits(reader, prompt, item["context_tokens"], window, fmt.max_tokens):
        item.update({"status": "no_fit", "context": "", "sources": []})
        return Job(view, q, item)
    return Job(view, q, {**item, "status": "ok"}, prompt)


def _fits(reader, prompt: str, approx: int, window: int, max_tokens: int) -> bool:
    """Whether the prompt and the answer fit the reader's window (counted by its tokenizer when
    the estimate is near the edge)."""
    room = window - max_tokens - 8
    if approx > 2 * room:
        return False
    from core.llm.base import Message

    return reader.count_prompt_tokens([Message("user", prompt)]) <= room


def _read(jobs: list[Job], reader, fmt: QAFormat) -> None:
    """One batched reader call for the distinct prompts of a question; answers scored offline."""
    todo = [j for j in jobs if j.item["status"] == "ok"]
    first: dict[str, Job] = {}
    for j in todo:
        first.setdefault(j.prompt, j)
    unique = list(first.values())
    t0 = time.perf_counter()
    replies = reader.chat_batch([j.prompt for j in unique], temperature=0.0, max_tokens=fmt.max_tokens, stop=STOP) if unique else []
    wall = time.perf_counter() - t0
    by_prompt = {j.prompt: r for j, r in zip(unique, replies)}
    for j in todo:
        r, owner = by_prompt[j.prompt], first[j.prompt]
        reused = owner is not j
        answer = r.text.strip()
        j.item.update({"answer": answer, "answer_s": round(r.seconds, 4), "batch_s": round(wall, 4),
                       "latency_s": round(j.item["retrieve_s"] + r.seconds, 4),
                       "reader_calls": 0 if reused else 1, "reused_from": owner.view.name if reused else None,
                       "prompt_tokens": 0 if reused else r.prompt_tokens,
                       "completion_tokens": 0 if reused else r.completion_tokens,
                       "prompt_truncated": bool(r.truncated)})
        scores = fmt.score(answer, j.question)
        j.item.update(scores or {"em": None, "f1": None})


def _judge(jobs: list[Job], judge) -> None:
    if judge is None:
        return
    from core.metrics.qa_judge import JudgeCase

    todo = [j for j in jobs if j.item["status"] == "ok"]
    cases = [JudgeCase(j.question.question, j.question.gold, j.item["answer"], j.question.kind, j.question.abstention)
             for j in todo]
    for j, (verdict, raw) in zip(todo, judge.judge(cases)):
        j.item.update({"judge": verdict, "judge_reply": raw[:400]})


def run_qa(ctx, conversations: list[QAConversation], fmt: QAFormat, benchmark: str):
    """The whole benchmark over `conversations` (questions already sampled); returns BenchResult."""
    from tqdm import tqdm

    from core.benchmarks import retrieval_common as ev
    from core.benchmarks.runner import BenchResult
    from core.methods import Toolkit
    from core.metrics.qa_judge import QAJudge

    budget = int(ctx.options.get("budget") or 0)
    if budget < 1:
        raise ValueError(f"--budget must be a positive number of tokens, got {budget}")
    ctx.options["qa"] = True  # retrieval_common.setup: load the LLM
    s = ev.setup(ctx, retriever_names(ctx.methods))
    reader = s.llm
    judge_llm = ctx.make_judge(reader) if getattr(ctx, "make_judge", None) else None
    judge = QAJudge(judge_llm) if judge_llm is not None else None
    tools = Toolkit(llm=reader, embedder=s.retriever_context.embedder, strong=s.strong)
    sources, skipped = make_sources(ctx.methods, s.retriever_context, lambda: tools)
    anchor_time = ctx.options.get("anchor_time") or "on"
    views = views_of(sources, anchor_time)
    window = int(ctx.options.get("window") or 0) or int(getattr(getattr(reader, "options", None), "n_ctx", 0) or 16384)
    settings = {"benchmark": benchmark, "data": str(ctx.data), "reader": reader.name,
                "judge": judge.name if judge else "none", "budget": budget, "prompt": fmt.prompt,
                "layout": ctx.options.get("layout") or "dialogue",
                "max_tokens": fmt.max_tokens, "stop": STOP, "embedder": s.embedder_name, "window": window,
                "anchor_time": anchor_time}
    key = run_key(settings)
    conversations = plan(ctx, conversations, [v.name for v in views])
    previous = previous_rows(ctx, key)
    check_previous(ctx, previous)
    done = {(r["method"], r["question_id"]) for r in previous}
    timings: dict = {}
    total = sum(len(c.questions) for c in conversations)
    bar = tqdm(total=total, desc=benchmark, disable=not ctx.progress)
    bar.update(len({r["question_id"] for r in previous if all((v.name, r["question_id"]) in done for v in views)}))
    t0 = time.perf_counter()
    for conv in conversations:
        answer_conversation(ctx, conv, views, fmt, reader, judge, budget, window, key, done, timings,
                            on_question=lambda: bar.update(1), layout=settings["layout"])
    bar.close()
    settings = {**settings, "run_key": key, "reader_settings": ctx.options.get("reader_describe", reader.name),
                "sources": {x.name: x.settings() for x in sources}, "views": [v.name for v in views],
                "skipped_methods": skipped,
                "judge_status": judge_status(judge, ctx.options.get("judge_agreement", "")),
                "scoring": "LoCoMo normalisation (task_eval/evaluation.py)"}
    # the settings as the summary (and so bench-merge) records them; memory building's LLM work is
    # the summary's `cost` per method (ctx.metered), not a figure of the rows
    results, extra = summarise(in_plan_order(ctx, previous + ctx.written_items), {"seed": ctx.seed, **ctx.options, **settings})
    return BenchResult(results=results, timings=timings, settings=settings,
                       extra={**extra, "resumed_items": len(previous), "answer_wall_s": round(time.perf_counter() - t0, 3),
                              "cpu_s": _cpu_seconds()})


def judge_status(judge, agreement_file: str) -> str:
    """"unvalidated" unless an agreement file of this very judge is given; then its figures."""
    if judge is None:
        return "no judge"
    if not agreement_file:
        return "unvalidated"
    from pathlib import Path

    data = json.loads(Path(agreement_file).read_text())
    found = data.get("judge") or {}
    if found.get("name") != judge.name:
        return f"unvalidated (the agreement file measured {found.get('name', 'no judge')!r}, not {judge.name!r})"
    status = (f"agreement with {found['judged']} hand-labelled answers: accuracy {found['accuracy']:.3f}, "
              f"kappa {found['kappa']:.3f}")
    # Landis & Koch: kappa <= 0.40 is at most fair agreement; such a judge's accuracy says little
    return status if found["kappa"] > 0.40 else status + " (at most fair agreement: do not compare methods by this judge)"


def _cpu_seconds() -> float:
    """CPU seconds of this process so far (all threads, the in-process model's included): a
    load-independent measure of the run's work on a shared machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 1)
