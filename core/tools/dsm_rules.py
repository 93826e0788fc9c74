"""Print D-SMART's extractor rules as a table (name, what it reads, an example, its code and test).

    .venv/bin/python -m core dsm-rules --markdown          # the table
    .venv/bin/python -m core dsm-rules --write             # into docs/dsm-updates.md, between its markers
    .venv/bin/python -m core dsm-rules --check             # exit 1 when the docs' table is stale
"""

from __future__ import annotations

BEGIN, END = "<!-- rules: python -m core dsm-rules --write -->", "<!-- end of rules -->"


def add_arguments(parser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (the default)")
    parser.add_argument("--write", action="store_true", help="write it into docs/dsm-updates.md")
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/dsm-updates.md's table is stale")


def rendered(text: str, table: str) -> str:
    head, sep, rest = text.partition(BEGIN)
    if not sep:
        raise ValueError(f"docs/dsm-updates.md has no {BEGIN!r} marker")
    return f"{head}{BEGIN}\n{table}\n{END}{rest.partition(END)[2]}"


def main(args) -> int:
    from core.methods.dsmart.rules import markdown
    from core.paths import REPO_ROOT

    table = markdown()
    if not (args.write or args.check):
        print(table)
        return 0
    doc = REPO_ROOT / "docs" / "dsm-updates.md"
    text = doc.read_text(encoding="utf-8")
    wanted = rendered(text, table)
    if args.check:
        return 0 if wanted == text else 1
    doc.write_text(wanted, encoding="utf-8")
    return 0
