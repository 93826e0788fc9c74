"""The command line and the fixed benchmark summary format of DESIGN.md."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from core import eval as bench

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


def test_runner_writes_items_and_fixed_summary(tmp_path, monkeypatch):
    module = types.ModuleType("tiny_bench")
    module.run = _tiny_benchmark
    monkeypatch.setitem(sys.modules, "tiny_bench", module)
    monkeypatch.setitem(bench.BENCHMARKS, "tiny", "tiny_bench")
    data = tmp_path / "data.json"
    data.write_text("[]")
    ctx = bench.BenchContext(name="tiny", data=data, out=tmp_path / "out", methods=["a", "b"], limit=2, seed=7)
    summary = bench.run_benchmark(ctx)
    on_disk, items = bench.read_run(tmp_path / "out")
    assert on_disk == json.loads(json.dumps(summary))
    assert {"benchmark", "data", "code_version", "settings", "results", "timings"} <= set(on_disk)
    assert on_disk["benchmark"] == "tiny" and on_disk["data"] == str(data)
    assert on_disk["settings"]["seed"] == 7 and on_disk["settings"]["k"] == 5
    assert on_disk["results"]["a"]["recall@5"] == 1.0
    t = on_disk["timings"]["b"]["respond"]
    assert t["median_s"] == pytest.approx(0.25) and t["p95_s"] == pytest.approx(0.385)
    assert len(items) == 4 and items[0] == {"method": "a", "i": 0, "correct": True}


def test_unknown_benchmark_and_missing_data(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown benchmark"):
        bench.load_benchmark("no-such-bench")
    module = types.ModuleType("tiny_bench")
    module.run = _tiny_benchmark
    monkeypatch.setitem(sys.modules, "tiny_bench", module)
    monkeypatch.setitem(bench.BENCHMARKS, "tiny", "tiny_bench")
    ctx = bench.BenchContext(name="tiny", data=tmp_path / "absent.json", out=tmp_path / "out", methods=["a"], limit=1, seed=0)
    with pytest.raises(FileNotFoundError, match="absent.json"):
        bench.run_benchmark(ctx)


def test_code_version_names_the_commit():
    version = bench.code_version()
    assert version.startswith("0.1.0")
