"""What the reply check (core/reply_check.py) does to replies recorded without it: each reply of a
`bench replies` items.jsonl is checked against its dialogue's user turns and scored again.

Offline, so the memory effect is missing: in a live run the checked reply is what the method's
memory takes in (a first-person restatement is not copied again from memory). Prints, per method,
the bar's defect counts before and after, the replies changed, and how many answers the check
turned from right to wrong (it must be none: it only drops echoed sentences and changes persons).

    PYTHONPATH=. .venv/bin/python scripts/lab/reply_check_offline.py results/replies/opening-long-default/items.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from core.metrics.reply_defects import ReplyCase, score_reply
from core.reply_check import check_reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", help="a bench replies items.jsonl recorded without the reply check")
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.items, encoding="utf-8") if line.strip()]
    earlier: dict[tuple[str, int], list[str]] = defaultdict(list)
    previous: dict[tuple[str, int], str] = {}
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in sorted(rows, key=lambda r: (r["method"], r["dialogue"], r["turn"])):
        key = (r["method"], r["dialogue"])
        checked = check_reply(r["reply"], r["user"], earlier[key])
        expect = tuple(r.get("expected", ()))
        before = score_reply(ReplyCase(r["reply"], r["user"], tuple(earlier[key]), expect, previous.get(key, "")))
        after = score_reply(ReplyCase(checked.text, r["user"], tuple(earlier[key]), expect, previous.get(key, "")))
        m = out[r["method"]]
        m["replies"] += 1
        m["changed"] += checked.changed
        m["dropped_sentences"] += len(checked.dropped)
        m["rewritten_sentences"] += len(checked.rewritten)
        for name, score in (("before", before), ("after", after)):
            m[f"defective_{name}"] += score.defective
            m[f"voice_{name}"] += bool(score.voice)
            m[f"echo_{name}"] += score.echo
            m[f"correct_{name}"] += bool(score.correct)
        m["right_to_wrong"] += bool(before.correct) and not after.correct
        m["whole_echo_kept_then_rewritten"] += before.echo and not after.echo and not checked.dropped
        earlier[key].append(r["user"])
        previous[key] = r["reply"]
    print(json.dumps({k: dict(v) for k, v in out.items()}, indent=1))


if __name__ == "__main__":
    main()
