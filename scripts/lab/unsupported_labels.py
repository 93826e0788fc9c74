"""Precision and recall of the unsupported-attribution check (core.metrics.unsupported) against
the hand labels of benchmarks/attribution_labels.jsonl (issue 52).

Each label names a reply of an earlier `bench replies` run (its items.jsonl, method, dialogue,
turn); the user's messages up to that turn are read from the same file. Reported per set: the
130 `tuning` labels (the check's rules were adjusted while reading where it disagreed with them)
and the 50 `held-out` ones (labelled after the rules were fixed, before the check ran on them),
and all together. `--show` lists the disagreements; `--or-attribution` counts a reply flagged by
either this check or reply_defects' `attribution` (a third person's fact said of "you"; this
union was tried after the held-out labels were read).

    PYTHONPATH=. .venv/bin/python scripts/lab/unsupported_labels.py [--show] [--or-attribution]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.metrics.reply_defects import attribution_clauses
from core.metrics.unsupported import unsupported_claims

LABELS = Path("benchmarks/attribution_labels.jsonl")


def user_turns(run: Path, method: str, dialogue: int, turn: int, cache: dict) -> list[str]:
    if run not in cache:
        cache[run] = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = sorted((r for r in cache[run] if r["method"] == method and r["dialogue"] == dialogue and r["turn"] <= turn),
                  key=lambda r: r["turn"])
    return [r["user"] for r in rows]


def scores(pairs: list[tuple[bool, bool]]) -> dict:
    tp = sum(g and p for g, p in pairs)
    fp = sum(p and not g for g, p in pairs)
    fn = sum(g and not p for g, p in pairs)
    return {"labels": len(pairs), "unsupported": tp + fn, "flagged": tp + fp, "true_positive": tp,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--show", action="store_true", help="list the replies where check and label disagree")
    parser.add_argument("--or-attribution", action="store_true", help="flag a reply that reply_defects' attribution flags too")
    args = parser.parse_args()
    cache: dict = {}
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    for i, line in enumerate(args.labels.read_text(encoding="utf-8").splitlines()):
        label = json.loads(line)
        users = user_turns(Path(label["run"]), label["method"], label["dialogue"], label["turn"], cache)
        found = unsupported_claims(label["reply"], users)
        if args.or_attribution:
            found += attribution_clauses(label["reply"], users)
        pairs.setdefault(label["set"], []).append((label["unsupported"], bool(found)))
        if args.show and label["unsupported"] != bool(found):
            print(f"[{i} label={label['unsupported']}] {found} | {label['reply'][:200]!r}")
    every = [p for group in pairs.values() for p in group]
    print(json.dumps({**{name: scores(group) for name, group in pairs.items()}, "all": scores(every)}, indent=1))


if __name__ == "__main__":
    main()
