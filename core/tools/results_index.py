"""Write the index of results/ (results/README.md): each file's command, code version, clean tree, and where the docs quote it.

Each kept file is one run's summary (or a tool's output). The index reads, per file: the command it
records (`command`, written by `python -m core bench` since 2026-11-25 and by the tools), else the
one listed for it under COMMANDS_HEADING in README.md (taken from the docs that quote the file);
the code version (`0.1.0+COMMIT`, '-dirty' when the tree had uncommitted changes); and the docs
that name the file, its run folder, its folder under results/, `NAME.*`, or (in a table that names a
sibling) its suffix `-SUFFIX`. `--check` fails when README.md's index is not what this would write (a
test runs it), so a file added to results/ without an index line is caught.

    .venv/bin/python -m core results-index [--check]
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

BEGIN, END = "<!-- index: python -m core results-index -->", "<!-- end of index -->"
COMMANDS_HEADING = "## Commands of the files that do not record theirs"
NO_COMMAND = "not recorded: add it under " + COMMANDS_HEADING.removeprefix("## ")
_LISTED = re.compile(r"^- `([^`]+)`: `([^`]+)`", re.M)
_BRACES = re.compile(r"([\w./-]*)\{([^{}]+)\}([\w./*-]*)")


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


def listed_commands(readme_text: str) -> dict[str, str]:
    """file -> command, from the list under COMMANDS_HEADING in results/README.md."""
    section = readme_text.partition(COMMANDS_HEADING)[2].split("\n## ", 1)[0]
    return dict(_LISTED.findall(section))


def command_of(data: dict, listed: str | None = None) -> str:
    if data.get("command"):
        return str(data["command"])
    return listed or NO_COMMAND


def clean_tree(version: str | None) -> str:
    if not version or "+" not in version:
        return "not recorded"
    return "no (dirty)" if version.endswith("-dirty") else "yes"


def quotes(text: str, name: str, siblings: tuple[str, ...] = ()) -> bool:
    """Whether a doc's text names results/`name`: the file, its run folder ('.workbench/runs/STEM',
    not a benchmark of the same name), `STEM.*`, its folder under results/ when the doc names none
    of the folder's files (`siblings`) one by one, or `-SUFFIX` in backticks where the doc also
    names a sibling file PREFIX-... (a table abbreviating a series of runs)."""
    path = Path(name)
    base = path.name.split(".")[0]
    stem = path.name.rsplit(".", 1)[0]
    alone = r"(?![\w-])"
    if re.search(rf"(?<![\w-])(?:{re.escape(path.name)}|runs/{re.escape(stem)}){alone}|results/(?:[\w.-]+/)*{re.escape(base)}\.\*", text):
        return True
    if path.parent != Path(".") and re.search(rf"results/{re.escape(path.parent.as_posix())}/(?![\w.-])", text) \
            and not any(Path(other).name in text for other in siblings):
        return True
    for suffix in re.findall(r"`-([\w.-]+)`", text):
        prefix = base[: -len(suffix) - 1]
        if base.endswith("-" + suffix) and prefix and re.search(rf"(?<![\w-]){re.escape(prefix)}-", text):
            return True
    return False


def rows(repo: Path) -> list[dict]:
    docs = {p.relative_to(repo).as_posix(): expand_braces(p.read_text(encoding="utf-8"))
            for p in itertools.chain([repo / "README.md"], sorted((repo / "docs").glob("*.md")))}
    readme = repo / "results" / "README.md"
    listed = listed_commands(readme.read_text(encoding="utf-8")) if readme.is_file() else {}
    files = [p.relative_to(repo / "results").as_posix() for p in sorted((repo / "results").rglob("*"))
             if p.is_file() and p.name != "README.md"]
    out = []
    for name in files:
        path = repo / "results" / name
        data = header(path)
        siblings = tuple(f for f in files if Path(f).parent == Path(name).parent)
        quoted = [d for d, text in docs.items() if quotes(text, name, siblings)]
        out.append({"file": name, "command": command_of(data, listed.get(name)), "code_version": data.get("code_version") or "-",
                    "clean": clean_tree(data.get("code_version")), "quoted_in": quoted})
    return out


def markdown(table: list[dict]) -> str:
    lines = ["| file | command | code version | clean tree | quoted in |", "| --- | --- | --- | --- | --- |"]
    for r in table:
        where = ", ".join(f"[{Path(d).name}](../{d})" for d in r["quoted_in"]) \
            or ("nowhere (archive/)" if r["file"].startswith("archive/") else "nowhere")
        command = r["command"].replace("|", "\\|")
        lines.append(f"| `{r['file']}` | `{command}` | {r['code_version']} | {r['clean']} | {where} |")
    return "\n".join(lines)
