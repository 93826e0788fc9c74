"""`--workers N` against one process (issue 31): wall seconds of a 5,000-sentence MCTS knowledge-base
build from nothing (spaCy parse, sentence and concept embeddings, node groups) and of the indexes of
2 LongMemEval-S haystacks (`bench longmemeval-retrieval`, dense and sentence-graph methods, no
embedding cache), each with workers=1 and workers=N, plus the CPU seconds of this process and of its
reaped children (the workers). The worker start (spawn, model load) is inside the wall time.

Usage (on a quiet machine; the figures are only worth what the machine's load allows):
    .venv/bin/python scripts/lab/workers_timing.py --workers 2 --out results/workers-timing.json

Each variant builds into a fresh temporary cache, so nothing is read from an earlier run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.paths import REPO_ROOT, SHARED_DIR, portable_path  # noqa: E402


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _measured(run) -> tuple[object, dict]:
    load0, (self0, kids0), t0 = os.getloadavg()[0], _cpu(), time.perf_counter()
    value = run()
    wall, (self1, kids1) = time.perf_counter() - t0, _cpu()
    return value, {"wall_s": round(wall, 1), "cpu_self_s": round(self1 - self0, 1),
                   "cpu_children_s": round(kids1 - kids0, 1), "load_1m_before": round(load0, 2),
                   "load_1m_after": round(os.getloadavg()[0], 2)}


def kb_build(path: Path, limit: int, workers: int) -> dict:
    """A KB build from nothing. Stage seconds from the build's progress callback: a stage ends at its
    last report (the embedding workers start inside "sentence embeddings"; "node groups" includes
    the k-means and saving)."""
    from core.methods.mcts.config import KBSettings
    from core.methods.mcts.kb import load_or_build
    from core.resources import load_embedder

    embedder = load_embedder("")
    embedder.warm()
    last: dict[str, float] = {}

    def progress(stage: str, fraction: float) -> None:
        last[stage] = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="kb-workers-") as cache:
        settings = KBSettings(workers=workers, cache_dir=cache, embedding_cache=False)
        start = time.perf_counter()
        kb, figures = _measured(lambda: load_or_build(path, embedder, settings, progress=progress, limit=limit))
        end = time.perf_counter()
    marks = [("start", start)] + sorted(last.items(), key=lambda kv: kv[1])
    marks[-1] = (marks[-1][0], end)
    figures["stages_s"] = {stage: round(t - before, 1) for (_, before), (stage, t) in zip(marks, marks[1:])}
    figures.update(sentences=len(kb), concepts=len(kb.concepts))
    return {"figures": figures, "kb": kb}


def haystacks(data: Path, n: int, methods: str, workers: int) -> dict:
    """`bench longmemeval-retrieval` with `workers` embedding processes, run in this process through
    the runner's request (core.benchmarks.request), so the workers are this process's children."""
    from core.benchmarks.request import BenchRequest, bench_context, benchmark_options
    from core.benchmarks.runner import run_benchmark
    from core.config import llm_settings_from

    with tempfile.TemporaryDirectory(prefix="lme-workers-") as out:
        argv = ["bench", "longmemeval-retrieval", "--data", str(data), "--limit", str(n), "--methods", methods,
                "--no-embedding-cache", "--quiet", "--out", out, "--workers", str(workers)]
        request = BenchRequest(benchmark="longmemeval-retrieval", data=Path(data), out=Path(out),
                               methods=tuple(m.strip() for m in methods.split(",") if m.strip()),
                               llm=llm_settings_from(os.environ),
                               options=benchmark_options("longmemeval-retrieval", no_embedding_cache=True), limit=n,
                               progress=False, argv=tuple(argv), workers=workers)
        _, figures = _measured(lambda: run_benchmark(bench_context(request)))
        summary = json.loads((Path(out) / "summary.json").read_text())
    figures["index_s_per_haystack"] = {m: round(t["index"]["median_s"], 2) for m, t in summary["timings"].items() if "index" in t}
    figures["results"] = {m: {k: r.get(k) for k in ("recall@5", "recall@10")} for m, r in summary["results"].items()}
    return figures


def main() -> int:
    import numpy as np

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--kb", default=str(SHARED_DIR / "data" / "genericskb" / "GenericsKB.txt"))
    p.add_argument("--kb-limit", type=int, default=5000)
    p.add_argument("--data", default=str(SHARED_DIR / "data" / "longmemeval" / "longmemeval_s_subset.json"))
    p.add_argument("--haystacks", type=int, default=2)
    p.add_argument("--methods", default="rag-t,rag-r,rag-s,sgmem-t")
    p.add_argument("--skip-kb", action="store_true")
    p.add_argument("--skip-haystacks", action="store_true")
    p.add_argument("--variants", default="", help="worker counts to run, e.g. '2' (default: 1 and --workers)")
    p.add_argument("--out", default="")
    args = p.parse_args()

    from core.benchmarks.runner import code_version

    out: dict = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} CPU cores, no GPU",
                 "code_version": code_version(),
                 "command": "python " + " ".join([portable_path(Path(sys.argv[0]).resolve()), *sys.argv[1:]])}
    variants = tuple(int(v) for v in args.variants.split(",")) if args.variants else (1, args.workers)
    if not args.skip_kb:
        builds = {w: kb_build(Path(args.kb), args.kb_limit, w) for w in variants}
        out["kb"] = {"kb": portable_path(args.kb), "limit": args.kb_limit,
                     **{f"workers_{w}": b["figures"] for w, b in builds.items()}}
        if len(builds) > 1:
            one, many = builds[variants[0]]["kb"], builds[variants[-1]]["kb"]
            same = one.texts == many.texts and one.concepts == many.concepts
            out["kb"].update(same_texts_and_concepts=same,
                             max_abs_vector_difference=float(np.abs(one.vectors - many.vectors).max()) if same else None)
        print(json.dumps(out["kb"], indent=1), flush=True)
    if not args.skip_haystacks:
        out["haystacks"] = {"data": portable_path(args.data), "questions": args.haystacks, "methods": args.methods,
                            **{f"workers_{w}": haystacks(Path(args.data), args.haystacks, args.methods, w) for w in variants}}
        print(json.dumps(out["haystacks"], indent=1), flush=True)
    if args.out:
        path = Path(args.out) if Path(args.out).is_absolute() else REPO_ROOT / args.out
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
