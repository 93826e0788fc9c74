"""House rules of issue 56 that a scan of the source can hold: no class of `core` inherits from two
of the project's classes (a part it needs is an object it holds, given what it reads), and the
user's words are put in the second person by one function, which the reply check, the renderers
and D-SMART's recall import instead of keeping pronoun tables of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


# -- the user's words in the second person: one function ---------------------------------------------
CALLERS = ("core/methods/render.py", "core/methods/dsmart/recall.py", "core/reply_check.py")
# what only a first-person -> second-person table holds: a first-person word as a dict key, or as
# a regex of a swap ("\bmy\b", "\bI'm\b")
_FIRST_KEYS = {"i", "i'm", "me", "my", "mine", "myself", "we", "us", "our", "ours"}
_FIRST_PATTERNS = ("\\bmy\\b", "\\bi\\b", "\\bi'm\\b", "\\bi am\\b", "\\bwe\\b", "\\bme\\b")


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name for n in tree.body) or any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets) for n in tree.body)


def _pronoun_tables(tree: ast.Module) -> list[str]:
    """The first-person words a module's own tables turn into something else."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            found += [k.value for k in node.keys if isinstance(k, ast.Constant) and str(k.value).lower() in _FIRST_KEYS]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [p for p in _FIRST_PATTERNS if p in node.value.lower()]
    return found


def test_one_module_of_core_defines_the_second_person_function():
    trees = _trees(REPO / "core")
    defining = [str(p.relative_to(REPO)) for p, tree in trees.items()
                if _defines(tree, "second_person") or _defines(tree, "to_second_person")]
    assert defining == ["core/person.py"]


@pytest.mark.parametrize("path", CALLERS)
def test_the_callers_import_it_and_keep_no_pronoun_table_of_their_own(path):
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert ("core.person", "second_person") in imported
    assert _pronoun_tables(tree) == []


def test_the_table_scan_finds_a_table():
    tree = ast.parse('_PERSON = {"my": "your"}\n_SWAPS = ((r"\\bI\'m\\b", "you\'re"),)')
    assert _pronoun_tables(tree) == ["my", "\\bi'm\\b"]
