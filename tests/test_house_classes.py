"""House rules of issue 56 that a scan of the source can hold: no class of `core` inherits from two
of the project's classes (a part it needs is an object it holds, given what it reads), and the
user's words are put in the second person by one function, which the reply check, the renderers
and D-SMART's recall import instead of keeping pronoun tables of their own."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("core", "ui", "pages", "scripts")  # where the project's classes are defined


def _trees(root: Path) -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))}


def _base_name(base: ast.expr) -> str:
    """The class a base expression names: `Method`, `core.x.Method`, `Generic[T]` -> its last name."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _project_classes() -> set[str]:
    names = set()
    for folder in SOURCES:
        for tree in _trees(REPO / folder).values():
            names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    return names


def two_project_bases(trees: dict[Path, ast.Module], project: set[str]) -> list[str]:
    """'path: Class(A, B)' for every class with two or more bases defined in the project; the
    standard library's and other packages' bases (ABC, Protocol, Generic, Exception) do not count."""
    out = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                ours = [name for name in map(_base_name, node.bases) if name in project]
                if len(ours) > 1:
                    out.append(f"{path.relative_to(REPO)}: {node.name}({', '.join(ours)})")
    return out


def test_the_scan_finds_a_class_with_two_project_bases():
    tree = ast.parse("class A(Method, DsmBacked): ...\nclass B(Method, ABC): ...\nclass C(Generic[T], Protocol): ...")
    assert two_project_bases({REPO / "core" / "x.py": tree}, {"Method", "DsmBacked"}) == ["core/x.py: A(Method, DsmBacked)"]


def test_no_class_of_core_inherits_from_two_project_classes():
    project = _project_classes()
    assert {"Method", "DsmBacked", "TreeResponder"} <= project  # the scan sees the project's classes
    assert two_project_bases(_trees(REPO / "core"), project) == []
