"""The command line and the fixed benchmark summary format of DESIGN.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.benchmarks import runner as bench

REPO = Path(__file__).resolve().parent.parent


def test_help_lists_subcommands():
    out = subprocess.run([sys.executable, "-m", "core", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for command in ("bench", "info", "train-nli"):
        assert command in out.stdout


def test_info_reports_backend_without_key(monkeypatch):
    env = {"PATH": "", "WORKBENCH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "WORKBENCH_LLM_API_KEY": "sk-zzz", "WORKBENCH_LLM_MODEL": "m"}
    out = subprocess.run([sys.executable, "-m", "core", "info"], cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0
    assert "OpenAI-compatible: m at http://127.0.0.1:9/v1" in out.stdout and "key set" in out.stdout
    assert "sk-zzz" not in out.stdout + out.stderr


def _tiny_benchmark(ctx):
    timings = {}
    for m in ctx.methods:
        for i in range(ctx.limit or 3):
            ctx.write_item({"method": m, "i": i, "correct": i % 2 == 0})
        timings[m] = {"respond": [0.1, 0.2, 0.3, 0.4]}
    return bench.BenchResult(results={m: {"accuracy": 0.5, "recall@5": 1.0} for m in ctx.methods}, timings=timings,
                             settings={"k": 5})


def test_runner_writes_items_and_fixed_summary(tmp_path, register_benchmark):
    register_benchmark("tiny", _tiny_benchmark)
    data = tmp_path / "data.json"
    data.write_text("[]")
    ctx = bench.BenchContext(name="tiny", data=data, out=tmp_path / "out", methods=["a", "b"], limit=2, seed=7)
    summary = bench.run_benchmark(ctx)
    on_disk, items = bench.read_run(tmp_path / "out")
    assert on_disk == json.loads(json.dumps(summary))
    assert {"benchmark", "data", "code_version", "settings", "results", "timings"} <= set(on_disk)
    assert on_disk["benchmark"] == "tiny" and on_disk["data"] == "<outside>/data.json"  # a scratch file: its name only
    assert on_disk["settings"]["seed"] == 7 and on_disk["settings"]["k"] == 5
    assert on_disk["results"]["a"]["recall@5"] == 1.0
    t = on_disk["timings"]["b"]["respond"]
    assert t["median_s"] == pytest.approx(0.25) and t["p95_s"] == pytest.approx(0.385)
    assert len(items) == 4 and items[0] == {"method": "a", "i": 0, "correct": True}


def test_the_command_line_is_recorded_in_the_summary(tmp_path, register_benchmark):
    from core.cli import main

    register_benchmark("tiny", _tiny_benchmark)
    sys.modules["test_benchmark_tiny"].__doc__ = "A tiny benchmark."
    data = tmp_path / "data.json"
    data.write_text("[]")
    assert main(["bench", "tiny", "--data", str(data), "--out", str(tmp_path / "out"), "--limit", "2", "--quiet"]) == 0
    on_disk, _ = bench.read_run(tmp_path / "out")
    assert on_disk["command"] == "python -m core bench tiny --data '<outside>/data.json' --out '<outside>/out' --limit 2 --quiet"


def test_unknown_benchmark_and_missing_data(tmp_path, register_benchmark):
    with pytest.raises(ValueError, match="unknown benchmark"):
        bench.load_benchmark("no-such-bench")
    register_benchmark("tiny", _tiny_benchmark)
    ctx = bench.BenchContext(name="tiny", data=tmp_path / "absent.json", out=tmp_path / "out", methods=["a"], limit=1, seed=0)
    with pytest.raises(FileNotFoundError, match="absent.json"):
        bench.run_benchmark(ctx)


def test_code_version_names_the_commit():
    version = bench.code_version()
    assert version.startswith("0.1.0")


def test_portable_path_is_relative_to_the_repository(tmp_path):
    from core.paths import portable_path

    repo, shared = tmp_path / "work" / "repo", tmp_path / "work" / "shared"
    (repo / "assets" / "models").mkdir(parents=True)
    (shared / "data").mkdir(parents=True)
    assert portable_path(repo / "assets" / "models", root=repo) == "assets/models"
    assert portable_path(shared / "data" / "x.json", root=repo) == "../shared/data/x.json"
    assert portable_path(repo / ".." / "shared" / "data", root=repo) == "../shared/data"
    assert portable_path(repo, root=repo) == "."
    assert portable_path("/elsewhere/cache.sqlite3", root=repo) == "/elsewhere/cache.sqlite3"  # outside: as given
    assert portable_path(tmp_path / "work" / "sharedx" / "f", root=repo) == str(tmp_path / "work" / "sharedx" / "f")
    # a worktree beside a link to the shared folder (wt/shared -> ../shared), as in the helpers' checkouts
    (tmp_path / "work" / "wt" / "repo").mkdir(parents=True)
    (tmp_path / "work" / "wt" / "shared").symlink_to(shared)
    assert portable_path(tmp_path / "work" / "wt" / "shared" / "data" / "x.json", root=tmp_path / "work" / "wt" / "repo") == "../shared/data/x.json"


def test_summary_records_repository_relative_paths(tmp_path, monkeypatch, register_benchmark):
    from functools import partial

    from core.paths import portable_path

    repo = tmp_path / "repo"
    data = tmp_path / "shared" / "data" / "bench.json"
    data.parent.mkdir(parents=True)
    data.write_text("[]")
    (repo / "assets").mkdir(parents=True)
    monkeypatch.setattr(bench, "portable_path", partial(portable_path, root=repo))
    settings = {"nli_model": str(repo / "assets" / "nli"), "nested": {"cache": [repo / "c.sqlite3"]}, "url": "http://x/v1"}
    register_benchmark("tiny", lambda ctx: bench.BenchResult(results={}, settings=settings))
    ctx = bench.BenchContext(name="tiny", data=data, out=tmp_path / "out", methods=["a"], limit=1, seed=0,
                             options={"embedding_cache": str(repo / ".cache")})
    bench.run_benchmark(ctx)
    on_disk, _ = bench.read_run(tmp_path / "out")
    assert on_disk["data"] == "../shared/data/bench.json"
    assert on_disk["settings"]["nli_model"] == "assets/nli"
    assert on_disk["settings"]["embedding_cache"] == ".cache"
    assert on_disk["settings"]["nested"] == {"cache": ["c.sqlite3"]}
    assert on_disk["settings"]["url"] == "http://x/v1"


def test_kept_results_hold_no_machine_paths():
    """No file anywhere under results/ names a folder of this machine: paths are relative to the
    repository ('../shared/data/...'), a scratch folder is '<outside>/NAME' (portable_settings).
    The text of every file is read (JSON, JSONL, Markdown), commands included."""
    absolute = re.compile(r"(?<![\w.:/~<>-])/[A-Za-z_][\w.-]*/")  # '/tmp/x', '/work/...'; not 'http://', 'a/b'
    offenders = [(path.relative_to(REPO).as_posix(), m.group()) for path in sorted((REPO / "results").rglob("*"))
                 if path.is_file() for m in absolute.finditer(path.read_text(encoding="utf-8", errors="replace"))]
    assert offenders == []
    assert absolute.search('"cache": "/tmp/emb/c.sqlite3"') and not absolute.search('"url": "http://x/v1", "m": "a/b"')


def test_a_scratch_path_outside_the_repository_keeps_only_its_name():
    assert bench.portable_settings({"cache": "/elsewhere/emb/cache.sqlite3"}) == {"cache": "<outside>/cache.sqlite3"}


def test_the_summary_names_the_code_the_run_started_with(tmp_path, register_benchmark, monkeypatch):
    """A commit made while a long run goes on is not in the code the run loaded."""
    versions = iter(["0.1.0+start", "0.1.0+later"])
    monkeypatch.setattr(bench, "code_version", lambda: next(versions))

    def benchmark_during_which_a_commit_lands(ctx):
        bench.code_version()  # HEAD moves on
        return _tiny_benchmark(ctx)

    register_benchmark("tiny-commit", benchmark_during_which_a_commit_lands)
    data = tmp_path / "data.json"
    data.write_text("[]")
    ctx = bench.BenchContext(name="tiny-commit", data=data, out=tmp_path / "out", methods=["a"], limit=1, seed=0)
    assert bench.run_benchmark(ctx)["code_version"] == "0.1.0+start"
