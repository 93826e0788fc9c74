"""Build (or load) the MCTS knowledge base of a GenericsKB file and record what the build cost:
wall time, peak memory, size on disk, and the machine's load average sampled while it ran.

    nice -n 10 .venv/bin/python -m core mcts-build-kb --kb ../shared/data/genericskb/GenericsKB.txt \
        --out results/mcts-kb-50k-build.json

`--workers N` parses in N spaCy processes and embeds in N worker processes at one torch thread each
(core.embed_pool); the KB is the same as with one process (vectors to ~1e-7).

The build resumes through the on-disk embedding cache, so an interrupted run restarts where it
stopped (and a rebuild with a warm cache times the parse and index steps, not the embedding).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from pathlib import Path



def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


class LoadSampler:
    """The 1-minute load average every `every` seconds, in a daemon thread."""

    def __init__(self, every: float = 30.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(self.every)

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    def summary(self) -> dict:
        s = sorted(self.samples) or [0.0]
        return {"min": round(s[0], 2), "median": round(s[len(s) // 2], 2), "max": round(s[-1], 2), "samples": len(s)}


def add_arguments(parser) -> None:
    parser.add_argument("--kb", default="../shared/data/genericskb/GenericsKB.txt")
    parser.add_argument("--limit", type=int, default=None, help="first N distinct sentences (a slice)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes that parse and embed (each embedder worker at one torch thread); 1 = this process")
    parser.add_argument("--cache-dir", default="", help="cache folder (default ~/.cache/dialogue-workbench): "
                        "a fresh one times a build from nothing")
    parser.add_argument("--out", required=True, help="JSON summary to write")


def main(args) -> int:

    from core.methods.mcts.kb import KBSettings, load_or_build
    from core.resources import load_embedder

    last = {"stage": "", "t": 0.0}

    def progress(stage: str, fraction: float) -> None:
        now = time.perf_counter()
        if stage != last["stage"] or now - last["t"] > 60 or fraction >= 1.0:
            print(f"{time.strftime('%H:%M:%S')} {stage} {fraction:.1%} load {os.getloadavg()[0]:.1f}", flush=True)
            last.update(stage=stage, t=now)

    embedder = load_embedder("")
    settings = KBSettings(workers=args.workers, cache_dir=args.cache_dir)
    t0 = time.perf_counter()
    with LoadSampler() as load:
        kb = load_or_build(args.kb, embedder, settings, progress=progress, limit=args.limit)
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    load_or_build(args.kb, embedder, settings, limit=args.limit)  # a second start: from the cache
    reload_s = time.perf_counter() - t1
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} CPU cores, no GPU",
        "command": ".venv/bin/python -m core " + " ".join(sys.argv[1:]),
        "kb": args.kb, "limit": args.limit, "workers": args.workers,
        "sentences": len(kb), "concepts": len(kb.concepts), "groups": kb.groups.n_groups if kb.groups else None,
        "wall_s": round(wall, 1), "header_build_s": kb.header.get("build_s"),
        "reload_s": round(reload_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "disk_bytes": folder_bytes(kb.folder), "cache_folder": kb.folder.name,
        "load_average_1m": load.summary(),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0
