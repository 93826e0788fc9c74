"""The Slurm array script and the Kubernetes manifest of docs/benchmarks-cluster.md: the script run as
three array tasks (the variables Slurm sets) gives shards that merge; the manifest's shards and merge
agree on N and on the folders."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from core.benchmarks.merge import merge_runs

REPO = Path(__file__).resolve().parent.parent
CLUSTER = REPO / "scripts" / "cluster"


def test_slurm_array_script_runs_shards_that_merge(tmp_path):
    raw = [{"question_id": f"q{i}", "question_type": "single-session-user", "question": "Which city did I move to?",
            "answer": "Oslo", "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["a", "b"],
            "haystack_dates": ["2023/05/01 (Mon) 08:00", "2023/05/02 (Tue) 08:00"],
            "haystack_sessions": [[{"role": "user", "content": f"I read book {i}.", "has_answer": False}],
                                  [{"role": "user", "content": "The city I moved to is Oslo.", "has_answer": True}]],
            "answer_session_ids": ["b"]} for i in range(5)]
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(raw))
    bench = f"longmemeval-retrieval --data {data} --methods bm25-t --embedder hashing --no-embedding-cache --ks 1"
    for k in range(3):
        env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(k), "SLURM_ARRAY_TASK_COUNT": "3", "RUN": str(tmp_path / "run"), "BENCH": bench}
        out = subprocess.run(["bash", str(CLUSTER / "bench-slurm.sh")], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
    merged = merge_runs([tmp_path / "run" / f"shard{k}" for k in range(3)], tmp_path / "run" / "merged")
    assert merged["questions"] == 5 and merged["results"]["bm25-t"]["recall@1"] == 1.0


def test_kubernetes_manifest_shards_and_merge_agree():
    shards, merge = yaml.safe_load_all((CLUSTER / "bench-k8s.yaml").read_text())
    spec = shards["spec"]
    n = spec["completions"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] == n
    command = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    assert f'--shard "${{JOB_COMPLETION_INDEX}}/{n}"' in command
    folder = re.search(r'--out "([^"$]+)\$\{JOB_COMPLETION_INDEX\}"', command).group(1)
    merge_spec = merge["spec"]["template"]["spec"]
    merged = merge_spec["containers"][0]["command"]
    assert merged[:4] == ["python", "-m", "core", "bench-merge"]
    assert merged[4:4 + n] == [f"{folder}{k}" for k in range(n)]
    waited = merge_spec["initContainers"][0]["command"][-1]
    assert all(f"{folder}{k}/summary.json" in waited for k in range(n))
