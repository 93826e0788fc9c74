"""Cut a LoCoMo file to each conversation's first N sessions, keeping only the questions whose
evidence lies in them: a short slice for measuring a slow memory (mem0 adds every round with an
LLM call) on the same reader, data and scoring as the full benchmark.

    python scripts/locomo_slice.py --data ../shared/data/locomo/locomo_dev.json --sessions 2 \
        --conversations conv-26 --out /tmp/locomo_slice.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


def session_of(dia_id: str) -> int:
    m = re.match(r"D(\d+):", dia_id)
    return int(m.group(1)) if m else 10**9


def cut(sample: dict, sessions: int) -> dict:
    conv = {k: v for k, v in sample["conversation"].items()
            if not (m := re.match(r"session_(\d+)", k)) or int(m.group(1)) <= sessions}
    qa = [q for q in sample["qa"] if q.get("evidence") and all(session_of(e) <= sessions for e in q["evidence"])]
    return {"sample_id": sample["sample_id"], "conversation": conv, "qa": qa}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, type=Path)
    p.add_argument("--sessions", required=True, type=int)
    p.add_argument("--conversations", default="", help="comma-separated sample ids (default all)")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args()
    wanted = {c for c in args.conversations.split(",") if c}
    data = [cut(s, args.sessions) for s in json.loads(args.data.read_text()) if not wanted or s["sample_id"] in wanted]
    args.out.write_text(json.dumps(data))
    turns = sum(len(v) for s in data for k, v in s["conversation"].items() if re.fullmatch(r"session_\d+", k))
    print(f"{len(data)} conversation(s), {turns} turns, {sum(len(s['qa']) for s in data)} questions -> {args.out}")


if __name__ == "__main__":
    main()
