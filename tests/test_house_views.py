"""One registry of what a method shows (issue 56): every method has a screen, trace and evidence
kinds are core.dialogue constants, and the pages find a trace's view by its kind through the
screens, never by comparing a kind with a string written in the page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import core.dialogue as dialogue
from core.dialogue import EVIDENCE_KINDS, TRACE_KINDS, TRACE_MCTS, TRACE_PROMPT, Reply, Trace, TraceNode
from core.methods import METHODS
from ui import mcts, screens, trace_views

REPO = Path(__file__).resolve().parent.parent
UI_SOURCES = [p for folder in ("ui", "pages") for p in sorted((REPO / folder).glob("*.py"))]
KIND_COMPARED = re.compile(r"""\.kind\s*(==|!=|not\s+in|in)\s*["'(\[{]|["']\s*(==|!=)\s*[\w.]*\.kind\b""")


def test_every_registered_method_has_a_screen():
    assert set(screens.SCREENS) == set(METHODS)
    assert all(isinstance(s, screens.MethodScreen) for s in screens.SCREENS.values())


def test_every_trace_kind_core_makes_has_one_view():
    """Each kind in TRACE_KINDS is drawn by a view some screen holds (the plain table counts: it is
    how prompt and steps traces are drawn), and no two screens draw one kind differently."""
    assert set(screens.TRACE_VIEWS) == TRACE_KINDS
    for name, screen in screens.SCREENS.items():
        assert screens.TRACE_VIEWS[screen.trace.kind] is screen.trace, name
    assert screens.trace_view(TRACE_PROMPT) is screens.PLAIN.trace


def test_only_the_mcts_trace_is_drawn_while_it_grows():
    """A view without a partial view is declared so (partial=None): the page shows the method's
    progress lines as text instead."""
    partial = {kind: view.partial for kind, view in screens.TRACE_VIEWS.items() if view.partial is not None}
    assert partial == {TRACE_MCTS: mcts.render_partial}
    assert screens.screen_of("mcts").trace.partial is mcts.render_partial


def test_a_kind_no_screen_draws_shows_as_the_plain_table():
    assert screens.trace_view("a kind of another version") is screens.PLAIN.trace
    assert screens.PLAIN.trace.draw is trace_views.draw_table


def test_a_tree_view_falls_back_to_the_table_for_a_trace_without_nodes(monkeypatch):
    drawn = []
    monkeypatch.setattr(trace_views, "draw_table", lambda reply, key="": drawn.append(("table", key)))
    view = trace_views.nodes_or_table(lambda reply, key="": drawn.append(("tree", key)))
    view(Reply("hi", "rt", "stub", trace=Trace(dialogue.TRACE_TREE)), "a")
    view(Reply("hi", "rt", "stub", trace=Trace(dialogue.TRACE_TREE, (TraceNode("root", "root"),))), "b")
    assert drawn == [("table", "a"), ("tree", "b")]


def _kind_literal_comparisons(source: str) -> list[int]:
    """Lines comparing a `.kind` with a string (or a container of strings) written in place."""
    found = [n for n, line in enumerate(source.splitlines(), 1) if KIND_COMPARED.search(line)]
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(isinstance(s, ast.Attribute) and s.attr == "kind" for s in sides) and any(_has_str(s) for s in sides):
            found.append(node.lineno)
    return sorted(set(found))


def _has_str(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_has_str(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _mentions_kind(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "kind" in n.id) or (isinstance(n, ast.Attribute) and "kind" in n.attr)
               for n in ast.walk(node))


def _kind_keyed_dict_lookups(source: str) -> list[int]:
    """Lines looking a kind up in a dict literal keyed by kind strings (`{"mcts": view}.get(kind)`,
    or such a dict bound to a name and subscripted by a kind)."""
    tree = ast.parse(source)
    kinds = TRACE_KINDS | EVIDENCE_KINDS

    def keyed_by_kinds(d: ast.AST) -> bool:
        return isinstance(d, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in kinds for k in d.keys)

    named = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and keyed_by_kinds(node.value)
             for t in node.targets if isinstance(t, ast.Name)}

    def is_table(node: ast.AST) -> bool:
        return keyed_by_kinds(node) or (isinstance(node, ast.Name) and node.id in named)

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_table(node.value) and _mentions_kind(node.slice):
            found.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and is_table(node.func.value) and node.args and _mentions_kind(node.args[0])):
            found.append(node.lineno)
    return found


def test_the_detectors_catch_the_comparisons_they_replace():
    """What ui/replies.py, ui/streaming.py and ui/kg.py did before the screens drew traces."""
    assert _kind_literal_comparisons('if trace.kind == "tree" and trace.nodes:\n    pass\n') == [1]
    assert _kind_literal_comparisons('x = [e for e in ev if e.kind == "triple"]\n') == [1]
    assert _kind_literal_comparisons('ok = e.kind in ("turn", "round")\n') == [1]
    assert _kind_literal_comparisons('ok = e.kind == EVIDENCE_TRIPLE\n') == []
    assert _kind_keyed_dict_lookups('def f(kind):\n    return {"mcts": g}.get(kind)\n') == [2]
    assert _kind_keyed_dict_lookups('VIEWS = {"tree": f}\nv = VIEWS[trace.kind]\n') == [2]
    assert _kind_keyed_dict_lookups('VIEWS = {TRACE_TREE: f}\nv = VIEWS[trace.kind]\n') == []


def test_no_page_or_ui_module_compares_a_kind_with_a_literal():
    found = []
    for path in UI_SOURCES:
        source = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(REPO)}:{n}" for n in _kind_literal_comparisons(source) + _kind_keyed_dict_lookups(source)]
    assert found == []


def _kind_argument(call: ast.Call, position: int) -> ast.AST | None:
    keyword = next((k.value for k in call.keywords if k.arg == "kind"), None)
    return keyword if keyword is not None else (call.args[position] if len(call.args) > position else None)


def test_core_makes_every_trace_and_evidence_with_a_kind_constant():
    """A Trace's kind (first field) and an Evidence's (fourth) are never written as a string in core:
    a named constant of core.dialogue, whose value is one of the kinds, or a value carried along."""
    position = {"Trace": 0, "Evidence": 3}
    written, unknown = [], []
    for path in sorted((REPO / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in position):
                continue
            kind = _kind_argument(node, position[node.func.id])
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if isinstance(kind, ast.Constant):
                written.append(where)
            elif isinstance(kind, ast.Name) and kind.id.startswith(("TRACE_", "EVIDENCE_")):
                if getattr(dialogue, kind.id, None) not in (TRACE_KINDS if node.func.id == "Trace" else EVIDENCE_KINDS):
                    unknown.append(where)
    assert written == [] and unknown == []


def test_the_kinds_are_the_strings_stored_replies_carry():
    """The constants name the values replies were stored with before they existed; changing one
    would leave stored replies drawn as the plain table."""
    assert TRACE_KINDS == {"prompt", "steps", "tree", "mcts", "kg"}
    assert EVIDENCE_KINDS == {"turn", "round", "session", "sentence", "fact", "triple", "summary", "insight",
                              "knowledge", "memory"}
