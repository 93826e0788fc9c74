"""Write the index of results/ (results/README.md): each file's command, code version, clean tree, and where the docs quote it.

Each kept file is one run's summary (or a tool's output). The index reads, per file: the command it
records (`command`, written by `python -m core bench` since 2026-11-25 and by the tools), else the
benchmark's base command rebuilt from its header (the docs give the options); the code version
(`0.1.0+COMMIT`, '-dirty' when the tree had uncommitted changes); and the docs that name the file
or its run folder. `--check` fails when README.md's index is not what this would write (a test runs
it), so a file added to results/ without an index line is caught.

    .venv/bin/python -m core results-index [--check]
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

BEGIN, END = "<!-- index: python -m core results-index -->", "<!-- end of index -->"
_BRACES = re.compile(r"([\w./-]*)\{([^{}]+)\}([\w./-]*)")


def add_arguments(parser) -> None:
    parser.add_argument("--check", action="store_true", help="exit 1 when results/README.md's index is stale")


def main(args) -> int:
    from core.paths import REPO_ROOT

    readme = REPO_ROOT / "results" / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    tail = rest.partition(END)[2]
    wanted = f"{head}{BEGIN}\n{markdown(rows(REPO_ROOT))}\n{END}{tail}"
    if args.check:
        if wanted != text:
            print("results/README.md: the index is stale; run python -m core results-index")
            return 1
        return 0
    readme.write_text(wanted, encoding="utf-8")
    print(f"indexed {len(rows(REPO_ROOT))} files -> {readme}")
    return 0


def expand_braces(text: str) -> str:
    """'mtbench-{base,rag}.json' -> 'mtbench-base.json mtbench-rag.json' (the docs name file sets so)."""
    return _BRACES.sub(lambda m: " ".join(f"{m.group(1)}{x.strip()}{m.group(3)}" for x in m.group(2).split(",")), text)


def header(path: Path) -> dict:
    """The first JSON object of the file (a summary, or a JSONL file's first line)."""
    text = path.read_text(encoding="utf-8")
    try:
        value = json.loads(text) if path.suffix == ".json" else json.loads(text.splitlines()[0])
    except (json.JSONDecodeError, IndexError):
        return {}
    return value if isinstance(value, dict) else {}


def command_of(data: dict) -> str:
    if data.get("command"):
        return str(data["command"])
    if data.get("benchmark") and data.get("data"):
        return f"python -m core bench {data['benchmark']} --data {data['data']} ... (options: see the doc)"
    return "see the doc"


def clean_tree(version: str | None) -> str:
    if not version or "+" not in version:
        return "not recorded"
    return "no (dirty)" if version.endswith("-dirty") else "yes"


def rows(repo: Path) -> list[dict]:
    docs = {p.relative_to(repo).as_posix(): expand_braces(p.read_text(encoding="utf-8"))
            for p in itertools.chain([repo / "README.md"], sorted((repo / "docs").glob("*.md")))}
    out = []
    for path in sorted((repo / "results").rglob("*")):
        if not path.is_file() or path.name == "README.md":
            continue
        name = path.relative_to(repo / "results").as_posix()
        data = header(path)
        stem = path.name.rsplit(".", 1)[0]
        # the file's name, or its run folder ('.workbench/runs/NAME'), not a benchmark of the same name
        named = rf"(?<![\w-])(?:{re.escape(path.name)}|runs/{re.escape(stem)})(?![\w-])"
        quoted = [d for d, text in docs.items() if re.search(named, text)]
        out.append({"file": name, "command": command_of(data), "code_version": data.get("code_version") or "-",
                    "clean": clean_tree(data.get("code_version")), "quoted_in": quoted})
    return out


def markdown(table: list[dict]) -> str:
    lines = ["| file | command | code version | clean tree | quoted in |", "| --- | --- | --- | --- | --- |"]
    for r in table:
        where = ", ".join(f"[{Path(d).name}](../{d})" for d in r["quoted_in"]) or "nowhere (archive/)"
        command = r["command"].replace("|", "\\|")
        lines.append(f"| `{r['file']}` | `{command}` | {r['code_version']} | {r['clean']} | {where} |")
    return "\n".join(lines)
