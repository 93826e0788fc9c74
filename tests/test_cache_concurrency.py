"""The on-disk embedding cache shared by processes writing at once (workers of a sharded or Ray run):
no write lost, no corruption, and one vector per text for every process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

# A worker: embeds the same 300 texts as its sibling, in blocks of 10, starting when `go` appears.
# Its embedder adds a per-process offset to each vector, as a real model's last bits shift with the
# batch a text comes in: two processes that embed one text at once compute two different vectors.
WORKER = r"""
import hashlib, json, sys, time
from pathlib import Path
import numpy as np
from core.resources import Embedder, normalise
from core.retrieval.cache import CachedEmbedder

folder, offset, go = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3])

class Shifted(Embedder):
    name, dim = "shifted", 16
    def encode(self, texts, batch_size=64):
        seeds = [int.from_bytes(hashlib.sha1(t.encode()).digest()[:4], "big") for t in texts]
        return normalise(np.asarray([np.random.default_rng(s).normal(size=16) + offset for s in seeds]))

cache = CachedEmbedder(Shifted(), folder, key="shared")
while not go.exists():
    time.sleep(0.005)
texts = [f"sentence number {i}" for i in range(300)]
out = {}
for start in range(0, len(texts), 10):
    block = texts[start:start + 10]
    out.update({t: v.tolist() for t, v in zip(block, cache.encode(block))})
print(json.dumps({"vectors": out, "computed": cache.computed}))
"""


def test_two_processes_writing_at_once_agree_and_lose_nothing(tmp_path):
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path / "cache"), offset, str(go)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for offset in ("0", "0.5")]
    try:
        time.sleep(0.5)
        go.touch()
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    a, b = (json.loads(out) for out, _ in outs)
    assert a["vectors"].keys() == b["vectors"].keys() and len(a["vectors"]) == 300
    with sqlite3.connect(tmp_path / "cache" / "shared.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {h: np.frombuffer(v, dtype=np.float32) for h, v in db.execute("SELECT hash, vec FROM vectors")}
    assert len(stored) == 300
    from core.retrieval.cache import text_hash

    for text in a["vectors"]:
        va, vb = np.asarray(a["vectors"][text], dtype=np.float32), np.asarray(b["vectors"][text], dtype=np.float32)
        assert np.array_equal(va, vb), text  # both processes use the one stored vector
        assert np.array_equal(stored[text_hash(text)], va)
    # the processes did embed at the same time (else the test proves nothing): together they computed
    # more than the 300 texts, and each stored vector is one of the two processes' own
    assert a["computed"] + b["computed"] > 300, (a["computed"], b["computed"])
