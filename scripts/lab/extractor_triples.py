"""The local extractor's triples on every distinct dev turn, to check that a refactor changes none.

`dump` runs `SpacyExtractor` (its public `extract`, one utterance at a time) on every distinct
(speaker, text) turn of the dev data and writes one JSON line per turn with its sorted N3 triples;
`compare` counts the turns whose triples differ between two dumps. Dump before a change, dump
after, compare: 0 differ is the bar (issue 41: the extractor split into rule families).

The turns: LongMemEval dev (knowledge-update questions; `--all-dev` for every question type), the
written update batches A-E as `core written-updates` lays them out (fillers and replies included),
benchmarks/memory_dialogues_dev.jsonl and benchmarks/chat_short_memory.jsonl (user turns).

    .venv/bin/python scripts/lab/extractor_triples.py dump /tmp/before.jsonl
    .venv/bin/python scripts/lab/extractor_triples.py compare /tmp/before.jsonl /tmp/after.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEV = ROOT.parent / "shared" / "data" / "longmemeval" / "longmemeval_oracle_dev.json"
WRITTEN = sorted((ROOT / "benchmarks").glob("knowledge_updates_written*.jsonl"))
DIALOGUES = [ROOT / "benchmarks" / "memory_dialogues_dev.jsonl", ROOT / "benchmarks" / "chat_short_memory.jsonl"]


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def turns(all_dev: bool) -> list[tuple[str, str]]:
    from core.tools.written_updates import instance

    items = [it for it in json.loads(DEV.read_text(encoding="utf-8")) if all_dev or it["question_type"] == "knowledge-update"]
    items += [instance(pair) for path in WRITTEN for pair in jsonl(path)]
    out = [(t["role"], t["content"]) for it in items for s in it["haystack_sessions"] for t in s]
    out += [("user", row["user"]) for path in DIALOGUES for row in jsonl(path) if "user" in row]
    return list(dict.fromkeys(out))


def dump(out: Path, all_dev: bool, limit: int | None) -> None:
    from core.methods.dsmart.extract import SpacyExtractor, Utterance
    from core.resources import load_spacy

    extractor = SpacyExtractor(load_spacy())
    said = turns(all_dev)[:limit]
    total = 0
    with out.open("w", encoding="utf-8") as f:
        for role, text in said:
            triples = sorted(" ".join(term.n3() for term in t) for t in extractor.extract([Utterance(role, text)]))
            total += len(triples)
            f.write(json.dumps({"speaker": role, "text": text, "triples": triples}) + "\n")
    print(f"{len(said)} distinct turns, {total} triples -> {out}")


def compare(before: Path, after: Path) -> int:
    old, new = jsonl(before), jsonl(after)
    if [(r["speaker"], r["text"]) for r in old] != [(r["speaker"], r["text"]) for r in new]:
        print("the two dumps hold different turns")
        return 2
    differ = 0
    for a, b in zip(old, new):
        if a["triples"] != b["triples"]:
            differ += 1
            if differ <= 5:
                gone, added = set(a["triples"]) - set(b["triples"]), set(b["triples"]) - set(a["triples"])
                print("DIFF", a["text"][:100], "\n  gone:", sorted(gone)[:5], "\n  new:", sorted(added)[:5])
    print(f"{len(new)} distinct turns, {sum(len(r['triples']) for r in new)} triples (after), {differ} turns differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--all-dev", action="store_true", help="every dev question type, not only knowledge updates")
    d.add_argument("--limit", type=int, default=None)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.all_dev, args.limit)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
