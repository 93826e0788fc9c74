#!/usr/bin/env python
"""Usage: python scripts/lab/kgaug_embed_time.py -- wall and CPU time of one MiniLM query embedding (KAPING's per-query cost),
with torch's default threads and with one thread."""
import time, sys, numpy as np, torch
from core.resources import load_embedder
e = load_embedder()
qs = [f"Do you know anything about the film number {i} directed by Ridley Scott?" for i in range(30)]
e.encode(qs[:2])
for threads in (torch.get_num_threads(), 1):
    torch.set_num_threads(threads)
    w, c = [], []
    for q in qs:
        t, p = time.perf_counter(), time.process_time()
        e.encode([q])
        w.append(time.perf_counter() - t); c.append(time.process_time() - p)
    print(f"threads {threads}: wall ms median {1000*np.median(w):.1f} p95 {1000*np.percentile(w,95):.1f}; cpu ms median {1000*np.median(c):.1f} p95 {1000*np.percentile(c,95):.1f}")
print(type(e).__name__)
