"""D-SMART's extractor rules as a table (core/methods/dsmart/rules.py): every rule names a method
of its rule family and a test that exists, every family has its heading, and docs/dsm-updates.md
shows the table as rendered."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from core.cli import main
from core.methods.dsmart.change_rules import ChangeRules
from core.methods.dsmart.clause_rules import ClauseRules
from core.methods.dsmart.context import ParseContext
from core.methods.dsmart.node_rules import NodeRules
from core.methods.dsmart.rules import FAMILIES, RULES, markdown
from core.methods.dsmart.value_rules import ValueRules

CLASSES = {c.__name__: c for c in (ParseContext, NodeRules, ChangeRules, ValueRules, ClauseRules)}

TESTS = Path(__file__).resolve().parent


def test_every_rule_names_its_method_and_an_existing_test():
    tests = {n.name for p in TESTS.glob("test_dsm_*.py") for n in ast.parse(p.read_text(encoding="utf-8")).body
             if isinstance(n, ast.FunctionDef)}
    def exists(code: str) -> bool:
        owner, name = code.split(".", 1)
        holder = CLASSES.get(owner) or importlib.import_module(f"core.methods.dsmart.{owner}")
        return "." not in name and hasattr(holder, name)

    assert [r.name for r in RULES if not exists(r.code)] == []
    assert [r.test for r in RULES if r.test not in tests] == []
    assert len({r.name for r in RULES}) == len(RULES)


def test_the_docs_show_the_rules_as_rendered():
    assert main(["dsm-rules", "--check"]) == 0
    families = {r.family for r in RULES}
    assert families <= set(FAMILIES) and set(CLASSES) <= families
    assert markdown().count("\n| ") == len(RULES) + 2 * len(families)  # a header and a --- row per family, a row per rule


def test_a_family_heading_names_the_file_that_holds_its_class():
    for family, (_, where) in FAMILIES.items():
        holder = CLASSES[family].__module__ if family in CLASSES else f"core.methods.dsmart.{family}"
        assert holder == f"core.methods.dsmart.{where.removesuffix('.py')}"
