"""One-off check (issues 52, 53): are memory questions answered right more often when the reply is
written greedily (temperature 0) instead of at the chat's 0.8?

The told-fact misses on the long dev dialogues are the model's reading with the answer in front of
it ("We were going to visit Ghana in July, but we moved the trip to December." -> "in July"; Rui's
job answered with the user's own). Sampling at 0.8 from a 1.5B model spreads its answers; this
replays the recorded dialogues (the users' turns and a method's recorded replies as the history)
and asks each question with a memory answer (`expect`) or about a fact never given (`never_told`)
with the shared layout and a memory note (system, window, a note of the `--top` earlier user
sentences most similar to the question, question: a plain retrieval memory; the long dialogues
outgrow the window), `--samples` times at each temperature. Right = an expected answer in the text;
never told = the text declines (core.metrics.abstention). Both for the model's own text and after
the reply check (core.reply_check), as the Chat page shows it.

    PYTHONPATH=. .venv/bin/python scripts/lab/fact_temperature_probe.py \
        --script benchmarks/memory_long_dev.jsonl --records results/replies/chat/long-dev-cache-reuse/dsmart.jsonl \
        --out results/replies/fact-temperature-probe/long-dev.jsonl

Measured 2026-11-29: docs/replies.md, "Greedy answers to memory questions: probed".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.benchmarks.replies import split_dialogues
from core.chat import read_script
from core.config import GenerationSettings, LLMSettings
from core.dialogue import Turn
from core.llm.prompts import render_prompt
from core.methods.layout import layout_prompt, memory_message
from core.methods.render import chat_system
from core.metrics.abstention import declines
from core.reply_check import check_reply
from core.toolkit import make_toolkit
from scripts.lab.window_note_probe import top_sentences


def score(step, text: str) -> bool:
    """Right: an expected answer in the text, or a decline to a never-told question."""
    if step.never_told:
        return declines(text)
    return any(e.lower() in text.lower() for e in step.expect)


def summarise(rows: list[dict]) -> None:
    for kind in ("told", "never told"):
        for temperature in sorted({r["temperature"] for r in rows}):
            mine = [r for r in rows if r["kind"] == kind and r["temperature"] == temperature]
            if mine:
                print(f"{kind}, temperature {temperature}: own text right {sum(r['right_own'] for r in mine)} of {len(mine)}, "
                      f"after the check {sum(r['right'] for r in mine)} of {len(mine)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", required=True, help="a chat --script JSONL whose replies are the history")
    parser.add_argument("--temperatures", default="0.8,0.0")
    parser.add_argument("--top", type=int, default=3, help="earlier user sentences in the note")
    parser.add_argument("--samples", type=int, default=3, help="samples per question at a temperature above 0")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    replies = {(r["dialogue"], r["turn"]): r["reply"] for r in map(json.loads, open(args.records, encoding="utf-8"))}
    gen = GenerationSettings()
    tools = make_toolkit(LLMSettings())
    system = chat_system(gen.reply_sentences)
    rows = []
    for d, steps in enumerate(split_dialogues(read_script(args.script))):
        turns: list[Turn] = []
        for t, step in enumerate(steps):
            if step.expect or step.never_told:
                users = [x.text for x in turns if x.role == "user"]
                note = memory_message("\n".join(f"- {s}" for s in top_sentences(tools.embedder, step.user, users, args.top)),
                                      header=render_prompt("dsmart_answer"))
                messages = layout_prompt(system, turns, step.user, gen.max_history_chars, note)
                said = [x.text for x in turns if x.role == "assistant"]
                for temperature in (float(x) for x in args.temperatures.split(",")):
                    for k in range(args.samples if temperature > 0 else 1):
                        own = tools.llm.chat(messages, temperature=temperature, max_tokens=gen.max_tokens).text
                        shown = check_reply(own, step.user, users, earlier_replies=said).text
                        rows.append({"dialogue": d, "turn": t, "kind": "never told" if step.never_told else "told",
                                     "temperature": temperature, "sample": k, "question": step.user,
                                     "right_own": score(step, own), "right": score(step, shown), "own": own, "reply": shown})
                        print(f"[{d}/{t} T={temperature} {k}] {'RIGHT' if rows[-1]['right'] else 'wrong'} "
                              f"{step.user!r} -> {shown!r}", flush=True)
            turns += [Turn("user", step.user), Turn("assistant", replies.get((d, t), ""))]
    summarise(rows)
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
