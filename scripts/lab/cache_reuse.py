"""How many prompt tokens a long conversation's replies leave the server to compute with llama.cpp's
`n_cache_reuse` off and on (issue 53, deliverable 2).

The shared layout (core/methods/layout.py) cuts the conversation window at its start in steps; on
the long dev dialogues (paragraphs and long answers) the start moves every two or three turns near
their end, and each move leaves only the system message in common with the slot's cache: `dsmart`
computed 1,000-1,400 tokens on those turns (results/replies/chat/long-dev-greetings/dsmart.jsonl).
The rest of the window is the same tokens further forward; `n_cache_reuse` reuses such chunks by
shifting them in the cache.

This sends, for each of the first `--dialogues` dialogues of `--script`, the base layout's prompt of
every turn (system, window, message) in order to a fresh server, with the recorded replies
(`--records`, a `chat --script` transcript) as the history and appended after each prompt as the
slot holds it; one token is generated (the count is the prompt's). Token counts are the server's own
and do not depend on the machine's speed; the seconds do.

    PYTHONPATH=. .venv/bin/python scripts/lab/cache_reuse.py --script benchmarks/memory_long_dev.jsonl \
        --records results/replies/chat/long-dev-greetings/dsmart.jsonl --reuse 0,64 --out results/cache-layout/cache-reuse.json

With `--slots 2 --choose off,on` it measures the slot choice (core/llm/slot_choice.py): whether a
cut prompt stays in the slot that holds its conversation.

    PYTHONPATH=. .venv/bin/python scripts/lab/cache_reuse.py --script benchmarks/memory_long_dev.jsonl \
        --records results/replies/chat/long-dev-cache-reuse/dsmart.jsonl --reuse 64 --slots 2 --choose off,on \
        --out results/cache-layout/slot-choice.json

Measured 2026-11-29: docs/speed.md, "n_cache_reuse" and "Slot choice".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from core.benchmarks.replies import split_dialogues
from core.chat import read_script
from core.config import GenerationSettings
from core.dialogue import Turn
from core.llm import cost
from core.llm.base import Message
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions
from core.methods.layout import layout_prompt, window_start
from core.methods.render import chat_system


def dialogues(script: str) -> list[list]:
    return split_dialogues(read_script(script))


def replay(reuse: int, steps_of: list[list], replies: dict, gen: GenerationSettings, slots: int = 1,
           choose: bool = True) -> list[dict]:
    llm = LlamaCppLLM(LlamaCppOptions(seed=0, cache_reuse=reuse, slots=slots, choose_slots=choose))
    rows = []
    try:
        system = chat_system(gen.reply_sentences)
        for d, steps in enumerate(steps_of):
            turns: list[Turn] = []
            for t, step in enumerate(steps):
                messages = layout_prompt(system, turns, step.user, gen.max_history_chars)
                reply = replies.get((d, t), "")
                with cost.measure() as meter:
                    t0 = time.perf_counter()
                    llm.chat(messages, temperature=0.0, max_tokens=1)
                    seconds = time.perf_counter() - t0
                work = cost.totals(meter.as_dict())
                # the slot then holds the prompt and the reply, as after a live reply (not counted)
                llm.chat([*messages, Message("assistant", reply)], temperature=0.0, max_tokens=1)
                rows.append({"reuse": reuse, "slots": slots, "choose_slots": choose, "dialogue": d, "turn": t,
                             "window_start": window_start(turns, gen.max_history_chars),
                             "seconds": round(seconds, 3), "computed": work.get("processed_tokens", 0),
                             "cached": work.get("cached_tokens", 0)})
                turns += [Turn("user", step.user), Turn("assistant", reply)]
    finally:
        llm.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", required=True)
    parser.add_argument("--dialogues", type=int, default=2)
    parser.add_argument("--reuse", default="0,64", help="n_cache_reuse values, comma-separated (0 = off)")
    parser.add_argument("--slots", type=int, default=1, help="the server's slots (the app's default is 2)")
    parser.add_argument("--choose", default="on",
                        help="slot choice by shared prompt (LlamaCppOptions.choose_slots): on, off or off,on")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    replies = {(r["dialogue"], r["turn"]): r["reply"] for r in map(json.loads, open(args.records, encoding="utf-8"))}
    steps_of = dialogues(args.script)[:args.dialogues]
    gen = GenerationSettings()
    out = []
    runs = [(int(r), c == "on") for r in args.reuse.split(",") for c in args.choose.split(",")]
    for reuse, choose in runs:
        rows = replay(reuse, steps_of, replies, gen, args.slots, choose)
        out += rows
        print(f"n_cache_reuse {reuse}, {args.slots} slot(s), slot choice {'on' if choose else 'off'}: "
              f"computed {sum(r['computed'] for r in rows)} tokens over {len(rows)} prompts "
              f", median {statistics.median(r['computed'] for r in rows)}, max {max(r['computed'] for r in rows)}; "
              f"{sum(r['seconds'] for r in rows):.1f} s", flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"script": args.script, "records": args.records, "dialogues": args.dialogues, "slots": args.slots,
                       "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
