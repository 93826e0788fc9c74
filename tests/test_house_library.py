"""Library code sits below the command line (issue 56): the toolkit and the benchmark request are
modules that the CLI, the pages and the lab scripts import; the CLI is imported by nothing but its
entry point and tests; pages reach the methods through the registry alone; and inside core/methods
no sub-package and the modules beside it import each other (SGMem's calibration lives in sgmem/)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import test_architecture as arch  # the file-level import graph of core and its cycle finder

REPO = Path(__file__).resolve().parent.parent
CLI_MODULES = ("core.cli", "core.cli_qa", "core.cli_train", "core.__main__")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import statement in `path`, top-level or inside a function; `from a
    import b` gives both a.b and a (b may be a module or a name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(node.lineno, node.module)] + [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _is_under(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).glob("*.py"))


def test_nothing_in_ui_pages_or_lab_scripts_imports_the_command_line():
    """They build their toolkit (core.toolkit) and start benchmarks (core.benchmarks.request) from
    the library, never through the CLI's parser."""
    offenders = [f"{p.relative_to(REPO)}:{line} {m}" for p in _files("ui", "pages", "scripts/lab")
                 for line, m in _imports(p) if _is_under(m, CLI_MODULES)]
    assert offenders == []


def _is_method_module(name: str) -> bool:
    """A module or package under core.methods (not a name the registry exports)."""
    where = REPO / Path(*name.split("."))
    return name.startswith("core.methods.") and (where.with_suffix(".py").is_file() or where.is_dir())


def _room(module: str) -> str:
    """A sub-package of core/methods counts as one room (core.methods.sgmem.*), every module beside
    them as its own (core.methods.method, the registry core.methods)."""
    parts = module.split(".")
    if len(parts) >= 3 and (REPO / "core" / "methods" / parts[2]).is_dir():
        return ".".join(parts[:3])
    return module


def test_no_sub_package_of_core_methods_and_a_module_beside_it_import_each_other():
    """The arrow back up: a method's package (sgmem/) imported a module of core/methods
    (calibration.py) that imported the package back. The base modules (method, render, layout, ...)
    are imported by the method packages, so they must not import a method package that does."""
    graph: dict[str, set[str]] = {}
    for module, targets in arch._file_imports().items():
        if module == "core.methods" or module.startswith("core.methods."):
            room = _room(module)
            graph.setdefault(room, set()).update(
                _room(t) for t in targets if (t == "core.methods" or t.startswith("core.methods.")) and _room(t) != room)
    assert "core.methods.sgmem" in graph and "core.methods.calibration" not in graph
    assert arch._cycle(graph) == []


@pytest.mark.parametrize("library", ["core.toolkit", "core.benchmarks.request", "core.benchmarks.runner"])
def test_the_library_below_the_cli_never_reaches_it(library):
    """Not directly, not through anything it imports (lazy imports count)."""
    graph = arch._file_imports()
    seen, todo = set(), [library]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += sorted(graph.get(module, ()))
    assert sorted(m for m in seen if _is_under(m, CLI_MODULES)) == []


def test_the_pages_small_run_is_the_command_lines_run(tmp_path, monkeypatch):
    """The Retrieval page's small benchmark, built without the CLI's parser, is the request that
    `python -m core` makes of the same command line: same options (recorded settings), LLM, command."""
    from core.cli import bench_request, build_parser
    from ui.retrieval import small_run_argv, small_run_request

    monkeypatch.delenv("WORKBENCH_LLM_BACKEND", raising=False)
    data, out = tmp_path / "locomo.json", tmp_path / "run"
    argv = small_run_argv(data, out, "conv-26", 20, "hashing")
    args = build_parser().parse_args(argv)
    args.argv = argv
    assert small_run_request(data, out, "conv-26", 20, "hashing") == bench_request(args)


def test_benchmark_options_name_what_a_benchmark_declares():
    from core.benchmarks.request import benchmark_options

    options = benchmark_options("locomo-retrieval", conversations="conv-26")
    assert options["conversations"] == "conv-26" and options["ks"] == "5,10" and "workers" not in options
    with pytest.raises(ValueError, match="no option"):
        benchmark_options("locomo-retrieval", conversation="conv-26")
