"""One scoring call (a 40-sentence prompt, 11 candidates, the `info --speed` workload) in-process
against the same call over llama.cpp's HTTP server (the OpenAI-compatible backend's `llama.cpp`
route), same GGUF, same threads, the two alternating so that they share the machine's load. Each
call's prompt starts with a new run number, so neither finds it in a prompt cache (a client does
not erase a shared server's cache). Writes a JSON summary.

    .venv/bin/python scripts/lab/time_http_scoring.py --model default --repeats 3 --out results/http-scoring.json
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    import xllamacpp

    from core.config import LLMSettings
    from core.llm import make_llm
    from core.llm.gguf_models import resolve_gguf
    from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

    p = argparse.ArgumentParser()
    p.add_argument("--model", default="default")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="results/http-scoring.json")
    args = p.parse_args()

    facts = " ".join(f"Fact {i}: the user mentioned item number {i} in passing." for i in range(40))
    candidates = [f"{k / 10:.1f}" for k in range(11)]
    local = LlamaCppLLM(LlamaCppOptions(model=args.model, threads=args.threads, slots=2))
    path, label = resolve_gguf(args.model, "")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = 2
    params.n_ctx = 4096 * 2
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = args.threads
    params.verbosity = -1
    key = secrets.token_hex(8)
    params.api_keys = [key]
    params.port = 0
    server = xllamacpp.Server(params)
    http = make_llm(LLMSettings(backend="openai", model=label, base_url=server.listening_address.rstrip("/") + "/v1",
                                api_key=key, timeout_s=600, max_retries=0))
    route = http.scoring_route
    seconds: dict[str, list[float]] = {"in-process": [], "http": []}
    scores = {}
    for run in range(args.repeats):
        for name, llm in (("in-process", local), ("http", http)):
            prompt = f"Run {run}. {facts}"  # new to both caches
            t0 = time.perf_counter()
            scores[name] = llm.score(prompt, candidates)
            seconds[name].append(time.perf_counter() - t0)
    summary = {
        "model": label, "threads": args.threads, "http_route": route, "prompt_tokens": len(local.tokenize(f"Run 0. {facts}")),
        "candidates": len(candidates), "repeats": args.repeats,
        "seconds": {k: [round(s, 3) for s in v] for k, v in seconds.items()},
        "median_s": {k: round(statistics.median(v), 3) for k, v in seconds.items()},
        "max_score_difference": round(max(abs(a - b) for a, b in zip(scores["in-process"], scores["http"])), 4),
        "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python " + " ".join(sys.argv),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    local.close()
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
