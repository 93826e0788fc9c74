"""One-off check (issue 52): does a question about a told fact get it right more often when the
user's sentences that answer it are shown again as a note just before the question, although the
conversation window already holds them?

Every memory method leaves out of its notes what the window shows (core.methods.layout), so on a
dialogue that fits the window a memory question is answered from the window alone. On the long
dev dialogues `dsmart` answered two changed values with the old one ("planned for Tuesday, but
the clinic moved it to Thursday" -> "Tuesday"). This replays the recorded dialogues (the users'
turns and the method's recorded replies as the history) and asks each told-fact question with
the shared layout twice, at the chat temperature, `--samples` times each:

- window: system, window, question (what every method sends when the window holds the facts);
- note: the same plus a note of the `--top` user sentences most similar to the question (the
  default embedder, over every earlier user turn, window included), before the question.

    PYTHONPATH=. .venv/bin/python scripts/lab/window_note_probe.py \
        --script benchmarks/memory_long_dev.jsonl --records results/replies/chat/long-dev-second-try/dsmart.jsonl

Measured 2026-11-29 (2-core CPU, quiet): docs/replies.md, "Notes the window holds".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from core.chat import read_script
from core.config import GenerationSettings, LLMSettings
from core.dialogue import Turn
from core.llm.prompts import render_prompt
from core.methods.layout import layout_prompt, memory_message
from core.methods.render import chat_system
from core.text import split_sentences
from core.toolkit import make_toolkit


def dialogues(script: str) -> list[list]:
    out: list[list] = []
    for step in read_script(script):
        if step.new_dialogue or not out:
            out.append([])
        if not step.new_dialogue:
            out[-1].append(step)
    return [d for d in out if d]


def top_sentences(embedder, query: str, users: list[str], top: int) -> list[str]:
    sentences = [s for text in users for s in split_sentences(text)]
    if not sentences:
        return []
    vectors = np.asarray(embedder.encode([query, *sentences]))
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    order = np.argsort(-(vectors[1:] @ vectors[0]))[:top]
    return [sentences[i] for i in sorted(order)]  # in the order they were said: a change reads last


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", required=True, help="a chat --script JSONL whose replies are the history")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--header", choices=["memory_note", "dsmart_answer"], default="dsmart_answer")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    replies = {(r["dialogue"], r["turn"]): r["reply"] for r in map(json.loads, open(args.records, encoding="utf-8"))}
    tools = make_toolkit(LLMSettings())
    gen = GenerationSettings()
    system = chat_system(gen.reply_sentences)
    rows = []
    for d, steps in enumerate(dialogues(args.script)):
        turns: list[Turn] = []
        for t, step in enumerate(steps):
            if step.expect:
                users = [x.text for x in turns if x.role == "user"]
                note = memory_message("\n".join(f"- {s}" for s in top_sentences(tools.embedder, step.user, users, args.top)),
                                      header=render_prompt(args.header))
                for layout, memory in (("window", None), ("note", note)):
                    messages = layout_prompt(system, turns, step.user, gen.max_history_chars, memory)
                    for k in range(args.samples):
                        t0 = time.perf_counter()
                        text = tools.llm.chat(messages, temperature=gen.temperature, max_tokens=60).text
                        right = any(e.lower() in text.lower() for e in step.expect)
                        rows.append({"dialogue": d, "turn": t, "layout": layout, "sample": k, "right": right,
                                     "seconds": round(time.perf_counter() - t0, 2), "question": step.user, "reply": text,
                                     **({"note": note.content.splitlines()[1:]} if memory else {})})
                        print(f"[{d}/{t} {layout} {k}] {'RIGHT' if right else 'wrong'} {step.user!r} -> {text!r}", flush=True)
            turns += [Turn("user", step.user), Turn("assistant", replies.get((d, t), ""))]
    for layout in ("window", "note"):
        mine = [r for r in rows if r["layout"] == layout]
        print(f"{layout}: right {sum(r['right'] for r in mine)} of {len(mine)}, "
              f"median {statistics.median(r['seconds'] for r in mine):.2f} s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
