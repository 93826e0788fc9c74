"""Package tools behind `python -m core NAME`: the steps that tests and the docs' reproduction
commands need beside the benchmarks (turning written pairs into a data file, merging run parts,
logging the slot pairs a threshold is calibrated on, summaries for results/).

Each module has a one-line docstring (its help), `add_arguments(parser)` and `main(args) -> int`;
core/cli.py registers them from TOOLS. They import the package lazily, inside `main`.
"""

from __future__ import annotations

TOOLS: dict[str, str] = {
    "written-updates": "core.tools.written_updates",
    "merge-update-answers": "core.tools.merge_update_answers",
    "slot-pairs": "core.tools.slot_pairs",
    "value-coverage": "core.tools.value_coverage",
    "knowledge-paired": "core.tools.knowledge_paired",
    "retrieval-levels": "core.tools.retrieval_levels",
    "factcheck-oof": "core.tools.factcheck_oof",
    "mcts-build-kb": "core.tools.mcts_build_kb",
    "mcts-scale": "core.tools.mcts_scale",
    "results-index": "core.tools.results_index",
    "dsm-rules": "core.tools.dsm_rules",
    "forget-check": "core.tools.forget_check",
}
