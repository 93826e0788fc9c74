"""D-SMART's extractor rules as a table (core/methods/dsmart/rules.py): every rule names a method
of the clause rules and a test that exists, and docs/dsm-updates.md shows the table as rendered."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from core.cli import main
from core.methods.dsmart.clauses import Clauses
from core.methods.dsmart.rules import RULES, markdown

TESTS = Path(__file__).resolve().parent


def test_every_rule_names_its_method_and_an_existing_test():
    tests = {n.name for p in TESTS.glob("test_dsm_*.py") for n in ast.parse(p.read_text(encoding="utf-8")).body
             if isinstance(n, ast.FunctionDef)}
    def exists(code: str) -> bool:
        if "." not in code:
            return hasattr(Clauses, code)
        module, name = code.rsplit(".", 1)
        return hasattr(importlib.import_module(f"core.methods.dsmart.{module}"), name)

    assert [r.name for r in RULES if not exists(r.code)] == []
    assert [r.test for r in RULES if r.test not in tests] == []
    assert len({r.name for r in RULES}) == len(RULES)


def test_the_docs_show_the_rules_as_rendered():
    assert main(["dsm-rules", "--check"]) == 0
    assert markdown().count("\n") == len(RULES) + 1
