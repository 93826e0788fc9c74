"""Decode speed of the embedded llama.cpp server in a process where torch has (or has not) run a
sentence encode with its default thread pool: both use OpenMP from two copies of libgomp.

Each variant runs in a fresh subprocess: load the 0.5B model, stream 128 greedy tokens three times
(fresh), encode 512 sentences with torch at THREADS threads, stream three times again. Prints one
JSON line per variant: tokens per second before and after, and the encode's seconds.

    .venv/bin/python scripts/lab/omp_interference.py --out results/omp-interference.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time, torch
from core.config import LLMSettings
from core.llm.base import Message
from core.llm.llamacpp import LlamaCppLLM
from core.llm import llamacpp_options
from core.resources import load_embedder
llm = LlamaCppLLM(llamacpp_options(LLMSettings()))
threads = int(sys.argv[1])
torch.set_num_threads(threads)  # after the server: it set 1, this variant sets its own
emb = load_embedder("")
msgs = [Message("user", "Write a long story about a dog named Biscuit who chews shoes.")]
def rate():
    out = []
    for _ in range(3):
        t = time.perf_counter(); n = sum(1 for _ in llm.stream(msgs, temperature=0.0, max_tokens=128)); out.append(128 / (time.perf_counter() - t))
    return sorted(out)[1]
before = rate()
texts = [f"The quick brown fox jumps over the lazy dog number {i}" for i in range(512)]
t = time.perf_counter(); emb.encode(texts); encode_s = time.perf_counter() - t
after = rate()
print(json.dumps({"torch_threads": threads, "decode_tok_s_before_encode": round(before, 1),
                  "decode_tok_s_after_encode": round(after, 1), "encode_512_s": round(encode_s, 2)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="")
    parser.add_argument("--threads", default="2,1")
    args = parser.parse_args()
    rows = []
    for threads in args.threads.split(","):
        done = subprocess.run([sys.executable, "-c", CHILD, threads], capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        record = {"command": "python scripts/lab/omp_interference.py " + " ".join(sys.argv[1:]),
                  "date": time.strftime("%Y-%m-%d"), "machine": "2-core x86-64 CPU, no GPU", "model": "Qwen2.5-Coder-0.5B Q4_K_M",
                  "note": "median of 3 streams of 128 greedy tokens; 'after' follows one encode of 512 sentences", "rows": rows}
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
