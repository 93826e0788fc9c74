"""MT-Bench-101: NLI consistency (cs, der) and lexical scores (f1, bleu, rouge_l) per method.

Each method answers every user turn of each dialogue, with one fresh instance (fresh memory) per
dialogue. `--mode golden`: the history is the benchmark's own `bot` turns (MT-Bench-101's official
golden context); `--mode autoregressive`: the history is the method's own earlier answers (as in
the D-SMART paper). Method `golden` is the benchmark's `bot` answers themselves (the reference
row; lexical scores against itself would be 1 and are left out). Each reply is scored against
the context it answered (CS, DER) and against the golden answer of its turn (F1, BLEU, ROUGE-L).
Turns the official protocol does not score (first turns of FR, CR, AR, SA, SC, CM) are written
with `scored: false` and left out of aggregates unless `--turns all`.

Any method in core.methods.METHODS works by name; `--limit N` picks N dialogues round-robin over
the 13 tasks, so a small limit still covers them all. `--reuse DIR` rescores the answers of an
earlier run (same data and mode) instead of generating them again, e.g. with a newer NLI model.

Shardable (`bench mtbench --shard K/N`, core.benchmarks.shards): an item is one (method, dialogue, turn) row and
the shard is chosen by the dialogue, so a shard scores whole dialogues (one NLI pass each) for every
method; the figures come from the rows alone, in the planned order (`summarise`). Python's and
torch's random state is seeded per (method, dialogue) from --seed, not once per run, so a shard
draws what the single run draws there; an LLM's own sampling at temperature > 0 still varies from
run to run (figures then match as two single runs match each other).
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from core.benchmarks.runner import BenchContext, BenchResult
from core.config import GenerationSettings
from core.data.mtbench import NEED_REF_TASKS, MTBenchDialogue, load_mtbench, stratified
from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.metrics.base import TurnSample
from core.metrics.consistency import ConsistencyScore, EntailmentRate, TurnNLI
from core.metrics.lexical import LEXICAL_METRICS
from core.metrics.report import METRIC_KEYS, per_task, per_turn
from core.metrics.report import summarise as summarise_rows

DEFAULT_METHODS = "golden,base"
GOLDEN = "golden"
MODES = ("golden", "autoregressive")


def add_arguments(parser) -> None:
    from core.benchmarks.latency import add_tree_argument

    add_tree_argument(parser)
    parser.add_argument("--mode", choices=MODES, default="golden", help="history: the benchmark's bot turns, or the method's own")
    parser.add_argument("--turns", choices=("official", "all"), default="official",
                        help="official: skip first turns of FR, CR, AR, SA, SC, CM in aggregates")
    parser.add_argument("--nli-model", default="", help="NLI model id or folder (default: assets/models/nli-minilm-l6)")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cap generated tokens for methods whose config has `generation` settings")
    parser.add_argument("--judge", action="store_true", help="add the LLM-judge quality score (needs a strong endpoint)")
    parser.add_argument("--factscore", action="store_true",
                        help="add FactScore and NEIP per reply (atomic facts verified against the dialogue history)")
    parser.add_argument("--factscore-verifier", choices=("nli", "llm", "judge"), default="nli",
                        help="verifier of --factscore (nli = the offline classifier)")
    parser.add_argument("--reuse", default="",
                        help="folder of an earlier mtbench run: rescore its methods' answers instead of generating them")


@dataclass
class Answer:
    text: str
    context: tuple[Turn, ...]  # what the answer replied to, the user message last
    seconds: float = 0.0
    llm_calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)


def method_config(name: str, max_tokens: int | None, tree: dict | None = None):
    """The method's default config, with generation capped at `max_tokens` where it has one and
    the reasoning tree's settings overridden by `tree` (rt, dsmart)."""
    from core.methods import method_class

    config = method_class(name).default_config()
    generation = getattr(config, "generation", None)
    if max_tokens and isinstance(generation, GenerationSettings):
        config = replace(config, generation=replace(generation, max_tokens=max_tokens))
    if tree and hasattr(config, "tree"):
        config = replace(config, tree=replace(config.tree, **tree))
    return config


def _tree_settings(methods, max_tokens, tree) -> dict:
    """The reasoning tree's settings where rt or dsmart ran (the budget and policy decide its cost)."""
    tree_method = next((m for m in methods if m in ("dsmart", "rt")), None)
    if tree_method is None:
        return {}
    return {"tree": asdict(method_config(tree_method, max_tokens, tree).tree)}


def answer_dialogue(method_name: str, d: MTBenchDialogue, tools, mode: str, max_tokens: int | None,
                    on_turn: Callable[[], None] = lambda: None, reused: dict | None = None,
                    tree: dict | None = None) -> list[Answer]:
    """One answer per round, each with the context it saw; `on_turn` after each answer. With
    `reused` ((method, dialogue id, turn) -> earlier item), answers come from an earlier run."""
    dialogue = Dialogue(id=str(d.id))
    method = None
    if method_name != GOLDEN and reused is None:
        from core.methods import create_method

        method = create_method(method_name, tools, method_config(method_name, max_tokens, tree))
    answers = []
    for i, rnd in enumerate(d.rounds):
        context = tuple(dialogue.turns()) + (Turn(USER, rnd.user),)
        if method_name == GOLDEN:
            answers.append(Answer(rnd.bot, context))
        elif reused is not None:
            answers.append(_reused_answer(reused, method_name, d.id, i + 1, context))
        else:
            t0 = time.perf_counter()
            calls0 = tools.llm.calls
            method.sync(dialogue)
            reply = method.respond(dialogue, rnd.user)
            answers.append(Answer(reply.text, context, time.perf_counter() - t0, tools.llm.calls - calls0, dict(reply.timings)))
        on_turn()
        shown = rnd.bot if mode == "golden" or method_name == GOLDEN else answers[-1].text
        dialogue.add(Turn(USER, rnd.user, f"{d.id}:{i}:u"))
        dialogue.add(Turn(ASSISTANT, shown, f"{d.id}:{i}:a"))
    return answers


def _reused_answer(reused: dict, method: str, dialogue_id: int, turn: int, context) -> Answer:
    row = reused.get((method, dialogue_id, turn))
    if row is None:
        raise ValueError(f"the reused run has no answer of {method!r} for dialogue {dialogue_id}, turn {turn}")
    return Answer(row["response"], context, float(row.get("seconds", 0.0)), int(row.get("llm_calls", 0)))


def load_reused(path: str, mode: str) -> dict[str, dict]:
    """method -> {(method, dialogue id, turn): item} from an earlier run's items.jsonl (or its
    folder), so a new NLI model can rescore the same answers without generating them again. An
    unfinished run works too: with the same --limit order, its first dialogues are the ones done."""
    import json
    from pathlib import Path

    items_path = Path(path) if Path(path).is_file() else Path(path) / "items.jsonl"
    items = [json.loads(line) for line in items_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    modes = {item.get("mode") for item in items}
    if modes - {mode}:
        raise ValueError(f"{items_path} holds answers of mode {sorted(map(str, modes))}, not {mode!r}")
    out: dict[str, dict] = {}
    for item in items:
        if item["method"] != GOLDEN:
            out.setdefault(item["method"], {})[(item["method"], int(item["dialogue_id"]), int(item["turn"]))] = item
    return out


class Scorer:
    """CS and DER from one NLI pass per dialogue, lexical scores, optionally the judge."""

    def __init__(self, nli_model: str, judge=None, facts=None) -> None:
        from core.metrics.nli import load_nli

        self.facts = facts  # (verifier, splitter) for --factscore, else None
        self.nli_scorer = load_nli(nli_model)
        nli = TurnNLI(self.nli_scorer)
        self.cs, self.der = ConsistencyScore(nli), EntailmentRate(nli)
        self.nli = nli
        self.lexical = [m() for m in LEXICAL_METRICS]
        self.judge = judge

    def score(self, d: MTBenchDialogue, answers: list[Answer], lexical: bool) -> list[dict]:
        samples = [TurnSample(a.context, a.text, r.bot) for a, r in zip(answers, d.rounds)]
        judgements = self.nli.judgements(samples)
        cs, der = self.cs.turn_values(samples), self.der.turn_values(samples)
        rows = [
            {"cs": c, "der": e, "nli_label": j.label, **j.probs.as_dict(), "nli_chunk": j.chunk_index,
             "nli_chunks": j.n_chunks, "hypothesis_truncated": j.hypothesis_truncated}
            for c, e, j in zip(cs, der, judgements)
        ]
        for metric in self.lexical:
            for row, value in zip(rows, metric.turn_values(samples) if lexical else [None] * len(samples)):
                row[metric.name] = value
        if self.facts is not None:
            from core.metrics.factscore import score_response

            verifier, splitter = self.facts
            for row, a in zip(rows, answers):
                history = [(t.role, t.text) for t in a.context]
                scored = score_response(a.text, history, verifier, splitter).as_dict()
                row.update({"factscore": scored["factscore"], "neip": scored["neip"], "n_facts": scored["n_facts"],
                            "factscore_facts": scored["facts"]})
        if self.judge is not None:
            self.judge.with_reference = d.task in NEED_REF_TASKS
            self.judge.task = d.task_name
            for row, value in zip(rows, self.judge.turn_values(samples)):
                row["quality"] = value
        return rows


def _make_judge(ctx: BenchContext, tools):
    if not ctx.options.get("judge"):
        return None
    from core.metrics.judge import QualityJudge

    return QualityJudge(tools.llm, strong=tools.strong)


def _make_facts(ctx: BenchContext, tools):
    """(verifier, splitter) for --factscore: the rule splitter, or the paper's splitting prompt on a
    strong endpoint."""
    if not ctx.options.get("factscore"):
        return None
    from core.metrics.fact_verifiers import make_verifier
    from core.metrics.factscore import default_splitter

    name = ctx.options.get("factscore_verifier", "nli")
    if name == "nli":
        verifier = make_verifier("nli")
    else:
        tools = tools or (ctx.make_tools() if ctx.make_tools else None)
        if tools is None:
            raise ValueError(f"--factscore-verifier {name} needs an LLM")
        from core.llm.openai_backend import OpenAICompatibleLLM
        from core.llm.queued import backend_of

        judge = tools.llm if isinstance(backend_of(tools.llm), OpenAICompatibleLLM) else None
        verifier = make_verifier(name, llm=tools.llm, strong=tools.strong, judge_llm=judge)
    return verifier, default_splitter(tools.llm if tools else None, bool(tools and tools.strong))


def run(ctx: BenchContext) -> BenchResult:
    from tqdm import tqdm

    mode, all_turns = ctx.options.get("mode", "golden"), ctx.options.get("turns", "official") == "all"
    max_tokens = ctx.options.get("max_tokens")
    planned = stratified(load_mtbench(ctx.data), ctx.limit)
    dialogues = _plan(ctx, planned)
    reused = load_reused(ctx.options["reuse"], mode) if ctx.options.get("reuse") else {}
    needs_llm = any(m != GOLDEN and m not in reused for m in ctx.methods) or ctx.options.get("judge")
    tools = ctx.make_tools() if needs_llm and ctx.make_tools else None
    scorer = Scorer(ctx.options.get("nli_model", ""), _make_judge(ctx, tools), _make_facts(ctx, tools))

    items: list[dict] = []
    timings: dict[str, dict[str, list[float]]] = {}
    bar = tqdm(total=len(ctx.methods) * sum(len(d.rounds) for d in dialogues), disable=not ctx.progress, desc="mtbench")
    for method_name in ctx.methods:
        stages = timings.setdefault(method_name, {})
        for d in dialogues:
            bar.set_postfix(method=method_name, task=d.task)
            _seed(_dialogue_seed(ctx.seed, method_name, d.id), generating=tools is not None)
            with ctx.metered(method_name):
                answers = answer_dialogue(method_name, d, tools, mode, max_tokens, on_turn=lambda: bar.update(1),
                                          reused=reused.get(method_name), tree=ctx.options.get("tree"))
            t0 = time.perf_counter()
            scores = scorer.score(d, answers, lexical=method_name != GOLDEN)
            stages.setdefault("score_turn", []).extend([(time.perf_counter() - t0) / len(answers)] * len(answers))
            for i, (answer, rnd, row) in enumerate(zip(answers, d.rounds, scores)):
                item = _item(method_name, mode, d, i, answer, rnd.bot, row, scored=all_turns or d.is_scored(i))
                ctx.write_item(item)
                items.append(item)
                if method_name != GOLDEN:
                    stages.setdefault("respond", []).append(answer.seconds)
                    stages.setdefault("llm_calls", []).append(float(answer.llm_calls))
                    for stage, seconds in answer.timings.items():
                        stages.setdefault(stage, []).append(seconds)
    bar.close()
    # the whole run's dialogues (a shard's settings are the single run's, so bench-merge accepts them)
    settings = {"mode": mode, "turns": "all" if all_turns else "official", "nli_model": scorer.nli_scorer.source,
                "nli_settings": asdict(scorer.nli_scorer.settings), "dialogues": len(planned),
                "tasks": sorted({d.task for d in planned}), "aggregation": "mean over dialogues of per-dialogue means",
                **_tree_settings(ctx.methods, max_tokens, ctx.options.get("tree"))}
    results, extra = summarise(items, {**ctx.options, **settings})
    return BenchResult(results=results, timings=timings, settings=settings, extra=extra)


TIMED_FIELDS = frozenset({"seconds"})  # what a rerun measures afresh (left out when a merge is checked)


def item_id(item: dict) -> str:
    return f"{item['method']}::{item['dialogue_id']}::{item['turn']}"


def summarise(items: list[dict], settings: dict) -> tuple[dict, dict]:
    """(results, extra) from the rows alone, in the planned order (a single run and bench-merge
    both come here): per method the means over dialogues with bootstrap intervals, per task, per turn."""
    keys = METRIC_KEYS + (("factscore", "neip") if settings.get("factscore") else ())
    return summarise_rows(items, keys), {"per_task": per_task(items), "per_turn": per_turn(items)}


def _plan(ctx: BenchContext, dialogues: list[MTBenchDialogue]) -> list[MTBenchDialogue]:
    """Declare every (method, dialogue, turn) row in run order (methods, then dialogues); keep the
    dialogues this run owns. The shard is chosen by the dialogue: one NLI pass scores a dialogue's
    turns together, and every method of a dialogue is answered in one shard."""
    rows = [(m, d, i + 1) for m in ctx.methods for d in dialogues for i in range(len(d.rounds))]
    mine = ctx.plan([item_id({"method": m, "dialogue_id": d.id, "turn": t}) for m, d, t in rows],
                    keys=[str(d.id) for _, d, _ in rows])
    owned = {d.id for m, d, t in rows if item_id({"method": m, "dialogue_id": d.id, "turn": t}) in mine}
    return [d for d in dialogues if d.id in owned]


def _dialogue_seed(seed: int, method: str, dialogue_id) -> int:
    """A seed per (run seed, method, dialogue), the same in every process and shard."""
    return int.from_bytes(hashlib.sha1(f"{seed}:{method}:{dialogue_id}".encode()).digest()[:4], "big")


def _item(method: str, mode: str, d: MTBenchDialogue, i: int, answer: Answer, golden: str, row: dict, scored: bool) -> dict[str, Any]:
    return {
        "method": method, "mode": mode, "dialogue_id": d.id, "task": d.task, "turn": i + 1, "n_turns": len(d.rounds),
        "scored": scored, "user": d.rounds[i].user, "response": answer.text, "reference": golden,
        **row, "seconds": round(answer.seconds, 4), "llm_calls": answer.llm_calls,
    }


def _seed(seed: int, generating: bool) -> None:
    """Sampling at temperature 0.8 is random; seed it so a rerun repeats the answers."""
    random.seed(seed)
    if generating:
        import torch

        torch.manual_seed(seed)
