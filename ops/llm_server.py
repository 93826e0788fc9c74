"""One llama.cpp HTTP server (xllamacpp, OpenAI-compatible) as its own process, for the load
test's LLM pool: `python -m ops.llm_server --port P [--model small] [--slots 2] [--threads 1]`."""

from __future__ import annotations

import argparse
import threading


def main() -> None:
    import xllamacpp

    from core.llm.gguf_models import resolve_gguf

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="small", help="small | medium | large | default (= large) | a .gguf path")
    parser.add_argument("--slots", type=int, default=2, help="requests generated at once")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=2048, help="context per slot")
    args = parser.parse_args()
    params = xllamacpp.CommonParams()
    params.model.path = str(resolve_gguf(args.model, "")[0])
    params.n_parallel = args.slots
    params.n_ctx = args.ctx * args.slots  # llama.cpp splits the context between slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.verbosity = -1
    params.port = args.port
    server = xllamacpp.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    threading.Event().wait()  # serve until SIGTERM / SIGKILL


if __name__ == "__main__":
    main()
