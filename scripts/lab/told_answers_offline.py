"""What the reply check's never-told test (core/told_answers.py) does to replies recorded without it:
each method's own text (`draft`, else the reply) of a recorded run checked again with the user's
earlier messages, then counted per method: never-told questions declined before and after, told
questions answered right before and after (an expected string in the reply, as `chat --script`
counts), and the other turns the test changed (it should change none); told answers that speak as
the user ("I live in Lyon.") before and after. `--whole` runs the whole reply check (the first
person said as "you", echoes and restatements out), not the never-told test alone. Issue 52;
docs/replies.md.

    PYTHONPATH=. .venv/bin/python scripts/lab/told_answers_offline.py \
        benchmarks/memory_long_blind.jsonl results/replies/blind-long-recall/items.jsonl [--show]
    PYTHONPATH=. .venv/bin/python scripts/lab/told_answers_offline.py \
        benchmarks/conversational_dev.jsonl results/cache-layout/conversational-base.jsonl

A record file is a `bench replies` items.jsonl or a `chat --script` transcript (one method each).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.benchmarks.replies import split_dialogues  # noqa: E402
from core.chat import read_script  # noqa: E402
from core.metrics.abstention import declines  # noqa: E402
from core.reply_check import ReplyCheckSettings, answers_as_user, check_reply  # noqa: E402

ONLY_TOLD = ReplyCheckSettings(drop_echoes=False, second_person=False, drop_said_back=False)  # this test alone


def right(reply: str, expect: tuple[str, ...]) -> bool:
    return any(e.lower() in reply.lower() for e in expect)


def count(script: Path, records: Path, show: bool, whole: bool = False) -> dict[str, dict[str, int]]:
    talks = split_dialogues(read_script(script))
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        if "reply" not in r:
            continue
        step = talks[r["dialogue"]][r["turn"]]
        if step.user != r["user"]:
            raise SystemExit(f"{records}: dialogue {r['dialogue']} turn {r['turn']} is not the script's message")
        earlier = [s.user for s in talks[r["dialogue"]][:r["turn"]]]
        draft = r.get("draft") or r["reply"]
        result = check_reply(draft, step.user, earlier, ReplyCheckSettings() if whole else ONLY_TOLD)
        c = out[r["method"]]
        if step.never_told:
            c["never_told"] += 1
            c["declined_before"] += declines(draft)
            c["declined_after"] += declines(result.text)
        elif step.expect:
            c["told"] += 1
            c["right_before"] += right(draft, step.expect)
            c["right_after"] += right(result.text, step.expect)
            c["told_first_person_before"] += answers_as_user(draft)
            c["told_first_person_after"] += answers_as_user(result.text)
        else:
            c["other"] += 1
            c["other_changed"] += result.text != draft
        if show and result.text != draft:
            print(f"  {r['method']} [{'never' if step.never_told else 'told' if step.expect else 'other'}] "
                  f"{step.user[:70]!r}\n     {draft[:120]!r}\n  -> {result.text[:120]!r}")
    return {m: dict(c) for m, c in out.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("script", type=Path, help="the chat script the records were made from")
    p.add_argument("records", type=Path, nargs="+")
    p.add_argument("--show", action="store_true", help="print every reply the test changed")
    p.add_argument("--whole", action="store_true", help="the whole reply check, not the never-told test alone")
    args = p.parse_args()
    for records in args.records:
        for method, c in count(args.script, records, args.show, args.whole).items():
            print(json.dumps({"records": str(records), "method": method, **c}))


if __name__ == "__main__":
    main()
