"""`python -m core store grep --db DB TEXT`: every place in the store that holds TEXT
(case-insensitive), to check that a forget (core/forget.py) left nothing behind.

It reads every text column of every table (turns, replies' JSON, checks, titles, settings,
annotations, votes, the forget audit) and every memory artifact decoded: the artifact's header
off (core.conversation.unpack_memory), its bytes as they are, then any JSON inside them walked
value by value, with strings that hold JSON or base64 (mem0's history database is a base64'd
SQLite file) decoded in turn. A place is one cell (table, row, column); the number of places is
the command's last line, alone, so a script reads it with `tail -1`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from sqlalchemy import LargeBinary, Text, select

from core.db.engine import Database

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]{64,}$")
MAX_DEPTH = 6  # JSON in a string in JSON ...: deep enough for every state written here


@dataclass(frozen=True)
class Place:
    table: str
    key: str  # the row's primary key, as text
    column: str


def _bytes_hold(data: bytes, needle: str) -> bool:
    low = data.lower()
    return any(n in low for n in {needle.encode("utf-8"), needle.encode("unicode_escape"),
                                  json.dumps(needle)[1:-1].encode("ascii")})


def _value_holds(value, needle: str, depth: int = 0) -> bool:
    """Whether a decoded value holds `needle` (lower-case): strings (JSON inside them decoded and
    walked, base64 inside them decoded), and integers equal to it. A float's digits are not text:
    a timing of 0.34471 s does not hold "4471"."""
    if depth > MAX_DEPTH or value is None or isinstance(value, (bool, float)):
        return False
    if isinstance(value, dict):
        return any(_value_holds(k, needle, depth + 1) or _value_holds(v, needle, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_value_holds(v, needle, depth + 1) for v in value)
    if isinstance(value, int):
        return str(value) == needle
    text = value.strip()
    if text[:1] in ("{", "["):
        try:
            return _value_holds(json.loads(text), needle, depth + 1)
        except json.JSONDecodeError:
            pass
    if needle in value.lower():
        return True
    if _BASE64.match(text):
        try:
            return _blob_holds(base64.b64decode(text, validate=False), needle, depth + 1)
        except (binascii.Error, ValueError):
            pass
    return False


def _blob_holds(data: bytes, needle: str, depth: int = 0) -> bool:
    """A JSON document that starts inside the bytes (a method's state after its header) walked as
    JSON, the bytes before it searched as they are; bytes that hold no JSON searched as they are."""
    start = data.find(b"{")
    if start >= 0:
        try:
            document = json.loads(data[start:].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            pass
        else:
            return _bytes_hold(data[:start], needle) or _value_holds(document, needle, depth + 1)
    return _bytes_hold(data, needle)


def artifact_holds(blob: bytes, needle: str) -> bool:
    from core.memory_artifact import unpack_memory

    needle = needle.lower()
    try:
        state = unpack_memory(blob).state
    except ValueError:  # a newer format: search its bytes as they are
        state = blob
    return _blob_holds(state, needle) or _bytes_hold(blob[:len(blob) - len(state)], needle)


def grep(db: Database, text: str) -> list[Place]:
    """Every cell of every table that holds `text` (case-insensitive; decoded as above)."""
    from core.db.schema import metadata

    needle = text.lower()
    if not needle.strip():
        raise ValueError("give a non-empty text to search for")
    found = []
    for table in metadata.sorted_tables:
        columns = [c for c in table.columns if isinstance(c.type, (Text, LargeBinary))]
        keys = list(table.primary_key.columns)
        rows = db.read(lambda c, t=table: c.execute(select(t)).all())
        for row in rows:
            key = "/".join(str(row._mapping[k.name]) for k in keys)
            for column in columns:
                value = row._mapping[column.name]
                if value is None:
                    continue
                if isinstance(value, (bytes, bytearray, memoryview)):
                    hit = artifact_holds(bytes(value), needle)
                else:
                    hit = _value_holds(value, needle)
                if hit:
                    found.append(Place(table.name, key, column.name))
    return found


def add_parser(sub) -> None:
    p = sub.add_parser("store", help="look inside the workbench store (store grep: where a text is still held)")
    verbs = p.add_subparsers(dest="store_command", required=True)
    g = verbs.add_parser("grep", help="every table cell and decoded memory artifact holding TEXT (case-insensitive); "
                                      "the last line is the number of places")
    g.add_argument("--db", default=None, help="file path, sqlite:///path or postgresql://user@host/db (default: $WORKBENCH_DB)")
    g.add_argument("text", help="the text to look for")
    g.set_defaults(func=_grep)


def _grep(args) -> int:
    from core.db.cli import _target

    db = _target(args)
    db.ping()
    places = grep(db, args.text)
    for place in places:
        print(f"{place.table}\t{place.key}\t{place.column}")
    print(len(places))
    return 0
