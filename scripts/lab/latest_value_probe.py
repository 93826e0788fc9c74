"""One-off probe (issue 52): would one more sentence in the shared chat opening, saying that when
the user changed something the latest holds, answer changed values right more often?

Most told-fact misses of the dev runs are changed values answered with the old one ("I was meant
to retire in June next year, but the depot asked me to stay on until Christmas" -> "You retire in
June next year"; the Ghana trip moved to December -> "in July"). This replays recorded dialogues (the
users' turns and a method's recorded replies as the history) and asks each told-fact question
whose wording asks for the present value (now, these days, again, new, this season, instead),
plus the first `--controls` other told questions of each script, with the shared layout and a note
of the `--top` earlier user sentences closest to the question (a plain retrieval memory), under the
opening as it is and with `--extra` appended, `--samples` times at the chat's temperature. Right =
an expected answer in the model's own text and after the reply check.

    PYTHONPATH=. .venv/bin/python scripts/lab/latest_value_probe.py \
        --pairs benchmarks/memory_long_dev.jsonl=results/replies/chat/long-dev-run9/rag.jsonl \
                benchmarks/conversational_dev.jsonl=results/replies/chat/conversational-run8/rag.jsonl \
                benchmarks/conversational_long_dev.jsonl=results/replies/chat/conversational-long/rag.jsonl \
        --out results/replies/latest-value-probe/probe.jsonl

Measured 2026-11-29: docs/replies.md, "The latest value: probed, not taken".
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from core.benchmarks.replies import split_dialogues
from core.chat import read_script
from core.config import GenerationSettings, LLMSettings
from core.methods.layout import layout_prompt, memory_message
from core.methods.render import chat_system
from core.reply_check import check_reply
from core.toolkit import make_toolkit
from scripts.lab.fact_form_probe import history, read_pair, write_rows
from scripts.lab.fact_temperature_probe import score
from scripts.lab.window_note_probe import top_sentences

EXTRA = "If they told you something changed, answer with what holds now."
PRESENT = re.compile(r"\b(now|these days|again|new|this season|instead)\b", re.IGNORECASE)


def questions(script: str, controls: int) -> list[tuple[int, int, object, str]]:
    """(dialogue, turn, step, kind) of the present-value questions and the first `controls` others."""
    out, others = [], 0
    for d, steps in enumerate(split_dialogues(read_script(script))):
        for t, step in enumerate(steps):
            if not step.expect:
                continue
            if PRESENT.search(step.user):
                out.append((d, t, step, "changed"))
            elif others < controls:
                out.append((d, t, step, "control"))
                others += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", nargs="+", required=True, help="SCRIPT=RECORDS: a chat script and the transcript whose replies are the history")
    parser.add_argument("--extra", default=EXTRA)
    parser.add_argument("--controls", type=int, default=2)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    gen = GenerationSettings()
    tools = make_toolkit(LLMSettings())
    systems = {"as is": chat_system(gen.reply_sentences), "latest": chat_system(gen.reply_sentences) + " " + args.extra}
    rows = []
    for pair in args.pairs:
        script, dialogues, replies = read_pair(pair)
        for d, t, step, kind in questions(script, args.controls):
            turns = history(dialogues[d], d, t, replies)
            users = [x.text for x in turns if x.role == "user"]
            said = [x.text for x in turns if x.role == "assistant"]
            note = memory_message("\n".join(f"- {s}" for s in top_sentences(tools.embedder, step.user, users, args.top)))
            for name, system in systems.items():
                messages = layout_prompt(system, turns, step.user, gen.max_history_chars, note)
                for k in range(args.samples):
                    own = tools.llm.chat(messages, temperature=gen.temperature, max_tokens=gen.max_tokens).text
                    shown = check_reply(own, step.user, users, earlier_replies=said).text
                    rows.append({"script": Path(script).name, "dialogue": d, "turn": t, "kind": kind, "opening": name,
                                 "sample": k, "question": step.user, "right_own": score(step, own),
                                 "right": score(step, shown), "own": own, "reply": shown})
                    print(f"[{Path(script).stem} {d}/{t} {kind} {name} {k}] {'RIGHT' if rows[-1]['right'] else 'wrong'} "
                          f"{step.user!r} -> {shown!r}", flush=True)
    for kind in ("changed", "control"):
        for name in systems:
            mine = [r for r in rows if r["kind"] == kind and r["opening"] == name]
            print(f"{kind}, opening {name}: own text right {sum(r['right_own'] for r in mine)} of {len(mine)}, "
                  f"after the check {sum(r['right'] for r in mine)} of {len(mine)}")
    write_rows(rows, args.out)


if __name__ == "__main__":
    main()
