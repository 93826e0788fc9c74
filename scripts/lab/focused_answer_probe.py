"""One-off probe (issues 52, 53): is a question about a told fact answered right more often from a
short prompt of only the user's earlier words that bear on it, than from the whole conversation?

The misses left in every dev run are values the user changed, read from a long window ("I was meant
to retire in June next year, but the depot asked me to stay on until Christmas" -> "June"). Given
only the message with the change, the model answered two of the three most missed questions 6 of 6
(docs/replies.md, run 8). This asks every told and never-told question of the scripts with the
users' turns and a method's recorded replies as the history, `--samples` times at the chat's
temperature, under:

- `window`: the shared layout as the chat builds it today (system, window, question);
- `msg3`: system, a memory note of the 3 earlier user messages closest to the question (the default
  embedder; in the order said, in the second person as every method's notes are), question;
- `sent5`: the same with the 5 closest user sentences;
- `window+msg3`: the `window` prompt with `msg3`'s note between the window and the question (the
  layout every method has, its note not cut to what the window leaves out).

Right = an expected answer in the text; never told = the text declines (core.metrics.abstention).

    PYTHONPATH=. .venv/bin/python scripts/lab/focused_answer_probe.py \\
        --pairs benchmarks/memory_long_dev.jsonl=results/replies/chat/long-dev-run9/rag.jsonl \\
                benchmarks/conversational_long_dev.jsonl=results/replies/chat/conversational-long-8/rag.jsonl \\
        --out results/replies/focused-answer-probe/probe.jsonl
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from core.config import GenerationSettings, LLMSettings
from core.dialogue import Evidence
from core.llm.base import Message
from core.methods.layout import layout_prompt, memory_message
from core.methods.render import chat_system, memory_notes
from core.text import split_sentences
from core.toolkit import make_toolkit
from scripts.lab.fact_form_probe import history, read_pair, tally, write_rows
from scripts.lab.fact_temperature_probe import score


def closest(embedder, query: str, texts: list[str], k: int) -> list[str]:
    if not texts:
        return []
    vectors = embedder.encode([query, *texts])
    order = np.argsort(-(vectors[1:] @ vectors[0]))[:k]
    return [texts[i] for i in sorted(order)]  # in the order said


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", nargs="+", required=True)
    parser.add_argument("--forms", default="window,msg3,sent5")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--told-only", action="store_true", help="leave out the never-told questions")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    gen = GenerationSettings()
    tools = make_toolkit(LLMSettings())
    system = chat_system(gen.reply_sentences)
    rows = []
    for pair in args.pairs:
        script, dialogues, replies = read_pair(pair)
        for d, steps in enumerate(dialogues):
            for t, step in enumerate(steps):
                if not (step.expect or (step.never_told and not args.told_only)):
                    continue
                kind = "told" if step.expect else "never told"
                turns = history(steps, d, t, replies)
                users = [x.text for x in turns if x.role == "user"]
                for form in args.forms.split(","):
                    if form == "window":
                        messages = layout_prompt(system, turns, step.user, gen.max_history_chars)
                    elif form == "window+msg3":  # the same note after the whole window (cache-friendly)
                        picked = closest(tools.embedder, step.user, users, 3)
                        note = memory_message(memory_notes([Evidence(f"User: {p}", 0.0, "") for p in picked]))
                        messages = layout_prompt(system, turns, step.user, gen.max_history_chars, note)
                    else:
                        texts = users if form == "msg3" else [s for u in users for s in split_sentences(u)]
                        picked = closest(tools.embedder, step.user, texts, 3 if form == "msg3" else 5)
                        note = memory_message(memory_notes([Evidence(f"User: {p}", 0.0, "") for p in picked]))
                        messages = [Message("system", system), *([note] if note else []), Message("user", step.user)]
                    for k in range(args.samples):
                        start = time.monotonic()
                        text = tools.llm.chat(messages, temperature=gen.temperature, max_tokens=gen.max_tokens).text
                        rows.append({"script": Path(script).name, "dialogue": d, "turn": t, "kind": kind, "form": form,
                                     "sample": k, "question": step.user, "right": score(step, text),
                                     "seconds": round(time.monotonic() - start, 2), "text": text})
                        print(f"[{Path(script).stem} {d}/{t} {kind} {form} {k}] {'RIGHT' if rows[-1]['right'] else 'wrong'} "
                              f"{step.user!r} -> {text!r}", flush=True)
    for script in sorted({r["script"] for r in rows}):
        for kind in ("told", "never told"):
            for form in args.forms.split(","):
                tally(rows, f"{script} {kind}, {form}", script=script, kind=kind, form=form)
    write_rows(rows, args.out)


if __name__ == "__main__":
    main()
