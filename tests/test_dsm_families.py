"""The local extractor's rule families (core/methods/dsmart/*_rules.py) are composed, not inherited:
each is given the parse context and the lower families it calls, and none reaches a higher one, by
import or by call (issue 41: the mixins called each other both ways, a loop no import check saw)."""

from __future__ import annotations

import ast
import inspect

from core.methods.dsmart import change_rules, clause_rules, node_rules, value_rules
from core.methods.dsmart.change_rules import ChangeRules
from core.methods.dsmart.clause_rules import ClauseRules
from core.methods.dsmart.context import ParseContext
from core.methods.dsmart.fragment import FragmentBuilder
from core.methods.dsmart.node_rules import NodeRules
from core.methods.dsmart.value_rules import ValueRules

# lowest first: a family may call the ones before it
ORDER = [(node_rules, NodeRules, "nodes"), (change_rules, ChangeRules, "changes"),
         (value_rules, ValueRules, "values"), (clause_rules, ClauseRules, "clauses")]


def test_each_family_is_given_the_context_and_the_families_below_it():
    for i, (_, cls, _) in enumerate(ORDER):
        assert cls.__bases__ == (object,)
        params = list(inspect.signature(cls.__init__).parameters)[1:]
        assert params == ["ctx", *(attr for _, _, attr in ORDER[:i])]


def test_no_family_imports_or_calls_a_higher_one():
    for i, (module, _, _) in enumerate(ORDER):
        tree = ast.parse(inspect.getsource(module))
        higher = {m.__name__ for m, _, _ in ORDER[i:]}
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported & higher == set(), module.__name__
        reached = {n.value.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Attribute) and isinstance(n.value.value, ast.Name) and n.value.value.id == "self"}
        assert reached & {attr for _, _, attr in ORDER[i:]} == set(), module.__name__


def test_the_families_share_one_context():
    ctx = ParseContext(FragmentBuilder(), "user")
    nodes = NodeRules(ctx)
    changes = ChangeRules(ctx, nodes)
    values = ValueRules(ctx, nodes, changes)
    clauses = ClauseRules(ctx, nodes, changes, values)
    assert {id(f.ctx) for f in (nodes, changes, values, clauses)} == {id(ctx)}
    assert clauses.values is values and values.changes is changes and changes.nodes is nodes
    assert ParseContext(FragmentBuilder(), "user").used is not ctx.used  # one set of used tokens per utterance
