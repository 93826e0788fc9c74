"""One-off check (issue 52): what a change of the reply check does to recorded replies, before a
live run. Each reply's method text (its `draft`, else the reply itself) of `bench replies`
items.jsonl files goes through the check of git revision `--before` and through the working
tree's, against the same dialogue (the user's earlier messages, the assistant's earlier replies as
recorded). Counts per file: replies the two checks make differently, statement turns left with a
bare acknowledgement or greeting (core.metrics.saying_back.bare: no question, two content words at
most), replies each would have written again, and, on statements, the replies the benchmark counts as
said back (core.metrics.saying_back.restates on the whole reply) among those shown.

Offline, so the history effect is missing: in a live run the checked reply is what the next prompt
shows, and the model copies a pattern it was shown ("Hi!" eight turns in a row).

    PYTHONPATH=. .venv/bin/python scripts/lab/check_change_offline.py --before 9eb0715 results/replies/conversational-run7/items.jsonl

Measured 2026-11-29: docs/replies.md, "Questions back and bare greetings".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from core import reply_check as after_check
from core.metrics.saying_back import bare, restates
from core.reply_check import asks_nothing, told_part


def check_of(revision: str):
    """core/reply_check.py as it was at `revision`, imported as a module of its own."""
    source = subprocess.run(["git", "show", f"{revision}:core/reply_check.py"], check=True, capture_output=True,
                            text=True).stdout
    path = Path(tempfile.mkdtemp()) / "reply_check_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("reply_check_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def written_again(checked) -> bool:
    return bool(getattr(checked, "nothing_new", getattr(checked, "said_back_only", False)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="+")
    parser.add_argument("--before", required=True, help="git revision of the check to compare with")
    parser.add_argument("--show", type=int, default=6, help="examples of changed replies to print")
    args = parser.parse_args()
    before_check = check_of(args.before)
    for path in args.items:
        rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        earlier_user: dict[tuple, list[str]] = defaultdict(list)
        earlier_replies: dict[tuple, list[str]] = defaultdict(list)
        n = defaultdict(int)
        shown = 0
        for r in sorted(rows, key=lambda r: (r["method"], r["dialogue"], r["turn"])):
            key = (r["method"], r["dialogue"])
            text, message = r.get("draft") or r["reply"], r["user"]
            old = before_check.check_reply(text, message, earlier_user[key], before_check.ReplyCheckSettings(),
                                           earlier_replies[key])
            new = after_check.check_reply(text, message, earlier_user[key], after_check.ReplyCheckSettings(),
                                          earlier_replies[key])
            n["replies"] += 1
            n["statements"] += asks_nothing(message)
            for name, checked in (("before", old), ("after", new)):
                again = written_again(checked)
                n[f"{name}_written_again"] += again
                if asks_nothing(message) and not again:
                    n[f"{name}_bare_on_statements"] += bare(checked.text)
                    n[f"{name}_said_back_on_statements"] += restates(checked.text, told_part(message))
            if (old.text, written_again(old)) != (new.text, written_again(new)):
                n["different"] += 1
                if shown < args.show:
                    shown += 1
                    print(f"  {r['method']} {r['dialogue']}/{r['turn']} {message[:70]!r}\n    method: {text!r}\n"
                          f"    before: {old.text!r}{' (written again)' if written_again(old) else ''}\n"
                          f"    after:  {new.text!r}{' (written again)' if written_again(new) else ''}")
            earlier_user[key].append(message)
            earlier_replies[key].append(r["reply"])
        print(path, json.dumps(dict(n)))


if __name__ == "__main__":
    main()
