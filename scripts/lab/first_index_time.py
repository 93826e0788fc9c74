"""Cold first index of one LoCoMo conversation (empty embedding cache), as the app builds it: wall
and process CPU seconds, with the progress callback the app shows. On a shared machine the CPU
seconds are the figure to trust (wall time on 2 idle cores is about CPU / 1.8 with torch's 2 threads).

Usage: .venv/bin/python scripts/lab/first_index_time.py --data ../shared/data/locomo/locomo_dev.json --conversation conv-30 \
           --embedder mpnet --retriever sgmem-t
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.data.locomo import load_locomo
from core.methods.retrievers import make_retriever
from core.methods.sgmem.calibration import retrieval_options
from core.resources import load_embedder
from core.retrieval import RetrieverContext
from core.retrieval.cache import CachedEmbedder


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--conversation", default="")
    p.add_argument("--embedder", default="")
    p.add_argument("--retriever", default="sgmem-t")
    args = p.parse_args()
    conv = next(c for c in load_locomo(args.data) if not args.conversation or c.sample_id == args.conversation)
    w0, c0 = time.perf_counter(), time.process_time()
    inner = load_embedder(args.embedder)
    load = (time.perf_counter() - w0, time.process_time() - c0)
    with tempfile.TemporaryDirectory() as cache:
        embedder = CachedEmbedder(inner, cache)
        r = make_retriever(args.retriever, RetrieverContext(embedder, None, retrieval_options("locomo", inner.name)))
        w0, c0 = time.perf_counter(), time.process_time()
        with embedder.reporting(lambda done, total: print(f"  embedded {done}/{total}", flush=True)):
            r.index(conv.dialogue)
        index = (time.perf_counter() - w0, time.process_time() - c0)
    print(f"{inner.name} {args.retriever} {conv.sample_id} ({len(conv.dialogue)} turns, {embedder.computed} texts embedded): "
          f"load {load[0]:.1f} s wall / {load[1]:.1f} s CPU; first index {index[0]:.1f} s wall / {index[1]:.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
