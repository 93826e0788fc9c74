"""One-off check (issue 53, deliverable 2, "a second user does not evict the first", live): several
people chat at the same time through the real methods on one embedded model, each in their own
dialogue, taking turns message by message (A, B, C, A, B, C, ...), as `chat --script` sends them
for one person.

Each person is a `ChatSession` of their own method (own store, memory and reply check, the NLI
judge as the Chat page has it) over ONE toolkit, so every reply goes to the same llama.cpp server
with its default two slots and the slot choice. Person k takes dialogue `first + k` of the script.
Per person, the records are those of `chat --script` (prompt tokens computed and reused, first
words, reply, told facts); compare them with the same dialogues answered by one person alone
(`results/replies/chat/conversational-long-5/`).

    PYTHONPATH=. .venv/bin/python scripts/lab/people_in_turn.py --methods dsmart,rag,dsm \
        --out results/cache-layout/people-in-turn.json

Measured 2026-11-29: docs/speed.md, "Several people at once, live".
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from core.chat import ChatSession, nli_judge, read_script, scored
from core.config import LLMSettings
from core.toolkit import make_toolkit


def dialogue_steps(script: Path, index: int) -> list:
    """The user steps of the script's dialogue `index` (0-based)."""
    dialogues, current = [], None
    for step in read_script(script):
        if step.new_dialogue or current is None:
            current = []
            dialogues.append(current)
            if step.new_dialogue:
                continue
        current.append(step)
    return [s for s in dialogues[index] if s.user]


def figures(records: list[dict]) -> dict:
    """Medians over the replies after a person's first, and the told facts right."""
    after = records[1:]
    med = lambda key: round(float(statistics.median(r[key] for r in after if r.get(key) is not None)), 3)  # noqa: E731
    told = [r for r in records if "expected" in r]
    return {"replies": len(records), "prompt_computed": med("prompt_computed"), "prompt_reused": med("prompt_reused"),
            "first_text_s": med("first_text_s"), "seconds": med("seconds"),
            "computed_300_plus": sum(r["prompt_computed"] >= 300 for r in after if r.get("prompt_computed") is not None),
            "told_right": [sum(r["correct"] for r in told), len(told)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", type=Path, default=Path("benchmarks/conversational_long_dev.jsonl"))
    parser.add_argument("--methods", default="dsmart,rag,dsm", help="one person per method, in turn order")
    parser.add_argument("--first", type=int, default=0, help="the dialogue of the first person")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    methods = args.methods.split(",")
    tools = make_toolkit(LLMSettings())
    judge = nli_judge()
    people = [ChatSession(m, tools, judge=judge) for m in methods]
    steps = [dialogue_steps(args.script, args.first + k) for k in range(len(people))]
    records: list[list[dict]] = [[] for _ in people]
    for turn in range(max(len(s) for s in steps)):
        for k, person in enumerate(people):
            if turn < len(steps[k]):
                record = scored(person.send(steps[k][turn].user), steps[k][turn])
                records[k].append({"person": k, "dialogue": args.first + k, **record})
    out = {
        "command": f"PYTHONPATH=. python scripts/lab/people_in_turn.py --methods {args.methods} --first {args.first} "
                   f"--out {args.out}",
        "script": str(args.script),
        "people": [{"method": m, "dialogue": args.first + k, **figures(records[k])} for k, m in enumerate(methods)],
        "records": [r for person in records for r in person],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(out["people"], indent=1))


if __name__ == "__main__":
    main()
