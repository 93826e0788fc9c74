"""LongMemEval question answering per method: token F1 / EM offline, optional judge per question type.

Each instance is its own history (the oracle file: the evidence sessions only; the S file: ~50
sessions). Each method builds its memory of it; its context is cut to --budget tokens and the
reader answers with LongMemEval's own reading prompt (src/generation/run_generation.py: "I will
give you several history chats ..." with the sessions under their dates and the current date).
F1 and EM use LoCoMo's normalisation against the gold answer (abstention questions, `_abs`, are
reported apart and scored by the judge only); with --judge, the published per-type prompts of
src/evaluation/evaluate_qa.py. --limit N takes a sample stratified by question type.
Resumable and shardable (see core.benchmarks.qa_common): each question has its own history, so
shards split the memory building too.
"""

from __future__ import annotations

# shardable (core.benchmarks.runner.shardable): a row is one (question, method), a shard takes whole questions,
# and the figures come from the rows alone (qa_common.summarise)
from core.benchmarks.qa_common import (MERGE_EXTRA, TIMED_FIELDS, QAConversation, QAFormat,  # noqa: F401
                                       QAQuestion, add_qa_arguments, item_id, run_qa, stratified_sample, summarise)
from core.benchmarks.qa_sources import Piece
from core.benchmarks.runner import BenchResult
from core.data.longmemeval import load_longmemeval
from core.llm.prompts import render_prompt
from core.metrics.lexical import LOCOMO, token_f1
from core.metrics.qa import exact_match

DEFAULT_METHODS = "base,full,rag-r,bm25-r,hybrid-r,sgmem-r,sgmem-r+h"
RESUMABLE = True
ABSTENTION = "abstention"


def add_arguments(parser) -> None:
    from core.benchmarks import retrieval_common as ev

    ev.add_memory_arguments(parser.add_argument_group("memory"), preset="longmemeval")
    add_qa_arguments(parser, default_budget=1024)
    parser.add_argument("--types", default="", help="only these question types (comma-separated)")


def render(pieces: list[Piece], layout: str = "dialogue") -> str:
    """dialogue: LongMemEval's layout (numbered sessions with their dates, turns in order), memory
    lines after; ranked: reverse rank order (the most relevant last), each turn with its date."""
    if layout == "ranked":
        return "\n".join(f"[{p.turn.date}] {p.turn.role}: {p.turn.text}" if p.turn is not None else f"- {p.text}"
                         for p in reversed(pieces))
    turns = sorted((p.turn for p in pieces if p.turn is not None), key=lambda t: (t.session, _index(t.turn_id)))
    blocks, current, n = [], None, 0
    for t in turns:
        if t.session != current:
            current, n = t.session, n + 1
            blocks.append(f"\n### Session {n}:\nSession Date: {t.date}\nSession Content:")
        blocks.append(f"{t.role}: {t.text}")
    memory = [p.text for p in pieces if p.turn is None]
    if memory:
        blocks.append("\n### Memory:\n" + "\n".join(f"- {m}" for m in memory))
    return "\n".join(blocks).strip()


def _index(turn_id: str) -> int:
    tail = turn_id.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def build(conv: QAConversation, q: QAQuestion, context: str) -> str:
    return render_prompt("qa_longmemeval", context=context, date=q.date, question=q.question)


def score(answer: str, q: QAQuestion) -> dict | None:
    if q.abstention:
        return None  # "the information is not there" has no gold phrase to overlap with
    return {"em": exact_match(answer, q.gold), "f1": token_f1(answer, q.gold, LOCOMO)}


FORMAT = QAFormat(prompt="qa_longmemeval", build=build, render=render, score=score, max_tokens=64)


def conversations(path, types: str = "", limit: int | None = None, seed: int = 0) -> list[QAConversation]:
    data = load_longmemeval(path)
    if types:
        wanted = {t.strip() for t in types.split(",") if t.strip()}
        data = [d for d in data if d.question_type in wanted]
    questions = {d.question_id: QAQuestion(
        qid=d.question_id, conv_id=d.question_id, question=d.question, gold=d.answer,
        category=ABSTENTION if d.abstention else d.question_type, kind=d.question_type, abstention=d.abstention,
        date=d.question_date, evidence=tuple(d.evidence_turn_ids)) for d in data}
    sample = {q.qid for q in stratified_sample(list(questions.values()), limit, seed)}
    return [QAConversation(d.question_id, d.dialogue, [questions[d.question_id]]) for d in data if d.question_id in sample]


def run(ctx) -> BenchResult:
    convs = conversations(ctx.data, ctx.options.get("types", ""), ctx.limit, ctx.seed)
    return run_qa(ctx, convs, FORMAT, "longmemeval-qa")
