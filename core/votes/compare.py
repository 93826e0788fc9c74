"""Scripted comparisons to vote on later, behind `python -m core compare --methods a,b[,c] --script FILE --out DIR`.

A chat script (core/chat.py's JSONL: `{"user": ...}`, `{"new_dialogue": true}`, optional
`"expect"`) runs through every method, each with its own memory, one method after another. The
replies are joined per user turn into DIR/compare.jsonl, one item per line:

    {"compare": "cmp-…", "item": 0, "dialogue": 0, "turn": 0, "user": "...", "expected": [...],
     "methods": ["rag", "base"], "replies": {"rag": {"reply": "...", "correct": true, "seconds": 1.2,
     "evidence": [...]}, ...}}

`compare` + `item` is the vote's conversation + turn, so a vote on an item (`votes_for_item`) lands
in the vote store like a vote given on the Compare page. DIR also gets each method's own
transcript (METHOD.jsonl, the `chat` command's records) and summary.json (per method: reply
times, accuracy where turns had an expected answer).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Callable, Iterable, Iterator

from core.chat import ChatSession, ScriptStep, run_script, summarise

ITEMS_FILE = "compare.jsonl"


def parse_methods(spec: str, known: Iterable[str]) -> list[str]:
    """"a,b[,c[,d]]" as a list of 2 to 4 different known methods; ValueError naming what is wrong."""
    names = [m.strip() for m in spec.split(",") if m.strip()]
    known = list(known)
    unknown = [m for m in names if m not in known]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if not 2 <= len(names) <= 4 or len(set(names)) != len(names):
        raise ValueError(f"compare 2 to 4 different methods, not {names}")
    return names


def join_items(compare_id: str, methods: list[str], records: dict[str, list[dict]]) -> list[dict]:
    """One item per user turn: the user's message, expected answer and every method's reply."""
    counts = {m: len(records[m]) for m in methods}
    if len(set(counts.values())) != 1:
        raise ValueError(f"the methods answered different numbers of turns: {counts}")
    items = []
    for k, group in enumerate(zip(*(records[m] for m in methods))):
        first = group[0]
        items.append({
            "compare": compare_id, "item": k, "dialogue": first["dialogue"], "turn": first["turn"], "user": first["user"],
            "expected": first.get("expected", []), "methods": list(methods),
            "replies": {m: {"reply": r["reply"], "correct": r.get("correct"), "seconds": r["seconds"],
                            "evidence": r.get("evidence", [])} for m, r in zip(methods, group)},
        })
    return items


def run_compare(methods: list[str], steps: list[ScriptStep], make_session: Callable[[str], ChatSession], out: Path,
                on_reply: Callable[[str, dict], None] | None = None) -> dict:
    """Run the script through every method (a fresh session each, `make_session(method)`), write
    DIR/compare.jsonl, DIR/METHOD.jsonl and DIR/summary.json; return the summary."""
    out.mkdir(parents=True, exist_ok=True)
    compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
    records: dict[str, list[dict]] = {}
    for method in methods:
        session = make_session(method)
        records[method] = []
        with open(out / f"{method}.jsonl", "w", encoding="utf-8") as transcript:
            for record in run_script(session, steps):
                records[method].append(record)
                transcript.write(json.dumps(record, ensure_ascii=False) + "\n")
                if on_reply is not None:
                    on_reply(method, record)
    items = join_items(compare_id, methods, records)
    (out / ITEMS_FILE).write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    summary = {"compare": compare_id, "methods": methods, "items": len(items), "file": ITEMS_FILE,
               "per_method": {m: summarise(records[m]) for m in methods}}
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def read_items(path: str | Path) -> list[dict]:
    """The items of a compare.jsonl; ValueError naming the first malformed line."""
    return parse_items(Path(path).read_text(encoding="utf-8"), str(path))


def jsonl_records(text: str, where: str) -> Iterator[tuple[int, object]]:
    """(line number, parsed JSON) of each non-empty line; ValueError naming the first that is not JSON."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{where}:{number}: not JSON ({err.msg})") from None


def parse_items(text: str, where: str = "compare.jsonl") -> list[dict]:
    items = []
    for number, item in jsonl_records(text, where):
        if not isinstance(item, dict) or not {"compare", "item", "user", "methods", "replies"} <= set(item):
            raise ValueError(f"{where}:{number}: not a compare item (compare, item, user, methods, replies)")
        if not isinstance(item["replies"], dict) or set(item["methods"]) != set(item["replies"]):
            raise ValueError(f"{where}:{number}: the replies do not match the methods")
        items.append(item)
    return items


def vote_fields(item: dict, shown: list[str]) -> dict:
    """What a vote on `item` stores besides the winner: conversation, turn, the methods in the
    order shown, their replies and the measures the item knows (correctness)."""
    replies = item["replies"]
    measures = {m: {"correct": replies[m]["correct"]} for m in shown if isinstance(replies[m].get("correct"), bool)}
    return {"conversation": item["compare"], "turn": int(item["item"]), "methods": list(shown),
            "replies": [replies[m]["reply"] for m in shown], "measures": measures}
