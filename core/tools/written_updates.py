"""Turn written knowledge-update pairs (benchmarks/knowledge_updates_written*.jsonl) into a LongMemEval-layout file for `dsm-updates`.

The written pairs are knowledge updates of the kinds issue 19 names (possessions, counts, places,
jobs, habits, plans), phrased the way LongMemEval users phrase them but written by us, not taken from
the dev split: `dsm-updates` on them shows how the extractor's rules carry to sentences they were not
written from. Each pair becomes two dated sessions: a filler round, then the user turn with the
earlier (or later) statement flagged `has_answer`, each answered by a generic reply that repeats no
value.

    .venv/bin/python -m core written-updates benchmarks/knowledge_updates_written.jsonl OUT.json
    .venv/bin/python -m core bench dsm-updates --data OUT.json --explain --out DIR
"""

from __future__ import annotations

import json
from pathlib import Path

FILLER = ("Can you give me a tip for staying organised this week?",
          "Sure! Write down the three things that matter most each morning and do those first.")
REPLY = "That sounds great! Here are a few ideas you could try: start small, keep a simple routine, and check in on how it goes."
DATES = ("2023/03/04 (Sat) 10:12", "2023/07/19 (Wed) 18:40")
BETWEEN_DATES = ("2023/05/11 (Thu) 14:05", "2023/06/02 (Fri) 08:30", "2023/06/24 (Sat) 16:45")


def session(statement: str, evidence: bool = True) -> list[dict]:
    said = {"role": "user", "content": statement, **({"has_answer": True} if evidence else {})}
    return [{"role": "user", "content": FILLER[0]}, {"role": "assistant", "content": FILLER[1]},
            said, {"role": "assistant", "content": REPLY}]


def instance(pair: dict) -> dict:
    """Two dated sessions (earlier, later), with the optional `between` statements as sessions of
    their own in between: an update spread across sessions, whose middle ones are no evidence."""
    between = pair.get("between", [])
    ids = [f"written_{pair['id']}_1", *(f"written_{pair['id']}_b{i + 1}" for i in range(len(between))),
           f"written_{pair['id']}_2"]
    sessions = [session(pair["earlier"]), *(session(s, evidence=False) for s in between), session(pair["later"])]
    return {"question_id": f"written_{pair['id']}", "question_type": "knowledge-update", "question": pair["question"],
            "answer": pair["answer"], "question_date": "2023/08/01 (Tue) 09:00",
            "haystack_dates": [DATES[0], *BETWEEN_DATES[: len(between)], DATES[1]],
            "haystack_session_ids": ids, "answer_session_ids": [ids[0], ids[-1]], "haystack_sessions": sessions}


def add_arguments(parser) -> None:
    parser.add_argument("pairs", type=Path, help="JSONL: id, earlier, later, question, answer (optional: between, a list of statements)")
    parser.add_argument("out", type=Path, help="LongMemEval-layout JSON to write")


def main(args) -> int:
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    args.out.write_text(json.dumps([instance(p) for p in pairs], indent=1), encoding="utf-8")
    print(f"{len(pairs)} instances -> {args.out}")
    return 0
