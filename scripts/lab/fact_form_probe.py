"""One-off probe (issues 52, 53): would a fact question be answered right more often if the model
first wrote down, unseen by the user, what the user said about it (and what they said later), and
only then the answer?

The told-fact misses left in every dev run are changed values read as the old one ("I was meant to
retire in June next year, but the depot asked me to stay on until Christmas" -> "June next year";
"We were going to visit Ghana in July, but we moved the trip to December." -> "July"). A note of the
closest sentences and an opening that says the latest holds did not help
(`latest_value_probe.py`). This asks the question under three forms of the reply, with the same
layout (system, conversation window, a form message, the question) and the users' turns and a
method's recorded replies as the history:

- `plain`: no form message, the reply as the chat writes it today;
- `said`: "Said: <the user's words that answer it> / Answer: ...";
- `changes`: "Earlier: <what they first said> / Later: <what they said since, or nothing> / Answer: ...".

Right = an expected answer in the part after "Answer:" (the whole text for `plain`), or a decline to
a never-told question. Each question `--samples` times at the chat's temperature.

    PYTHONPATH=. .venv/bin/python scripts/lab/fact_form_probe.py \
        --pairs benchmarks/memory_long_dev.jsonl=results/replies/chat/long-dev-run9/rag.jsonl \
                benchmarks/conversational_long_dev.jsonl=results/replies/chat/conversational-long-8/rag.jsonl \
        --out results/replies/fact-form-probe/probe.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from core.benchmarks.replies import split_dialogues
from core.chat import read_script
from core.config import GenerationSettings, LLMSettings
from core.dialogue import Turn
from core.llm.base import Message
from core.methods.layout import layout_prompt
from core.methods.render import chat_system
from core.toolkit import make_toolkit
from scripts.lab.fact_temperature_probe import score

PRESENT = re.compile(r"\b(now|these days|again|new|this season|instead)\b", re.IGNORECASE)

FORMS = {
    "plain": "",
    "said": ("Answer the user's next question in this form, one line each:\n"
             "Said: the user's own words from earlier in this conversation that answer it, copied; or nothing, if they never said.\n"
             "Answer: one short sentence to the user, saying \"you\". If they never said, say that they haven't told you."),
    "changes": ("Answer the user's next question in this form, one line each:\n"
                "Earlier: what the user first said about it, in their words; or nothing, if they never said.\n"
                "Later: what they said about it after that, if they changed it; or nothing.\n"
                "Answer: one short sentence to the user with what holds now, saying \"you\". If they never said, say that they haven't told you."),
}


def answer_part(text: str) -> str:
    """The text after the last "Answer:" (the whole text when there is none)."""
    found = re.split(r"(?im)^\s*answer\s*:", text)
    return found[-1].strip() if len(found) > 1 else text.strip()


def tally(rows: list[dict], label: str, **match) -> None:
    """Print how many of the rows whose fields equal `match` are right, and their median seconds."""
    mine = [r for r in rows if all(r[k] == v for k, v in match.items())]
    if mine:
        secs = sorted(r["seconds"] for r in mine)
        print(f"{label}: right {sum(r['right'] for r in mine)} of {len(mine)}, median {secs[len(secs) // 2]} s")


def write_rows(rows: list[dict], out: str) -> None:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def read_pair(pair: str) -> tuple[str, list, dict]:
    """SCRIPT=RECORDS: the chat script, its dialogues (each a list of steps) and the recorded
    replies by (dialogue, turn), whose replies stand as the history."""
    script, records = pair.split("=", 1)
    replies = {(r["dialogue"], r["turn"]): r["reply"] for r in map(json.loads, open(records, encoding="utf-8"))}
    return script, split_dialogues(read_script(script)), replies


def history(steps: list, d: int, t: int, replies: dict) -> list[Turn]:
    """The turns before step `t` of dialogue `d`: each user message, then the reply recorded for it."""
    return [x for k, s in enumerate(steps[:t]) for x in (Turn("user", s.user), Turn("assistant", replies.get((d, k), "")))]


def questions(script: str, controls: int, never: int):
    out, others, nevers = [], 0, 0
    for d, steps in enumerate(split_dialogues(read_script(script))):
        for t, step in enumerate(steps):
            if step.expect and PRESENT.search(step.user):
                out.append((d, t, step, "changed"))
            elif step.expect and others < controls:
                out.append((d, t, step, "control"))
                others += 1
            elif step.never_told and nevers < never:
                out.append((d, t, step, "never told"))
                nevers += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", nargs="+", required=True)
    parser.add_argument("--forms", default="plain,said,changes")
    parser.add_argument("--controls", type=int, default=4)
    parser.add_argument("--never", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    gen = GenerationSettings()
    tools = make_toolkit(LLMSettings())
    forms = args.forms.split(",")
    rows = []
    for pair in args.pairs:
        script, dialogues, replies = read_pair(pair)
        for d, t, step, kind in questions(script, args.controls, args.never):
            turns = history(dialogues[d], d, t, replies)
            for form in forms:
                note = Message("system", FORMS[form]) if FORMS[form] else None
                messages = layout_prompt(chat_system(gen.reply_sentences), turns, step.user, gen.max_history_chars, note)
                for k in range(args.samples):
                    start = time.monotonic()
                    text = tools.llm.chat(messages, temperature=gen.temperature, max_tokens=120).text
                    answer = answer_part(text)
                    rows.append({"script": Path(script).name, "dialogue": d, "turn": t, "kind": kind, "form": form, "sample": k,
                                 "question": step.user, "right": score(step, answer), "seconds": round(time.monotonic() - start, 2),
                                 "text": text, "answer": answer})
                    print(f"[{Path(script).stem} {d}/{t} {kind} {form} {k}] {'RIGHT' if rows[-1]['right'] else 'wrong'} "
                          f"{step.user!r} -> {text!r}", flush=True)
    for kind in ("changed", "control", "never told"):
        for form in forms:
            tally(rows, f"{kind}, form {form}", kind=kind, form=form)
    write_rows(rows, args.out)


if __name__ == "__main__":
    main()
