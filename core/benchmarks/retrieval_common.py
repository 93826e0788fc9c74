"""What the LoCoMo and LongMemEval retrieval benchmarks share: building the retrievers, scoring a
ranked list against gold turns, accumulating metrics per method and group, and the optional
answer-and-judge step (SGMem Appendix B.1 / B.2 prompts).

Recall@k counts gold turns inside the top-k dialogue chunks (a session chunk covers all its
turns, so larger chunks buy recall with context; `tokens@k` reports that context: the top-k
chunks plus the top-k generated memories of each kind, in approximate LLM tokens).

Equal budgets: `tok_recall@B` counts gold turns inside the first B tokens of the ranked chunks
(turn by turn, in rank order, stopping at the first turn that would overflow B), with B set per
chunk level (`--budgets`), so methods at one level are compared on the same context size
whatever the length of the chunks they prefer; `tok_used@B` is what they filled.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

import numpy as np

from core.dialogue import Evidence
from core.llm.base import LLM, LLMOutputError, Message
from core.llm.prompts import render_prompt
from core.methods.retrievers import make_retriever, uses_llm
from core.retrieval import RetrieverContext
from core.retrieval.base import DIALOGUE_KINDS, Retriever
from core.text import approx_tokens

JUDGE_SCHEMA = {"type": "object", "required": ["score"], "properties": {"score": {"enum": [0, 1, "0", "1"]}}}


def add_retrieval_arguments(parser: argparse.ArgumentParser, preset: str) -> None:
    g = parser.add_argument_group("retrieval")
    g.add_argument("--ks", default="5,10", help="cut-offs K for recall@K (comma-separated)")
    g.add_argument("--budgets", default=DEFAULT_BUDGETS[preset],
                   help="token budget per chunk level for tok_recall@B: t=..,r=..,s=.. (approximate LLM tokens)")
    add_memory_arguments(g, preset)
    g.add_argument("--qa", action="store_true",
                   help="also answer each question from the top-K context and judge it (B.1/B.2 prompts) with the configured LLM")


def add_memory_arguments(g, preset: str) -> None:
    """What builds the retrievers' memory (SGMem settings, the embedding cache); shared with the QA benchmarks."""
    g.add_argument("--sgmem-preset", default=preset, choices=["locomo", "longmemeval"],
                   help=f"SGMem hyper-parameters from the paper for this dataset (default {preset})")
    g.add_argument("--sgmem-paper", action="store_true",
                   help="sgmem-*: the paper's values as published, not those calibrated for this embedder on the dev split")
    g.add_argument("--sgmem-k", type=int, default=None, help="override: KNN neighbours per sentence")
    g.add_argument("--sgmem-h", type=int, default=None, help="override: hops")
    g.add_argument("--sgmem-n", type=int, default=None, help="override: max sentence nodes")
    g.add_argument("--sgmem-gamma", type=float, default=None, help="override: threshold on cosine + 1")
    g.add_argument("--sgmem-no-speaker", action="store_true",
                   help="embed SGMem sentences without their speaker's name (default: 'Name: sentence', as turns are embedded)")
    g.add_argument("--embedding-cache", default="", help="folder of the on-disk embedding cache (default ~/.cache/dialogue-workbench/embeddings)")
    g.add_argument("--no-embedding-cache", action="store_true", help="embed everything afresh")
    g.add_argument("--workers", type=int, default=1,
                   help="processes that embed the haystacks and dialogues (each at one torch thread; "
                        "this process alone reads and writes the embedding cache); 1 = this process")
    g.add_argument("--time-query-embedding", type=int, default=30,
                   help="time the query embedding with the model on the first N questions (the rest may come from the cache)")


# About the tokens of the top 5 dense-RAG chunks at each level on the dev files.
DEFAULT_BUDGETS = {"locomo": "t=200,r=400,s=4000", "longmemeval": "t=1000,r=2000,s=10000"}


def parse_budgets(text: str) -> dict[str, int]:
    """'t=200,r=400,s=4000' -> {'turn': 200, 'round': 400, 'session': 4000}."""
    from core.retrieval.base import LEVELS

    by_letter = {level[0]: level for level in LEVELS}
    out = {}
    for part in str(text).split(","):
        letter, _, value = part.strip().partition("=")
        if letter not in by_letter or not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"--budgets wants t=N,r=N,s=N with positive N, got {text!r}")
        out[by_letter[letter]] = int(value)
    return out


def budget_scores(evidence: Sequence[Evidence], gold: Iterable[str], budget: int,
                  unit: Callable[[str], str] = lambda t: t, prefix: str = "") -> dict[str, float]:
    """tok_recall@B: share of gold units among the turns that fit in B tokens, taken in rank order
    (turn by turn inside each chunk; the first turn that would overflow B ends the list)."""
    gold_units = {unit(g) for g in gold}
    used, covered = 0, set()
    for e in top_chunks(evidence, len(evidence)):
        turn_ids, tokens = e.meta.get("turn_ids", ()), e.meta.get("turn_tokens")
        if tokens is None or len(tokens) != len(turn_ids):
            raise ValueError(f"evidence {e.source!r} lacks per-turn token counts (meta['turn_tokens'])")
        for tid, n in zip(turn_ids, tokens):
            if used + n > budget:
                return _budget_result(gold_units, covered, used, budget, prefix)
            used += n
            covered.add(unit(tid))
    return _budget_result(gold_units, covered, used, budget, prefix)


def _budget_result(gold_units: set, covered: set, used: int, budget: int, prefix: str) -> dict[str, float]:
    recall = len(gold_units & covered) / len(gold_units) if gold_units else float("nan")
    return {f"{prefix}tok_recall@{budget}": recall, f"{prefix}tok_used@{budget}": float(used)}


def retriever_level(retriever: Retriever) -> str | None:
    return retriever.settings().get("chunk_level")


def parse_ks(text: str) -> list[int]:
    ks = sorted({int(k) for k in str(text).split(",") if k.strip()})
    if not ks or ks[0] < 1:
        raise ValueError(f"--ks needs positive integers, got {text!r}")
    return ks


def sgmem_config(options: dict, embedder_name: str = "") -> dict:
    """sgmem-* per chunk level: the paper's algorithm with the preset's limits, calibrated for the
    embedder (unless --sgmem-paper), then any --sgmem-* overrides."""
    from core.methods.sgmem.calibration import sgmem_levels

    levels = sgmem_levels(options.get("sgmem_preset", "locomo"), embedder_name, not options.get("sgmem_paper"))
    overrides = {"knn_k": options.get("sgmem_k"), "hops": options.get("sgmem_h"),
                 "max_sentences": options.get("sgmem_n"), "gamma": options.get("sgmem_gamma"),
                 "sentence_with_speaker": False if options.get("sgmem_no_speaker") else None}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return {level: replace(config, **overrides) for level, config in levels.items()}


@dataclass
class Setup:
    retriever_context: RetrieverContext
    llm: LLM | None
    strong: bool
    embed_query: Callable[[str], float | None]  # embeds and caches the query; the seconds it took, if timed
    embedder_name: str


def setup(ctx, methods: Sequence[str]) -> Setup:
    """Load what the chosen methods need: always the embedder (cached on disk unless disabled);
    the LLM only for generated memory or --qa."""
    from core.retrieval.cache import CachedEmbedder

    need_llm = any(uses_llm(m) for m in methods) or ctx.options.get("qa")
    tools = ctx.make_tools() if need_llm and ctx.make_tools else None
    inner = _embedder(ctx.options.get("embedder", ""), tools)
    indexing = inner
    if ctx.workers > 1:  # index texts embedded by worker processes; stopped by ctx.close()
        from core.embed_pool import EmbedPool

        indexing = ctx.resources.enter_context(EmbedPool(inner, ctx.workers))
    embedder = indexing if ctx.options.get("no_embedding_cache") else CachedEmbedder(indexing, ctx.options.get("embedding_cache") or None)
    provider = None
    if tools is not None:
        from core.methods.sgmem.memory import MemoryGenerator

        provider = MemoryGenerator(tools.llm)

    timed_left = [int(ctx.options.get("time_query_embedding", 30))]

    def embed_query(query: str) -> float | None:
        """Embeds the query for every dense method. The first N are timed with the model itself
        (the figure reported); later ones come from the disk cache when there, so reruns are quick."""
        if embedder is not indexing and timed_left[0] <= 0:
            embedder.encode([query])
            return None
        timed_left[0] -= 1
        t0 = time.perf_counter()
        vec = inner.encode([query])
        seconds = time.perf_counter() - t0
        if embedder is not indexing:
            embedder.store([query], vec)
        return seconds

    from core.methods.sgmem.calibration import retrieval_options

    options = retrieval_options(ctx.options.get("sgmem_preset", "locomo"), inner.name,
                                sgmem=sgmem_config(ctx.options, inner.name))
    context = RetrieverContext(embedder, provider, options)
    return Setup(context, tools.llm if tools else None, bool(tools and tools.strong), embed_query, inner.name)


def _embedder(name: str, tools):
    from core.resources import load_embedder

    if tools is not None and tools.embedder is not None:
        return tools.embedder  # built from the same --embedder
    return load_embedder(name)


def build(names: Sequence[str], setup_: Setup) -> list[Retriever]:
    return [make_retriever(n, setup_.retriever_context) for n in names]


def top_chunks(evidence: Sequence[Evidence], k: int) -> list[Evidence]:
    return [e for e in evidence if e.kind in DIALOGUE_KINDS][:k]


def context_for(evidence: Sequence[Evidence], k: int) -> list[Evidence]:
    """The top-k chunks plus the top-k generated memories of each kind (retrieval ran at max K)."""
    out, per_kind = top_chunks(evidence, k), defaultdict(int)
    for e in evidence:
        if e.kind not in DIALOGUE_KINDS and per_kind[e.kind] < k:
            per_kind[e.kind] += 1
            out.append(e)
    return out


def turn_scores(evidence: Sequence[Evidence], gold: Iterable[str], ks: Sequence[int],
                unit: Callable[[str], str] = lambda t: t, prefix: str = "") -> dict[str, float]:
    """recall@k (share of gold units covered) and hit@k (any covered) over the top-k chunks;
    `unit` maps a turn id to what is counted (the turn itself, or its session)."""
    gold_units = {unit(g) for g in gold}
    out = {}
    for k in ks:
        covered = {unit(t) for e in top_chunks(evidence, k) for t in e.meta.get("turn_ids", ())}
        found = len(gold_units & covered)
        out[f"{prefix}recall@{k}"] = found / len(gold_units) if gold_units else float("nan")
        out[f"{prefix}hit@{k}"] = float(found > 0) if gold_units else float("nan")
    return out


def context_tokens(evidence: Sequence[Evidence], ks: Sequence[int]) -> dict[str, float]:
    return {f"tokens@{k}": float(sum(approx_tokens(e.text) for e in context_for(evidence, k))) for k in ks}


# What an item's per-method dict holds beside the metrics the summary averages.
ITEM_FIELDS = frozenset({"latency_s", "gc_full", "chunks", "index_mb"})
# What an item records that a rerun measures afresh (left out when two runs' items are compared).
TIMED_FIELDS = frozenset({"latency_s", "gc_full", "embed_query_s"})


def item_metrics(per_method: dict) -> dict[str, float]:
    """The metrics of one method on one item, as written in items.jsonl."""
    return {k: v for k, v in per_method.items() if k not in ITEM_FIELDS}


class Tally:
    """Per method and group (e.g. question category): lists of metric values, averaged at the end."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))

    def add(self, method: str, groups: Sequence[str], metrics: dict[str, float]) -> None:
        for group in groups:
            for name, value in metrics.items():
                if value == value:  # NaN (no gold) is not averaged in
                    self.values[method][group][name].append(float(value))

    def means(self, method: str, group: str) -> dict[str, float]:
        stats = {name: round(float(np.mean(v)), 4) for name, v in self.values[method][group].items() if v}
        counts = [len(v) for v in self.values[method][group].values()]
        stats["n"] = max(counts, default=0)
        return stats


def answer_and_judge(llm: LLM, question: str, gold: str, context: Sequence[Evidence], date: str = "") -> tuple[str, int | None]:
    """Answer from the context (B.1), then judge against the gold answer (B.2). None when the
    judge's output fails validation (counted as unjudged, not as wrong)."""
    from core.methods.sgmem.method import context_text

    asked = f"{question}\n(Current date: {date})" if date else question
    messages = [Message("system", render_prompt("sgmem_response", context=context_text(list(context)))),
                Message("user", asked)]
    answer = llm.chat(messages, temperature=0.7, max_tokens=300).text
    judge = render_prompt("sgmem_judge", question=question, gold=gold, candidate=answer)
    try:
        verdict = llm.json([Message("user", judge)], JUDGE_SCHEMA, max_tokens=40)
        return answer, int(verdict["score"])
    except LLMOutputError:
        return answer, None
