"""What judging a fact question's answer on the reply's first sentences (ReplyCheckSettings.answer_window)
changes in recorded replies: each `chat --script` transcript's own text (`draft`, else the reply)
checked again with the user's earlier messages and the assistant's earlier replies, once with the
window and once on the whole reply (answer_window=0); every reply whose checked text differs is
printed, and the counts per window (fact questions, replies changed, replies that became the decline,
the decline undone). Issue 54's page-side wait; docs/replies.md.

    PYTHONPATH=. .venv/bin/python scripts/lab/answer_window_offline.py results/replies/chat/*/*.jsonl \
        --windows 1,2,3 --out results/replies/answer-window/offline-1.5b.json
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.reply_check import ReplyCheckSettings, check_reply  # noqa: E402
from core.told_answers import DECLINE, fact_question  # noqa: E402


def replies(path: Path):
    """(user message, own text, earlier user messages, earlier replies) per reply of a transcript."""
    earlier: dict[int, tuple[list[str], list[str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line) if line.strip() else {}
        if "reply" not in r or "turn" not in r:
            continue
        users, said = earlier.setdefault(r["dialogue"], ([], []))
        yield r["user"], r.get("draft") or r["reply"], list(users), list(said)
        users.append(r["user"])
        said.append(r["reply"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records", type=Path, nargs="+")
    p.add_argument("--windows", default="3")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    whole = replace(ReplyCheckSettings(), answer_window=0)
    counts = {w: collections.Counter() for w in windows}
    changes = []
    for path in sorted(args.records):
        for message, text, users, said in replies(path):
            if not fact_question(message, users):
                continue
            before = check_reply(text, message, users, whole, said).text
            for w in windows:
                c = counts[w]
                c["fact_questions"] += 1
                after = check_reply(text, message, users, replace(whole, answer_window=w), said).text
                if after == before:
                    continue
                c["changed"] += 1
                c["declined_now"] += after == DECLINE
                c["decline_undone"] += before == DECLINE
                changes.append({"window": w, "file": path.name, "run": path.parent.name, "message": message,
                                "own": text, "before": before, "after": after})
    for change in changes:
        print(f"[{change['window']}] {change['run']}/{change['file']} {change['message']!r}\n   own: {change['own'][:300]!r}\n"
              f"   before: {change['before'][:160]!r}\n   after:  {change['after'][:160]!r}")
    summary = {"records": len(args.records), "by_window": {str(w): dict(c) for w, c in counts.items()}, "changes": changes}
    print(json.dumps(summary["by_window"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
