"""One-off check (issue 52): does a question about a told fact get it right more often when the
user's sentences that answer it are shown again as a note just before the question, although the
conversation window already holds them?

Every memory method leaves out of its notes what the window shows (core.methods.layout), so on a
dialogue that fits the window a memory question is answered from the window alone. On the long
dev dialogues `dsmart` answered two changed values with the old one ("planned for Tuesday, but
the clinic moved it to Thursday" -> "Tuesday"). This replays the recorded dialogues (the users'
turns and the method's recorded replies as the history) and asks each told-fact question with
the shared layout twice, at the chat temperature, `--samples` times each (split below by whether
the answer is in a user turn the window shows; outside it, a method shows it as a note anyway):

- window: system, window, question (what every method sends when the window holds the facts);
- note: the same plus a note of the `--top` user sentences most similar to the question (the
  default embedder, over every earlier user turn, window included), before the question.

    PYTHONPATH=. .venv/bin/python scripts/lab/window_note_probe.py \
        --script benchmarks/memory_long_dev.jsonl --records results/replies/chat/long-dev-second-try/dsmart.jsonl \
        --out results/replies/window-note-probe/long-dev.jsonl

Measured 2026-11-29 (2-core CPU, quiet): docs/replies.md, "Notes the window holds".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from core.benchmarks.replies import split_dialogues
from core.chat import read_script
from core.config import GenerationSettings, LLMSettings
from core.dialogue import Turn
from core.llm.prompts import render_prompt
from core.methods.layout import conversation_window, layout_prompt, memory_message
from core.methods.render import chat_system
from core.text import split_sentences
from core.toolkit import make_toolkit


def dialogues(script: str) -> list[list]:
    return split_dialogues(read_script(script))


def top_sentences(embedder, query: str, users: list[str], top: int) -> list[str]:
    sentences = [s for text in users for s in split_sentences(text)]
    if not sentences:
        return []
    vectors = embedder.encode([query, *sentences])  # rows of unit length (core.resources.Embedder)
    order = np.argsort(-(vectors[1:] @ vectors[0]))[:top]
    return [sentences[i] for i in sorted(order)]  # in the order they were said: a change reads last


def in_window(script: str, replies: dict, gen: GenerationSettings) -> dict[tuple[int, int], bool]:
    """For each told-fact question, whether an expected answer is in a user turn the window shows."""
    out = {}
    for d, steps in enumerate(dialogues(script)):
        turns: list[Turn] = []
        for t, step in enumerate(steps):
            if step.expect:
                shown = " ".join(x.text for x in conversation_window(turns, gen.max_history_chars) if x.role == "user")
                out[(d, t)] = any(e.lower() in shown.lower() for e in step.expect)
            turns += [Turn("user", step.user), Turn("assistant", replies.get((d, t), ""))]
    return out


def summarise(rows: list[dict], window: dict[tuple[int, int], bool]) -> None:
    for held in (True, False):
        questions = {k for k, v in window.items() if v == held}
        for layout in ("window", "note"):
            mine = [r for r in rows if r["layout"] == layout and (r["dialogue"], r["turn"]) in questions]
            if mine:
                print(f"answer {'in' if held else 'outside'} the window ({len(questions)} questions), {layout}: "
                      f"right {sum(r['right'] for r in mine)} of {len(mine)}, "
                      f"median {statistics.median(r['seconds'] for r in mine):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", required=True, help="a chat --script JSONL whose replies are the history")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--header", choices=["memory_note", "dsmart_answer"], default="dsmart_answer")
    parser.add_argument("--out", default="")
    parser.add_argument("--rows", default="", help="summarise the rows of an earlier run (its --out) instead")
    args = parser.parse_args()
    replies = {(r["dialogue"], r["turn"]): r["reply"] for r in map(json.loads, open(args.records, encoding="utf-8"))}
    gen = GenerationSettings()
    if args.rows:
        summarise([json.loads(line) for line in open(args.rows, encoding="utf-8")], in_window(args.script, replies, gen))
        return
    tools = make_toolkit(LLMSettings())
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
    summarise(rows, in_window(args.script, replies, gen))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
