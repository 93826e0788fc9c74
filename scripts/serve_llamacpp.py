"""Serve one of the installed GGUF models over llama.cpp's HTTP server (OpenAI-compatible at /v1,
native endpoints at the root), from the `xllamacpp` wheel: a real server to point the workbench at.

    .venv/bin/python scripts/serve_llamacpp.py --model default --port 8080 --slots 2
    WORKBENCH_LLM_API_KEY=... .venv/bin/python -m core info --ping --speed --backend openai \
        --model qwen --base-url http://127.0.0.1:8080/v1

The API key, if any, comes from WORKBENCH_LLM_API_KEY (never from the command line). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    import xllamacpp

    from core.llm.gguf_models import resolve_gguf

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="default", help="small | default | large | path.gguf")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--slots", type=int, default=2)
    p.add_argument("--n-ctx", type=int, default=4096, help="context per slot")
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    args = p.parse_args()
    path, label = resolve_gguf(args.model, "")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = args.slots
    params.n_ctx = args.n_ctx * args.slots
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = args.threads or os.cpu_count() or 1
    params.verbosity = -1
    key = os.environ.get("WORKBENCH_LLM_API_KEY", "")
    params.api_keys = [key] if key else []
    params.port = args.port
    server = xllamacpp.Server(params)
    print(f"{label} at {server.listening_address.rstrip('/')}/v1 ({args.slots} slots, key {'set' if key else 'none'})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
