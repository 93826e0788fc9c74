"""One-off count (issue 52): facts the DSM took from the assistant's own words, and from its
questions back in particular ("What's your favorite thing about being a swimmer?" made the user's
favourite thing a swimmer), when recorded transcripts are replayed into a fresh memory.

Replays each `chat --script` transcript (the users' turns and the recorded replies) into a
`DynamicStructuredMemory` without an LLM (the rule extractor, as the methods run it by default),
one dialogue at a time, and counts per transcript: the rounds whose reply asks something, the facts
only the assistant stated (`TurnRecord.assistant_only`), and those of them added in a round whose
reply asked something. Run with the code before and after a change, and compare.

    PYTHONPATH=. .venv/bin/python scripts/lab/assistant_question_facts.py \
        results/replies/chat/conversational-long-3/dsmart.jsonl results/replies/chat/conversational-long-3/dsm.jsonl

Measured 2026-11-29: docs/replies.md, "Run 3, and a name asked for is a name given".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.methods.dsmart.memory import DynamicStructuredMemory


def count(records: Path) -> dict:
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines() if line.strip()]
    dialogues: dict[int, list[dict]] = {}
    for r in rows:
        if "reply" in r:
            dialogues.setdefault(r["dialogue"], []).append(r)
    out = {"records": str(records), "rounds": 0, "replies_asking": 0, "assistant_only_facts": 0,
           "assistant_only_in_asking_rounds": 0, "facts_at_end": 0}
    for d in sorted(dialogues):
        memory = DynamicStructuredMemory(None, strong=False)
        for r in sorted(dialogues[d], key=lambda r: r["turn"]):
            record = memory.observe_round(r["user"], r["reply"], r["turn"])
            asks = "?" in r["reply"]
            out["rounds"] += 1
            out["replies_asking"] += asks
            out["assistant_only_facts"] += len(record.assistant_only)
            out["assistant_only_in_asking_rounds"] += len(record.assistant_only) if asks else 0
        out["facts_at_end"] += len(memory.facts())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, nargs="+", help="chat --script transcripts")
    args = parser.parse_args()
    for records in args.records:
        print(json.dumps(count(records)))


if __name__ == "__main__":
    main()
