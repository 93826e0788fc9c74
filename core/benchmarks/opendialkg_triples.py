"""OpenDialKG triple retrieval: recall@1/@5, MRR, candidate ceiling and linking per ranker.

For every assistant turn grounded by a walk (`kgwalk/choose_path`) that follows a user turn, the
user's query is linked, its candidate triples gathered and ranked by each method; the walk's
triples are the gold. Methods: `bm25`, `kaping`, `triton` share the candidates of the query as
written; `triton-c` rewrites the query first (symbolic pronoun rewrite; with `--rewrite llm`, the
paper's LLM rewrite prompt) and links and ranks the rewritten one.

Metrics (higher is better): `recall@k` = share of a turn's gold triples in the top k, averaged
over turns; `hit@k` = share of turns with a gold triple in the top k; `mrr` = mean reciprocal
rank of the first gold triple (0 when absent); `candidate_ceiling` = share of turns with a gold
triple among the candidates (no ranker can do better); `candidate_recall` = the same for recall;
`linking_precision` / `linking_recall` = micro precision and recall of the linked entities
against the entities of the gold triples (the answer end is rarely in the query, so recall is
bounded well below 1). Timings: per query, `rank` (scoring and sorting the candidates), `link`,
`candidates`, `rewrite`. KAPING's triple vectors are computed before timing (`index`), as a
deployed system would precompute them for its graph.

`--split eval` (default) keeps dialogues with index % 5 == 0, never trained on; `--split all`
is for a file the relevance model never saw. The graph holds the shared item graph, the walks of
the shared test split and the walks of `--data` (OpenDialKG's full graph contains every walk).
"""

from __future__ import annotations

import time
from pathlib import Path

from core.benchmarks.runner import BenchContext, BenchResult
from core.data.opendialkg import LoadStats, in_split, iter_opendialkg
from core.methods.kgaug.candidates import CandidateSettings, gather
from core.methods.kgaug.triples import canonical, verbalize
from core.metrics.ranking import linking_counts, ranking_metrics, summarise

DEFAULT_METHODS = "bm25,kaping,triton,triton-c"
KNOWN = ("bm25", "kaping", "triton", "triton-c", "triton-ce")


def add_arguments(parser) -> None:
    parser.add_argument("--split", choices=["eval", "all", "train"], default="eval",
                        help="eval: dialogues with index %% 5 == 0 (never trained on); all: every dialogue")
    parser.add_argument("--kg-triples", action="append", default=[], help="extra triple file (TSV or RDF); repeatable")
    parser.add_argument("--no-shared-kg", action="store_true", help="graph from --data and --kg-triples only")
    parser.add_argument("--kg-cache", default="", help="graph cache folder (default ~/.cache/dialogue-workbench/kg)")
    parser.add_argument("--max-candidates", type=int, default=CandidateSettings().max_candidates)
    parser.add_argument("--relevance-model", default="", help="folder of the triton-ce cross-encoder (default: assets/)")
    parser.add_argument("--triton-model", default="", help="folder of the triton feature model (default: assets/)")
    parser.add_argument("--no-quantize", action="store_true", help="run the relevance model in fp32")
    parser.add_argument("--rewrite", choices=["auto", "symbolic", "llm"], default="auto",
                        help="triton-c rewrite (auto = symbolic; llm = the paper's prompt on the configured LLM, for a strong endpoint)")


def load_examples(path, split: str, limit: int | None):
    stats = LoadStats()
    examples = [e for d in iter_opendialkg(path, stats) if in_split(d.index, split) for e in d.examples()]
    return (examples[:limit] if limit else examples), stats


def knowledge_for(ctx: BenchContext):
    from core.methods.kgaug.pipeline import load_knowledge
    from core.methods.kgaug.sources import KGSources, opendialkg_sources

    base = KGSources() if ctx.options.get("no_shared_kg") else opendialkg_sources()
    sources = base.with_dialogues(str(ctx.data))
    sources = KGSources(sources.dialogue_files, sources.item_files, sources.triple_files + tuple(ctx.options.get("kg_triples") or ()),
                        sources.entity_files, sources.max_triples)
    return load_knowledge(sources, cache_dir=ctx.options.get("kg_cache") or ""), sources


def run(ctx: BenchContext) -> BenchResult:
    from core.methods.kgaug.pipeline import make_ranker
    from core.methods.kgaug.rewrite import LLMRewriter
    from core.resources import load_embedder
    from core.retrieval.cache import CachedEmbedder

    unknown = set(ctx.methods) - set(KNOWN)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; known: {', '.join(KNOWN)}")
    opts = ctx.options
    examples, stats = load_examples(ctx.data, opts.get("split", "eval"), ctx.limit)
    t0 = time.perf_counter()
    knowledge, sources = knowledge_for(ctx)
    load_s = time.perf_counter() - t0
    kg, linker = knowledge.kg, knowledge.linker
    cand_settings = CandidateSettings(max_candidates=opts.get("max_candidates") or CandidateSettings().max_candidates)
    quantize = not opts.get("no_quantize")
    rankers = {}
    for m in ctx.methods:
        base = "triton" if m == "triton-c" else m
        if base not in rankers:
            embedder = CachedEmbedder(load_embedder()) if base == "kaping" else None
            rankers[base] = make_ranker(base, embedder, opts.get("relevance_model", ""), quantize, opts.get("triton_model", ""))
    rewriter, rewrite_mode = None, ""
    if "triton-c" in ctx.methods:
        mode = opts.get("rewrite", "auto")
        rewrite_mode = mode = "symbolic" if mode == "auto" else mode
        rewriter = (LLMRewriter(ctx.make_tools().llm, knowledge.symbolic_rewriter()) if mode == "llm"
                    else knowledge.symbolic_rewriter())

    def link_and_gather(item: dict, query: str, prefix: str = "") -> None:
        """Linked entities, their candidate triples and the seconds of each, under `prefix`+key."""
        t1 = time.perf_counter()
        linked = item[prefix + "linked"] = linker.link(query)
        item[prefix + "link_s"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        item[prefix + "candidates"] = gather(kg, [i for e in linked for i in e.ids], cand_settings) if linked else []
        item[prefix + "cand_s"] = time.perf_counter() - t1

    # Link and gather once per turn (shared by bm25 / kaping / triton), rewrite for triton-c.
    prepared = []
    for ex in examples:
        item = {"ex": ex, "gold": {canonical(*t) for t in ex.gold}}
        link_and_gather(item, ex.query)
        if rewriter is not None:
            t1 = time.perf_counter()
            context = [(t.role, t.text) for t in ex.context]
            rw = rewriter.rewrite(context, ex.query) if isinstance(rewriter, LLMRewriter) else rewriter.rewrite([t for _, t in context], ex.query)
            item["rewrite"] = rw
            item["rewrite_s"] = time.perf_counter() - t1
            link_and_gather(item, rw.query, "c_")
        prepared.append(item)

    timings: dict[str, dict[str, list[float]]] = {m: {"rank": [], "link": [], "candidates": []} for m in ctx.methods}
    if "kaping" in rankers:  # precompute the candidates' vectors (untimed per query, reported as "index")
        t1 = time.perf_counter()
        texts = list(dict.fromkeys(verbalize(c.triple) for it in prepared for c in it["candidates"]))
        rankers["kaping"]._encode_texts(texts)
        if "kaping" in timings:
            timings["kaping"]["index"] = [time.perf_counter() - t1]
    rows = {m: [] for m in ctx.methods}
    links = {m: [0, 0, 0] for m in ctx.methods}
    for item in prepared:
        ex, gold = item["ex"], item["gold"]
        gold_entities = {x for t in gold for x in (t.head, t.tail)}
        record = {"id": ex.id, "query": ex.query, "gold": [t.key() for t in gold], "methods": {}}
        for m in ctx.methods:
            c = "c_" if m == "triton-c" else ""
            linked, candidates = item[c + "linked"], item[c + "candidates"]
            ranker = rankers["triton" if m == "triton-c" else m]
            t1, cpu1 = time.perf_counter(), time.process_time()
            ranked = ranker.rank(item["rewrite"].query if c else ex.query, candidates, context=[t.text for t in ex.context])
            rank_s, rank_cpu = time.perf_counter() - t1, time.process_time() - cpu1
            if candidates:
                timings[m]["rank"].append(rank_s)
                timings[m].setdefault("rank_cpu", []).append(rank_cpu)  # CPU seconds of this process (all its threads)
            timings[m]["link"].append(item[c + "link_s"])
            timings[m]["candidates"].append(item[c + "cand_s"])
            if c:
                timings[m].setdefault("rewrite", []).append(item["rewrite_s"])
            triples = [r.triple for r in ranked]
            metrics = ranking_metrics(triples, gold, {x.triple for x in candidates})
            metrics.update(linked=len(linked), candidates=len(candidates))
            rows[m].append(metrics)
            counts = linking_counts([e.name for e in linked], gold_entities)
            links[m] = [a + b for a, b in zip(links[m], counts)]
            record["methods"][m] = {**metrics, "top5": [t.key() for t in triples[:5]], "linked": [e.name for e in linked],
                                    "rank_s": round(rank_s, 5)}
            if c:
                record["rewritten"] = item["rewrite"].query
        ctx.write_item(record)
    results = {m: summarise(rows[m], tuple(links[m])) for m in ctx.methods}
    for m, r in results.items():
        if r.get("turns"):
            print(f"{m:9s} recall@1 {r['recall@1']:.3f} recall@5 {r['recall@5']:.3f} mrr {r['mrr']:.3f} "
                  f"ceiling {r['candidate_ceiling']:.3f} linking P {r['linking_precision']:.3f} R {r['linking_recall']:.3f}")
    return BenchResult(
        results=results,
        timings=timings,
        settings={"split": opts.get("split", "eval"), "max_candidates": cand_settings.max_candidates,
                  "min_one_hop": cand_settings.min_one_hop, "triton_c_rewrite": rewrite_mode,
                  "triton_model": _relative(getattr(rankers.get("triton"), "model", None)),
                  "relevance_model": _relative(getattr(rankers.get("triton-ce"), "model", None)),
                  "quantized": quantize, "kg": {**kg.stats(), "files": [Path(f).name for _, f in sources.files()]}},
        extra={"data_rows": stats.as_dict(), "kg_load_s": round(load_s, 3)},
    )


def _relative(model) -> str:
    if model is None:
        return ""
    from core.paths import REPO_ROOT

    try:
        return str(Path(model.source).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return Path(model.source).name
