"""Does speculative decoding make the default 1.5B write faster on this CPU, and does it change
what is written? (issue 53, deliverable 4; docs/speed.md, "Decode").

Each configuration loads the embedded server afresh and answers the same chat prompts: the chat
opening every method shares, then one user message (statements from
benchmarks/conversational_dev.jsonl and requests from benchmarks/memory_long_dev.jsonl). Greedy
(temperature 0) replies are compared word for word with the plain server's; tokens per second are
llama.cpp's own decode timings.

    .venv/bin/python scripts/lab/speculative_decode.py --out results/cache-layout/speculative.json
    .venv/bin/python scripts/lab/speculative_decode.py --configs none,draft:medium --draft-max 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.llm import cost  # noqa: E402
from core.llm.base import Message  # noqa: E402
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions  # noqa: E402
from core.methods.render import chat_system  # noqa: E402


def user_messages(path: Path, skip_questions: bool, limit: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [r["user"] for r in rows if "user" in r and not (skip_questions and ("expect" in r or r.get("never_told")))]
    return texts[:limit]


def run_config(kind: str, prompts: list[str], max_tokens: int, draft_max: int) -> dict:
    options = LlamaCppOptions(model="", speculative="" if kind == "none" else kind, draft_max=draft_max, seed=0)
    llm = LlamaCppLLM(options)
    try:
        llm.chat("Say OK.", temperature=0.0, max_tokens=4)  # warm-up: first-request costs are not decode
        rows = []
        for text in prompts:
            messages = [Message("system", chat_system(3)), Message("user", text)]
            with cost.measure() as meter:
                t0 = time.perf_counter()
                reply = llm.chat(messages, temperature=0.0, max_tokens=max_tokens).text
                seconds = time.perf_counter() - t0
            work = cost.totals(meter.as_dict())
            rows.append({"reply": reply, "seconds": round(seconds, 3), "generated": work.get("generated_tokens", 0),
                         "decode_s": work.get("decode_s", 0.0), "prefill_s": work.get("prefill_s", 0.0)})
    finally:
        llm.close()
    generated = sum(r["generated"] for r in rows)
    decode_s = sum(r["decode_s"] for r in rows)
    return {"config": kind, "draft_max": draft_max if kind.startswith("draft:") else None,
            "tokens_per_s": round(generated / decode_s, 2) if decode_s else None,
            "median_reply_s": round(statistics.median(r["seconds"] for r in rows), 3),
            "generated": generated, "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default="none,ngram-simple,ngram-mod,ngram-map-k,draft:medium")
    p.add_argument("--draft-max", type=int, default=3)
    p.add_argument("--prompts", type=int, default=6, help="messages from each of the two files")
    p.add_argument("--max-tokens", type=int, default=100)
    p.add_argument("--out", default="")
    args = p.parse_args()
    prompts = (user_messages(ROOT / "benchmarks/conversational_dev.jsonl", True, args.prompts)
               + user_messages(ROOT / "benchmarks/memory_long_dev.jsonl", True, 20)[-args.prompts:])
    results = [run_config(kind, prompts, args.max_tokens, args.draft_max) for kind in args.configs.split(",")]
    plain = next((r for r in results if r["config"] == "none"), None)
    for r in results:
        if plain is not None:
            r["same_as_plain"] = sum(a["reply"] == b["reply"] for a, b in zip(r["rows"], plain["rows"]))
        print(f"{r['config']:>14}  {r['tokens_per_s']} tokens/s  median reply {r['median_reply_s']} s  "
              f"same text {r.get('same_as_plain', '-')}/{len(prompts)}")
    if args.out:
        out = {"command": "python scripts/lab/speculative_decode.py " + " ".join(sys.argv[1:]),
               "model": "default (1.5B)", "prompts": prompts, "results": results}
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
