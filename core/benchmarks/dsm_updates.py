"""D-SMART memory on LongMemEval knowledge updates: latest value kept, stale value pruned, time per turn.

For every `knowledge-update` question (abstention `_abs` questions have no update to check and are
skipped), the memory observes the question's sessions in date order, one maintenance round per
(user turn, reply). Then the final graph is checked:

The check itself (every helper below) is core/benchmarks/dsm_check.py, frozen; in short:

- latest_kept: the answer (the value after the update) is in the graph, on a fact the question is
  about (its subject, relation or counted kind shares a content word with the question). Numeric
  answers ("25", "five", "3 months") must appear there as a typed number, clock times ("6:00 pm")
  as that xsd:time, times taken ("25 minutes and 50 seconds") as that xsd:dayTimeDuration; text answers must have all their content words among the objects of those
  facts.
- stale: the value before the update, read from the earliest evidence turn (the turn flagged
  `has_answer` in the earliest session): the number in its sentence closest to the question that
  differs from the answer. Found only for numeric answers with two dated evidence turns; the other
  questions count for latest_kept only.
- stale_removed: the stale number is on no question fact any more; stale_pruned: a pruned triple in
  the history carried it (it was extracted, then removed as a conflict).
- update_accuracy (questions with a stale value): latest_kept and stale_removed.
- beside them: latest_kept_checkable, latest_kept over the questions whose answer is a current
  value the check can find (not yes/no or a sentence, not a question about the value before the
  update), and earlier_in_history: for the questions asking for the value before the update, it is
  on a triple pruned in the history.

- answer_pruned: a current-value answer was extracted, pruned as a conflict, and is not in the
  graph. With `--question-type single-session-user` (nothing is updated there) this is the
  false-prune rate of the conflict stage.

Timings: `maintenance` per round (statement + extraction + conflict detection + merge + check) and
each stage. Options: --statements text|llm|auto|fallback, --extractor auto|llm|spacy|union,
--llm-conflicts auto|on|off, --llm-updates on|off, --no-reasoner.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from core.benchmarks import dsm_check as check
from core.benchmarks.runner import BenchContext, BenchResult
from core.methods.dsmart.config import DSMConfig

DEFAULT_METHODS = "dsm"


def add_arguments(parser) -> None:
    parser.add_argument("--statements", choices=["auto", "llm", "text", "fallback"], default="text",
                        help="statement generation: the round's text (default, no LLM), the LLM prompt, auto, or "
                             "fallback (the text, and the LLM's statement where the rules kept no fact of the user's turn)")
    parser.add_argument("--extractor", choices=["auto", "llm", "spacy", "union"], default="auto",
                        help="fragment extraction: spaCy rules (auto with a weak LLM), the LLM's JSON triples, or both")
    parser.add_argument("--llm-conflicts", choices=["auto", "on", "off"], default="off",
                        help="stage (b) LLM conflict detection (default off: symbolic only)")
    parser.add_argument("--llm-updates", choices=["on", "off"], default="off",
                        help="the LLM on candidate updates only: rounds where the symbolic path suspects an update "
                             "it could not type (default off)")
    parser.add_argument("--no-reasoner", action="store_true", help="skip the owlrl closure checks")
    parser.add_argument("--assistant-sentences", type=int, default=3)
    parser.add_argument("--slot-threshold", type=float, default=None,
                        help="embedding cosine for slot conflicts (default: DSMConfig's); a negative value: "
                             "vocabulary match only, no embedder")
    parser.add_argument("--question-type", default="knowledge-update",
                        help="LongMemEval question type to read (default knowledge-update). On a type where nothing "
                             "is updated (single-session-user) answer_pruned counts false prunes: a true answer removed")
    parser.add_argument("--explain", action="store_true",
                        help="also write DIR/explain.md and DIR/explain.jsonl: per question the update sentence, "
                             "its triples, the conflicts found and the miss cause")


def rounds(dialogue):
    """(question, answer) pairs in order; a user turn with no reply gets an empty answer."""
    for group in dialogue.rounds():
        users = " ".join(t.text for t in group if t.role == "user")
        replies = " ".join(t.text for t in group if t.role != "user")
        yield users, replies


def run(ctx: BenchContext) -> BenchResult:
    from core.benchmarks import dsm_explain
    from core.data.longmemeval import load_longmemeval
    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.resources import load_embedder, load_spacy

    opts = ctx.options
    config = replace(DSMConfig(), statements=opts.get("statements", "text"), llm_conflicts=opts.get("llm_conflicts", "off"),
                     extractor=opts.get("extractor", "auto"), llm_updates=opts.get("llm_updates", "off"),
                     reasoner=not opts.get("no_reasoner", False), assistant_sentences=opts.get("assistant_sentences", 3),
                     background=False)
    threshold = opts.get("slot_threshold")
    if threshold is not None:
        config = replace(config, slot_threshold=None if threshold < 0 else threshold)
    embedder = load_embedder() if config.slot_threshold is not None else None
    needs_llm = config.statements != "text" or config.llm_conflicts != "off" or config.extractor in ("llm", "union") \
        or config.llm_updates == "on"
    tools = ctx.make_tools() if needs_llm and ctx.make_tools is not None else None
    nlp = load_spacy()
    question_type = opts.get("question_type") or "knowledge-update"
    instances = [i for i in load_longmemeval(ctx.data) if i.question_type == question_type and not i.abstention]
    if not instances:
        raise ValueError(f"no {question_type!r} questions (abstention ones skipped) in {ctx.data}")
    if ctx.limit:
        instances = instances[: ctx.limit]
    stages: dict[str, list[float]] = {}
    explanations: list[dict] = []
    tallies = {"latest": 0, "with_stale": 0, "stale_removed": 0, "stale_pruned": 0, "updated": 0, "rounds": 0, "pruned": 0,
               "answer_pruned": 0}
    kinds: Counter = Counter()
    kept_by_kind: Counter = Counter()
    for instance in _progress(instances, ctx):
        memory = DynamicStructuredMemory(tools.llm if tools else None, strong=bool(tools and tools.strong),
                                         config=config, nlp=nlp, embedder=embedder)
        with ctx.metered("dsm") as meter:
            for index, (q, a) in enumerate(rounds(instance.dialogue)):
                record = memory.observe_round(q, a, index)
                for stage, seconds in record.timings.items():
                    stages.setdefault(stage, []).append(seconds)
                if any(n.startswith("candidate update") for n in record.notes):  # --llm-updates: the rounds that called it
                    stages.setdefault("maintenance_llm_rounds", []).append(record.timings.get("maintenance", 0.0))
        item = check.evaluate(instance, memory, nlp)
        item.update(meter.total().as_dict())
        if opts.get("explain"):
            explanations.append(dsm_explain.explain(instance, memory, item, nlp))
            item["cause"] = explanations[-1]["cause"]
        ctx.write_item(item)
        tallies["latest"] += item["latest_kept"]
        kinds[item["answer_kind"]] += 1
        kept_by_kind[item["answer_kind"]] += item["latest_kept"] if item["answer_kind"] != "earlier" else item["earlier_in_history"]
        tallies["rounds"] += item["rounds"]
        tallies["pruned"] += item["pruned_triples"]
        tallies["answer_pruned"] += item["answer_pruned"]
        if item["stale"] is not None:
            tallies["with_stale"] += 1
            tallies["stale_removed"] += item["stale_removed"]
            tallies["stale_pruned"] += item["stale_pruned"]
            tallies["updated"] += item["latest_kept"] and item["stale_removed"]
    n, k = len(instances), max(1, tallies["with_stale"])
    results = {"dsm": {
        "update_accuracy": tallies["updated"] / k if tallies["with_stale"] else float("nan"),
        "latest_kept": tallies["latest"] / max(1, n),
        "stale_removed": tallies["stale_removed"] / k if tallies["with_stale"] else float("nan"),
        "stale_pruned": tallies["stale_pruned"] / k if tallies["with_stale"] else float("nan"),
        "questions": n,
        "questions_with_stale": tallies["with_stale"],
        "rounds": tallies["rounds"],
        "pruned_per_round": tallies["pruned"] / max(1, tallies["rounds"]),
        # the current answer was extracted, then pruned as a conflict, and is not in the graph: a
        # true value removed (for questions asking for the earlier value, pruning it is right)
        "answer_pruned": tallies["answer_pruned"] / max(1, n),
        **per_round(ctx.cost.get("dsm", {}), tallies["rounds"]),
        # beside the headline figures, never instead of them: latest_kept over the questions whose
        # answer is a current value the check can find, and, for questions asking for the value
        # before the update, whether that value is in the history of pruned triples
        "latest_kept_checkable": kept_by_kind["latest"] / kinds["latest"] if kinds["latest"] else float("nan"),
        "questions_checkable": kinds["latest"],
        "earlier_in_history": kept_by_kind["earlier"] / kinds["earlier"] if kinds["earlier"] else float("nan"),
        "questions_asking_earlier": kinds["earlier"],
    }}
    if explanations:
        write_explanations(ctx.out, explanations)
        results["dsm"]["causes"] = dict(Counter(e["cause"] for e in explanations))
    settings = {"statements": config.statements, "extractor": config.extractor, "llm_conflicts": config.llm_conflicts,
                "reasoner": config.reasoner,
                "slot_threshold": config.slot_threshold, "embedder": embedder.name if embedder is not None else "none",
                "assistant_sentences": config.assistant_sentences, "llm": tools.llm.name if tools else "none",
                "question_type": f"{question_type} (abstention questions skipped)", "unit": "round = user turn + reply"}
    return BenchResult(results=results, timings={"dsm": stages}, settings=settings)


def per_round(stages: dict[str, dict[str, int]], rounds: int) -> dict[str, float]:
    """LLM calls and tokens of maintenance per round (the cost of a round)."""
    from core.llm.cost import totals

    return {f"{key}_per_round": value / max(1, rounds) for key, value in totals(stages).items()}


def write_explanations(out, explanations: list[dict]) -> None:
    import json

    from core.benchmarks import dsm_explain

    (out / "explain.md").write_text(dsm_explain.report(explanations), encoding="utf-8")
    with (out / "explain.jsonl").open("w", encoding="utf-8") as f:
        for e in explanations:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")


def _progress(items, ctx: BenchContext):
    if not ctx.progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="dsm-updates", unit="question")
