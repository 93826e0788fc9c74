"""Dependencies point one way: pages and ui use core; core never imports streamlit, and importing
core loads nothing heavy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_core_never_imports_streamlit():
    offenders = []
    for path in (REPO / "core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "streamlit" or n.startswith("streamlit.") or n == "ui" or n.startswith("ui.") for n in names):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_importing_core_is_light():
    code = (
        "import sys, core, core.config, core.dialogue, core.store, core.llm, core.methods, core.benchmarks.runner, "
        "core.benchmarks.request, core.toolkit, core.resources, core.vectors, core.text, core.cli\n"
        "heavy = [m for m in ('torch', 'transformers', 'faiss', 'spacy', 'sentence_transformers', 'streamlit') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def _core_imports() -> dict[str, set[str]]:
    """Package-level import graph of core: core/methods/sgmem/x.py counts as `core.methods`.
    Imports inside functions count too (a lazy import is still a dependency)."""
    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for path in (REPO / "core").rglob("*.py"):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        edges = graph.setdefault(unit(module), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            edges.update(unit(n) for n in names if n.startswith("core.") and unit(n) != unit(module))
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph (depth-first search), or [] when it has none."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def _module_names() -> dict[str, Path]:
    return {".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
            for p in (REPO / "core").rglob("*.py")}


def _imported_modules(node, module: str, is_package: bool, known) -> set[str]:
    """The core modules one import statement loads. `from a.b import c` is a.b.c when c is a module,
    else a.b; relative imports (`from . import x`, `from ..y import z`) are resolved against the
    importing file. A package's own __init__ is not counted for its submodules (`from core.llm import
    cost` loads core/llm/__init__.py first, whatever the file): only the named module is."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known and a.name != module}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    out = set()
    for alias in node.names:
        name = f"{base}.{alias.name}"
        out.add(name if name in known else base)
    return {m for m in out if m in known and m != module}


def _file_imports() -> dict[str, set[str]]:
    """File-level import graph of core: every import statement counts, at the top of a file or
    inside a function (a lazy import is still a dependency, and hides a circle only until the
    function runs)."""
    known = _module_names()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        edges = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            edges |= _imported_modules(node, module, path.name == "__init__.py", known)
    return graph


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_core_packages_import_each_other_one_way_only():
    assert _cycle(_core_imports()) == []


def test_retrieval_sits_below_methods():
    """core.retrieval is the interface the methods implement; the retrievers and their registry by
    name live in core.methods. Neither an import nor an import-by-string may point back up."""
    offenders = []
    for path in (REPO / "core" / "retrieval").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value.split(":")[0]]
            if any(n == "core.methods" or n.startswith("core.methods.") for n in names):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_the_file_graph_resolves_relative_and_lazy_imports():
    known = {"core.a", "core.a.x", "core.a.y", "core.b"}
    tree = ast.parse("from . import y\nfrom ..b import thing\ndef f():\n    import core.a.x\n")
    found = set()
    for node in ast.walk(tree):
        found |= _imported_modules(node, "core.a.x", False, known)
    assert found == {"core.a.y", "core.b"}  # core.a.x itself is no edge


def test_no_import_circle_between_files_of_core():
    assert _cycle(_file_imports()) == []


# -- docs/architecture.md is read from the code ---------------------------------------------------
ARCH_DOC = REPO / "docs" / "architecture.md"


def _layout_block() -> list[str]:
    text = ARCH_DOC.read_text(encoding="utf-8")
    body = text.split("## Layout", 1)[1].split("```", 2)[1]
    return body.splitlines()


def _named_paths(lines: list[str]) -> list[str]:
    """The paths a layout line names in its first column: `dir/` or `file.py` at the top level,
    `  name` (two spaces) under core/; several may share a line (`a.py, b.py`)."""
    import re

    out = []
    for line in lines:
        m = re.match(r"^( {0,2})(\S+(?:, \S+)*)(?: {2,}|$)", line)
        if not m:
            continue
        for name in m.group(2).split(", "):
            out.append(("core/" if m.group(1) else "") + name)
    return out


def test_the_layout_names_only_what_exists():
    named = _named_paths(_layout_block())
    assert len(named) > 25
    missing = [p for p in named if not (REPO / p).exists()]
    assert missing == [], f"docs/architecture.md names {missing}, which are not in the tree"


def test_the_layout_names_every_folder_and_core_module():
    block = "\n".join(_layout_block())
    named = set(_named_paths(_layout_block()))
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    top = {p.split("/")[0] + "/" for p in tracked if "/" in p and not p.startswith(".")}
    packages = {f"core/{p.parent.name}/" for p in (REPO / "core").glob("*/__init__.py")}
    assert (top | packages) - named == set(), "folders the layout does not name"
    modules = {p.name for p in (REPO / "core").glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert {m for m in modules if m not in block} == set(), "core modules the layout does not mention"


def test_no_block_of_five_lines_repeats_in_the_architecture_page():
    lines = ARCH_DOC.read_text(encoding="utf-8").splitlines()
    seen: dict[tuple[str, ...], int] = {}
    for i in range(len(lines) - 4):
        block = tuple(line.rstrip() for line in lines[i:i + 5])
        if sum(bool(line.strip("` ")) for line in block) < 3:
            continue  # blank lines and fences repeat by nature
        assert block not in seen, f"lines {seen.get(block, 0) + 1}-{seen.get(block, 0) + 5} repeat at line {i + 1}"
        seen[block] = i


def test_no_file_of_core_is_over_600_lines():
    long = {str(p.relative_to(REPO)): n for p in (REPO / "core").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
