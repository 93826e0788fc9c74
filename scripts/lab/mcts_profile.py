"""Profile the `mcts` chat reply per stage and per LLM call, on the code path of
`python -m core chat --method mcts --script FILE` (core.chat.ChatSession, as the Chat page).

    .venv/bin/python scripts/lab/mcts_profile.py --script benchmarks/chat_short_memory.jsonl \
        --out results/mcts-chat-profile-before.json

Per LLM call it reads llama.cpp's own `timings` of the request (prompt tokens processed,
prompt tokens reused from the slot's KV cache, generated tokens, milliseconds of each), and
the stage (core.methods.method.Stopwatch) the call was made in. Embedded llama.cpp backend only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.chat import ChatSession, read_script, run_script, summarise  # noqa: E402
from core.methods import method as method_module  # noqa: E402

_stage = {"name": "other"}  # one user at a time here: a global is enough
_calls: list[dict] = []
_lock = threading.Lock()


def _watch_stages() -> None:
    base_call = method_module.Stopwatch.__call__

    from contextlib import contextmanager

    @contextmanager
    def call(self, stage):
        before, _stage["name"] = _stage["name"], stage
        try:
            with base_call(self, stage):
                yield
        finally:
            _stage["name"] = before

    method_module.Stopwatch.__call__ = call


def _wrap_server(llm) -> None:
    server = llm.server
    handler = server.handle_chat_completions

    def record(stage: str, t0: float, out: dict | None, stream: bool) -> None:
        timings = (out or {}).get("timings") or {}
        with _lock:
            _calls.append({"stage": stage, "stream": stream, "wall_s": round(time.perf_counter() - t0, 3),
                           "prompt_processed": timings.get("prompt_n"), "prompt_reused": timings.get("cache_n"),
                           "prompt_ms": timings.get("prompt_ms"), "generated": timings.get("predicted_n"),
                           "generate_ms": timings.get("predicted_ms")})

    class Proxy:
        def __getattr__(self, name):
            return getattr(server, name)

        def handle_chat_completions(self, request, callback=None):
            stage, t0 = _stage["name"], time.perf_counter()
            if callback is None:
                out = handler(request)
                record(stage, t0, out, False)
                return out
            last = {}

            def on_chunk(chunk):
                parsed = json.loads(chunk) if isinstance(chunk, str) else chunk
                if isinstance(parsed, dict) and parsed.get("timings"):
                    last.update(parsed)
                return callback(chunk)

            out = handler(request, on_chunk)
            record(stage, t0, last, True)
            return out

    llm.server = Proxy()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--script", default="benchmarks/chat_short_memory.jsonl")
    p.add_argument("--method", default="mcts")
    p.add_argument("--max-tokens", type=int, default=0)
    p.add_argument("--kb", default="", help="knowledge-base file (default: the method's, the 50k GenericsKB sample)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from core.toolkit import llm_settings_from_args, make_toolkit

    ns = argparse.Namespace(backend=None, model=None, threads=None, base_url=None, strong=None, dtype=None)
    tools = make_toolkit(llm_settings_from_args(ns))
    _wrap_server(tools.llm)
    _watch_stages()
    config = None
    if args.kb:
        from dataclasses import replace

        from core.methods.mcts.config import MCTSConfig

        config = replace(MCTSConfig(), kb=replace(MCTSConfig().kb, path=args.kb))
    session = ChatSession(args.method, tools, config, max_tokens=args.max_tokens)
    records = []
    load = []
    for record in run_script(session, read_script(args.script)):
        with _lock:
            record["llm"] = list(_calls)
            _calls.clear()
        load.append(os.getloadavg()[0])
        records.append(record)
        stages = record.get("timings", {})
        print(f"turn {record['turn']}: {record['seconds']:.2f} s  stages {json.dumps(stages)}  load {load[-1]:.1f}", flush=True)
        for c in record["llm"]:
            print("   ", json.dumps(c), flush=True)
    out = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} CPU cores, no GPU",
           "command": "python " + " ".join(sys.argv), "method": args.method, "model": tools.llm.name,
           "load_average_1m": load, "summary": summarise(records), "summary_without_first": summarise(records[1:]),
           "replies": records}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(out["summary_without_first"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
