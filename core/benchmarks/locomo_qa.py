"""LoCoMo question answering per method: EM and token F1 (LoCoMo's scoring), optional J judge.

Each method builds its memory of a conversation; for each question (categories 1-4; category 5,
adversarial, is left out as in the memory papers) its context is cut to --budget tokens and the
reader answers with LoCoMo's own QA prompt (task_eval/gpt_utils.py: the conversation header, the
context under session dates, "write an answer in the form of a short phrase ..."; temporal
questions add "Use DATE of CONVERSATION to answer with an approximate date."). Scores: EM and F1
with LoCoMo's normalisation, per category; with --judge, Mem0's LoCoMo "J" prompt. --limit N takes
a sample stratified by category. Resumable and shardable (see core.benchmarks.qa_common).
"""

from __future__ import annotations

# shardable (core.benchmarks.runner.shardable): a row is one (question, method), a shard takes whole questions,
# and the figures come from the rows alone (qa_common.summarise)
from core.benchmarks.qa_common import (MERGE_EXTRA, TIMED_FIELDS, QAConversation, QAFormat,  # noqa: F401
                                       QAQuestion, add_qa_arguments, item_id, run_qa, stratified_sample, summarise)
from core.benchmarks.qa_sources import Piece
from core.benchmarks.runner import BenchResult
from core.data.locomo import load_locomo
from core.llm.prompts import render_prompt
from core.metrics.qa import locomo_scores

# hybrid-t, bm25-t, sgmem-t, dsm, dsmart, mcts-t by --methods: each reader call costs ~3 s on 2
# cores, and the default set must answer 150 questions in 40 minutes on a machine that may be a
# third slower than ours, with no embedding cache (four retrievers took 29.4 min here, cache warm)
DEFAULT_METHODS = "base,full,rag-t,sgmem-t+h"
RESUMABLE = True
TEMPORAL_HINT = " Use DATE of CONVERSATION to answer with an approximate date."


def add_arguments(parser) -> None:
    from core.benchmarks import retrieval_common as ev

    ev.add_memory_arguments(parser.add_argument_group("memory"), preset="locomo")
    add_qa_arguments(parser, default_budget=256)
    parser.add_argument("--conversations", default="", help="only these conversations (comma-separated sample ids)")


def render(pieces: list[Piece], layout: str = "dialogue") -> str:
    """dialogue: LoCoMo's layout (session date, then `Name said, "..."`), turns in dialogue order,
    memory lines after; ranked: the pieces in reverse rank order (the most relevant last, next to
    the question), each turn with its date."""
    if layout == "ranked":
        return "\n".join(f'[{p.turn.date}] {p.turn.speaker} said, "{p.turn.text}"' if p.turn is not None else f"- {p.text}"
                         for p in reversed(pieces))
    turns = sorted((p.turn for p in pieces if p.turn is not None), key=_order)
    blocks, current = [], None
    for t in turns:
        if t.session != current:
            current = t.session
            blocks.append(f"DATE: {t.date}")  # LoCoMo's header without its "CONVERSATION:" line: tokens are the budget
        blocks.append(f'{t.speaker} said, "{t.text}"')
    memory = [p.text for p in pieces if p.turn is None]
    if memory:
        blocks.append("MEMORY:\n" + "\n".join(f"- {m}" for m in memory))
    return "\n".join(blocks)


def _order(turn) -> tuple[int, int]:
    """D<session>:<n> in dialogue order (ids are per session)."""
    _, _, n = turn.turn_id.partition(":")
    return turn.session, int(n) if n.isdigit() else 0


def build(conv: QAConversation, q: QAQuestion, context: str) -> str:
    question = q.question + (TEMPORAL_HINT if q.category_id == 2 else "")
    return render_prompt("qa_locomo", speaker_a=conv.values["speaker_a"], speaker_b=conv.values["speaker_b"],
                         context=context, question=question)


def score(answer: str, q: QAQuestion) -> dict:
    return locomo_scores(answer, q.gold, int(q.category_id))


FORMAT = QAFormat(prompt="qa_locomo", build=build, render=render, score=score, max_tokens=32)


def conversations(path, wanted: str = "", limit: int | None = None, seed: int = 0) -> list[QAConversation]:
    data = load_locomo(path)
    if wanted:
        chosen = [c.strip() for c in wanted.split(",") if c.strip()]
        unknown = sorted(set(chosen) - {c.sample_id for c in data})
        if unknown:
            raise ValueError(f"no conversation {', '.join(unknown)} in {path}")
        data = [c for c in data if c.sample_id in chosen]
    questions = [QAQuestion(qid=q.qid, conv_id=c.sample_id, question=q.question, gold=str(q.answer or ""),
                            category=q.category_name, kind="locomo", date=c.dialogue.sessions[-1].date,
                            evidence=tuple(q.evidence), category_id=q.category)
                 for c in data for q in c.questions if q.category != 5]
    sample = stratified_sample(questions, limit, seed)
    out = []
    for c in data:
        mine = [q for q in sample if q.conv_id == c.sample_id]
        if mine:
            out.append(QAConversation(c.sample_id, c.dialogue, mine, {"speaker_a": c.speaker_a, "speaker_b": c.speaker_b}))
    return out


def run(ctx) -> BenchResult:
    convs = conversations(ctx.data, ctx.options.get("conversations", ""), ctx.limit, ctx.seed)
    return run_qa(ctx, convs, FORMAT, "locomo-qa")
