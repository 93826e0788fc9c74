"""How fast the embedded model writes after a long cached prompt (mem0's ~8,000-token system
prompt) against a short one, plain and JSON-constrained, and whether llama.cpp's flash attention
or KV-cache type changes it (docs/peers.md, "What it costs").

    .venv/bin/python scripts/lab/long_prompt_decode.py --rules 400            # ~8,700-token prompt
    .venv/bin/python scripts/lab/long_prompt_decode.py --rules 200 --flash-attn 0
    .venv/bin/python scripts/lab/long_prompt_decode.py --rules 200 --kv-type GGML_TYPE_F32
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import xllamacpp  # noqa: E402

from core.llm.base import Message  # noqa: E402
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", type=int, default=400, help="filler rules in the system prompt (400: ~8,700 tokens)")
    p.add_argument("--flash-attn", type=int, default=-1, help="llama.cpp flash_attn_type: -1 auto, 0 off, 1 on")
    p.add_argument("--kv-type", default="", help="KV cache type, e.g. GGML_TYPE_F32 (default: llama.cpp's F16)")
    args = p.parse_args()
    make_params = xllamacpp.CommonParams

    def params():  # the workbench's server settings, with the two knobs under test
        out = make_params()
        out.flash_attn_type = args.flash_attn
        if args.kv_type:
            out.cache_type_k = out.cache_type_v = getattr(xllamacpp.ggml_type, args.kv_type)
        return out

    xllamacpp.CommonParams = params
    llm = LlamaCppLLM(LlamaCppOptions(n_ctx=12288))
    long_system = Message("system", " ".join(f"Rule {i}: extract facts about people, places, dates and preferences "
                                             "from the conversation, carefully." for i in range(args.rules)))

    def run(label: str, system: Message, user: str, as_json: bool) -> None:
        msgs = [system, Message("user", user)]
        t0 = time.perf_counter()
        if as_json:
            out = json.dumps(llm.json(msgs, {"type": "object"}, temperature=0.1, max_tokens=80, retries=0))
        else:
            out = llm.chat(msgs, temperature=0.1, max_tokens=80).text
        print(json.dumps({"case": label, "seconds": round(time.perf_counter() - t0, 2), "chars": len(out)}), flush=True)

    print(json.dumps({"prompt_tokens": llm.count_prompt_tokens([long_system]), "flash_attn": args.flash_attn,
                      "kv_type": args.kv_type or "F16"}), flush=True)
    run("first: the long prompt computed", long_system, "Input: user: I moved to Lisbon.", False)
    short_system = Message("system", "Extract facts.")
    for i in range(2):
        text = f"Input {i}: user: My sister Mia visits next week; she is allergic to nuts. Write JSON facts."
        run("long prompt cached, plain", long_system, text, False)
        run("long prompt cached, JSON", long_system, text + " (b)", True)
        run("short prompt, plain", short_system, text, False)
        run("short prompt, JSON", short_system, text + " (c)", True)


if __name__ == "__main__":
    main()
