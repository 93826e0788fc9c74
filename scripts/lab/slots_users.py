"""Does one person's conversation keep its place in the model's cache while others talk? (issue 53,
deliverable 2: "a second user does not evict the first"; docs/speed.md).

K people chat with the embedded server in turn (A, B, C, A, B, C, ...), each through their own
dialogue of benchmarks/conversational_dev.jsonl (the statements, in order), with the chat opening
every method shares and their whole conversation so far. The server has its default two slots and
its RAM prompt cache. For each request llama.cpp reports the prompt tokens it computed and those it
reused; a conversation that kept its place computes only its new message (and the last reply's
template tokens), one that lost it computes everything again.

    .venv/bin/python scripts/lab/slots_users.py --users 1,2,3 --turns 6 --similarity -1 --out results/cache-layout/slots-users.json
    .venv/bin/python scripts/lab/slots_users.py --users 2,3 --turns 6 --similarity 0.8 --out results/cache-layout/slots-users-similarity-0.8.json
    .venv/bin/python scripts/lab/slots_users.py --users 2,3 --turns 6 \
        --choose on --out results/cache-layout/slots-users-choose.json

The first two ran before the slot choice (core/llm/slot_choice.py) existed: the server chose the slot,
as with `--choose off` now.
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

from core.benchmarks.replies import split_dialogues  # noqa: E402
from core.chat import read_script  # noqa: E402
from core.llm import cost  # noqa: E402
from core.llm.base import Message  # noqa: E402
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions  # noqa: E402
from core.methods.render import chat_system  # noqa: E402


def dialogues(path: Path, turns: int) -> list[list[str]]:
    """The statements of each dialogue of a chat script (its questions left out), the first `turns` of each."""
    return [[s.user for s in talk if s.user and not (s.expect or s.never_told)][:turns]
            for talk in split_dialogues(read_script(path))]


def play(llm: LlamaCppLLM, talks: list[list[str]], max_tokens: int) -> list[dict]:
    """Each person in turn sends their next message with their conversation so far."""
    history: list[list[Message]] = [[Message("system", chat_system())] for _ in talks]
    rows = []
    for turn in range(min(len(t) for t in talks)):
        for who, talk in enumerate(talks):
            history[who].append(Message("user", talk[turn]))
            with cost.measure() as meter:
                t0 = time.perf_counter()
                reply = llm.chat(history[who], temperature=0.0, max_tokens=max_tokens).text
                seconds = time.perf_counter() - t0
            work = cost.totals(meter.as_dict())
            history[who].append(Message("assistant", reply))
            rows.append({"who": who, "turn": turn, "computed": work.get("processed_tokens", 0),
                         "reused": work.get("cached_tokens", 0), "prefill_s": round(work.get("prefill_s", 0.0), 3),
                         "seconds": round(seconds, 3)})
    return rows


def summary(users: int, rows: list[dict]) -> dict:
    later = [r for r in rows if r["turn"] > 0]  # a first message has nothing to reuse
    return {"users": users, "requests": len(rows),
            "computed_median": statistics.median(r["computed"] for r in later),
            "computed_max": max(r["computed"] for r in later),
            "reused_median": statistics.median(r["reused"] for r in later),
            "prefill_s_median": round(statistics.median(r["prefill_s"] for r in later), 3),
            "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", type=Path, default=ROOT / "benchmarks" / "conversational_dev.jsonl")
    p.add_argument("--users", default="1,2,3", help="how many people take turns, one run each")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--max-tokens", type=int, default=24)
    p.add_argument("--similarity", type=float, default=LlamaCppOptions.slot_prompt_similarity,
                   help="the server's slot_prompt_similarity (default: LlamaCppOptions'; a negative value: llama.cpp's own)")
    p.add_argument("--choose", choices=("on", "off"), default="on",
                   help="pin each request to the slot holding most of its prompt (LlamaCppOptions.choose_slots)")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    talks = dialogues(args.script, args.turns)
    runs = []
    for k in (int(x) for x in args.users.split(",")):
        # a fresh server each run: no cache carried over
        similarity = None if args.similarity is not None and args.similarity < 0 else args.similarity
        llm = LlamaCppLLM(LlamaCppOptions(seed=0, slot_prompt_similarity=similarity, choose_slots=args.choose == "on"))
        try:
            llm.chat("Say OK.", temperature=0.0, max_tokens=4)
            runs.append(summary(k, play(llm, talks[:k], args.max_tokens)))
        finally:
            llm.close()
        print(json.dumps({key: v for key, v in runs[-1].items() if key != "rows"}), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"command": "python scripts/lab/slots_users.py " + " ".join(sys.argv[1:]),
                                        "slots": LlamaCppOptions().slots, "slot_prompt_similarity": args.similarity,
                                        "choose_slots": args.choose,
                                        "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
