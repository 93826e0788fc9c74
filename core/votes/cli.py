"""`python -m core votes report|export|import` and `python -m core compare`.

The database is --db, else $WORKBENCH_DB, else the app's default file (.workbench/workbench.sqlite3):
the one the app writes its votes to. These commands are the operator's, who holds the database
anyway: without --owner they cover every owner's votes; `--owner ID` keeps to one owner's (and
the shared demo ones), as the page shows them.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from pathlib import Path
from typing import Callable

from core import paths

DB_VARIABLE = "WORKBENCH_DB"
CSV_FIELDS = ("conversation", "turn", "methods", "winner", "owner", "created_at", "replies", "measures")


def database(given: str | None) -> str:
    return given or os.environ.get(DB_VARIABLE) or str(paths.REPO_ROOT / ".workbench" / "workbench.sqlite3")


def add_parsers(sub, llm_options: Callable[[argparse.ArgumentParser], None], toolkit: Callable) -> None:
    """Register `votes` and `compare`. `llm_options(parser)` adds the LLM flags and `toolkit(args)`
    builds the methods' toolkit from them (core/toolkit.py holds both; core/cli.py passes them)."""
    p = sub.add_parser("votes", help="blind votes on side-by-side replies: rankings, export, import")
    verbs = p.add_subparsers(dest="votes_command", required=True, metavar="ACTION")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--db", default=None, help=f"file path, sqlite:///path or postgresql://... (default: ${DB_VARIABLE}, "
                                                  "else the app's .workbench/workbench.sqlite3)")

    r = verbs.add_parser("report", help="Bradley-Terry strengths with 95%% intervals, win-rate matrix, counts, "
                                        "agreement of the automatic measures with the votes")
    common(r)
    r.add_argument("--owner", default=None, help="one owner's votes (and the shared demo ones); default: every owner's")
    r.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals (default 1000)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--json", action="store_true", help="print JSON instead of tables")
    r.set_defaults(func=run_report)

    e = verbs.add_parser("export", help="one vote per line: JSONL, or CSV when FILE ends in .csv")
    common(e)
    e.add_argument("--out", required=True, type=Path)
    e.add_argument("--owner", action="append", default=None, help="only this owner's votes (repeatable); default: all")
    e.set_defaults(func=run_export)

    i = verbs.add_parser("import", help="merge votes from an export (JSONL or .csv) without duplicates, in one transaction")
    common(i)
    i.add_argument("file", type=Path)
    i.add_argument("--owner", default=None, help="put every vote under this owner (e.g. shared/demo: seen by everyone)")
    i.set_defaults(func=run_import)

    c = sub.add_parser("compare", help="run a chat script through several methods; write side-by-side items to vote on")
    c.add_argument("--methods", required=True, help="2 to 4 comma-separated methods, e.g. base,rag")
    c.add_argument("--script", required=True, type=Path, help='JSONL: {"user": "..."} per turn (as for `chat`)')
    c.add_argument("--out", required=True, type=Path, help="folder for compare.jsonl, METHOD.jsonl, summary.json")
    c.add_argument("--max-tokens", type=int, default=0, help="bound on each reply's length (default: the method's setting)")
    llm_options(c)
    c.set_defaults(func=lambda args: run_compare(args, toolkit))


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def _existing_store(args):
    from core.votes.store import VoteStore

    target = database(args.db)
    if "://" not in target and not Path(target).exists():
        raise FileNotFoundError(f"no database at {target}: give --db or set {DB_VARIABLE}")
    return VoteStore(target)


# -- report ----------------------------------------------------------------------------------------
def _num(x: float | None, fmt: str = "+.2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def format_report(ranking, agreements, scope: str) -> str:
    lines = [f"Votes: {ranking.votes} ({ranking.bad_votes} of them both/all bad), {scope}"]
    if not ranking.votes:
        return lines[0] + "\n"
    lines.append(f"Bradley-Terry strength (log-odds, methods average 0; ties as half wins; bad votes not ranked; "
                 f"95% bootstrap interval over {ranking.bootstrap} resamples)")
    lines.append(f"  {'method':<12}{'strength':>9}  {'95% interval':<18}{'votes':>6}{'wins':>6}{'losses':>7}{'ties':>6}{'bad':>5}")
    for s in ranking.standings:
        interval = f"[{_num(s.low)}, {_num(s.high)}]"
        lines.append(f"  {s.method:<12}{_num(s.strength):>9}  {interval:<18}{s.votes:>6}{s.wins:>6}{s.losses:>7}{s.ties:>6}{s.bad:>5}")
    if not ranking.connected:
        lines.append("  (some methods were never compared with the others, even indirectly: their strengths do not compare)")
    lines.append("Win rate of the row against the column (ties as half; comparisons in parentheses)")
    width = max(12, *(len(m) + 2 for m in ranking.methods))
    lines.append("  " + " " * width + "".join(f"{m:>{width}}" for m in ranking.methods))
    for i, m in enumerate(ranking.methods):
        cells = ["-" if rate is None else f"{rate:.2f} ({ranking.comparisons[i][j]})"
                 for j, rate in enumerate(ranking.win_rate[i])]
        lines.append(f"  {m:<{width}}" + "".join(f"{c:>{width}}" for c in cells))
    lines.append("Measures against people: how often the reply the measure scores higher is the one chosen "
                 "(decisive voted pairs the measure tells apart; 50% = chance; Wilson 95%)")
    for a in agreements:
        shown = "no pairs" if not a.pairs else f"{a.rate:.0%} [{a.low:.0%}, {a.high:.0%}] of {a.pairs} pairs"
        lines.append(f"  {a.measure:<10} {shown} ({a.undecided} undecided)")
    return "\n".join(lines) + "\n"


def run_report(args) -> int:
    from core.votes.measures import agreements
    from core.votes.ranking import rank

    try:
        store = _existing_store(args)
    except FileNotFoundError as err:
        return _fail(str(err))
    votes = store.votes(owner=args.owner) if args.owner else store.all_votes()
    scope = f"owner {args.owner} (and the shared demo)" if args.owner else "every owner"
    ranking = rank([(v.methods, v.winner) for v in votes], bootstrap=args.bootstrap, seed=args.seed)
    found = agreements(votes)
    if args.json:
        print(json.dumps({"scope": scope, "ranking": ranking.to_json(), "agreement": [a.to_json() for a in found]},
                         indent=1, default=lambda x: None))
    else:
        sys.stdout.write(format_report(ranking, found, scope))
    return 0


# -- export / import -------------------------------------------------------------------------------
def to_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(row[k], ensure_ascii=False) if isinstance(row[k], (list, dict)) else row[k]
                         for k in CSV_FIELDS})
    return buffer.getvalue()


def read_votes(path: Path) -> list:
    """Votes from a JSONL or CSV export; VoteError naming the first bad line (nothing is stored)."""
    from core.votes.compare import jsonl_records
    from core.votes.model import VoteError, vote_from_json

    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        return [vote_from_json(row, f"{path.name} row {k}") for k, row in enumerate(csv.DictReader(io.StringIO(text)), 2)]
    try:
        return [vote_from_json(record, f"{path.name}:{number}") for number, record in jsonl_records(text, path.name)]
    except ValueError as err:
        raise VoteError(str(err)) from None


def run_export(args) -> int:
    try:
        store = _existing_store(args)
    except FileNotFoundError as err:
        return _fail(str(err))
    rows = [v.to_json() for v in store.all_votes(args.owner)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = to_csv(rows) if args.out.suffix.lower() == ".csv" else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    args.out.write_text(text, encoding="utf-8")
    print(json.dumps({"votes": len(rows), "out": str(args.out)}))
    return 0


def run_import(args) -> int:
    from core.votes.model import VoteError
    from core.votes.store import VoteStore

    try:
        votes = read_votes(args.file)
        report = VoteStore(database(args.db)).import_votes(votes, owner=args.owner)
    except (OSError, VoteError, ValueError) as err:
        return _fail(f"import refused, nothing stored: {err}")
    print(json.dumps({"file": args.file.name, **report.__dict__}))
    return 0


# -- compare ---------------------------------------------------------------------------------------
def run_compare(args, toolkit: Callable) -> int:
    from core.chat import ChatSession, ScriptError, read_script
    from core.methods import METHODS
    from core.votes.compare import parse_methods
    from core.votes.compare import run_compare as run

    try:
        methods = parse_methods(args.methods, METHODS)
        steps = read_script(args.script)
    except (OSError, ScriptError, ValueError) as err:
        return _fail(f"compare refused: {err}")
    try:
        tools = toolkit(args)
    except paths.MissingResource as err:
        print(f"the LLM failed: {err}", file=sys.stderr)
        return 1

    def progress(method: str, record: dict) -> None:
        print(f"{method} turn {record['dialogue']}.{record['turn']}: {record['seconds']:.1f} s", file=sys.stderr)

    summary = run(methods, steps, lambda m: ChatSession(m, tools, max_tokens=args.max_tokens), args.out, progress)
    print(json.dumps({**summary, "out": str(args.out)}))
    return 0
