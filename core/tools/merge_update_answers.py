"""Join the parts of a `bench dsm-update-answers` run split with --limit / --offset into one summary.

Usage: .venv/bin/python -m core merge-update-answers RUN_DIR [RUN_DIR ...] --out results/NAME.json [--rejudge]
The items of every part are read (a question answered twice by one method is refused), the results
are recomputed over all of them with the benchmark's own `aggregate`, and the header (benchmark,
data, settings) comes from the first part, with each part's code version and wall time listed.
With --rejudge the stored replies are judged again by the current `judge` and `answer_kind` (the
data file named in the run's header is read): a change of the answer check re-scores old replies
without asking the model again.
"""

from __future__ import annotations

import json
from pathlib import Path


def rejudge(items: list[dict], data: str) -> list[dict]:
    from core.benchmarks.dsm_check import answer_kind, judge
    from core.data.longmemeval import load_longmemeval
    from core.paths import REPO_ROOT

    path = Path(data) if Path(data).is_absolute() else REPO_ROOT / data  # results name data from the repo root
    instances = {i.question_id: i for i in load_longmemeval(path)}
    out = []
    for item in items:
        instance = instances[item["question_id"]]
        kind = answer_kind(instance)
        out.append({**item, "answer_kind": kind, **judge(item["reply"], instance, kind)})
    return out


def merge(runs: list[str], rejudged: bool = False) -> dict:
    from core.benchmarks.runner import read_run
    from core.benchmarks.update_answers import aggregate

    head, items, seen, parts = None, [], set(), []
    for run in runs:
        summary, part = read_run(run)
        head = head or summary
        for item in part:
            key = (item["question_id"], item["method"])
            if key in seen:
                raise ValueError(f"{run}: {key} is in an earlier part too")
            seen.add(key)
            items.append(item)
        parts.append({"offset": summary["settings"].get("offset", 0), "questions": summary["settings"]["questions"],
                      "code_version": summary["code_version"], "wall_s": summary.get("wall_s")})
    methods = head["settings"]["methods"]
    if rejudged:
        items = rejudge(items, head["data"])
    out = {k: head[k] for k in ("benchmark", "data") if k in head}
    out["settings"] = {**head["settings"], "questions": len({i["question_id"] for i in items}), "offset": 0,
                       "limit": None, "parts": parts, "rejudged": rejudged}
    out["results"] = {m: aggregate([i for i in items if i["method"] == m]) for m in methods}
    return out


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", help="folders written by python -m core bench dsm-update-answers")
    p.add_argument("--out", required=True)
    p.add_argument("--rejudge", action="store_true", help="judge the stored replies again with the current answer check")


def main(args) -> int:
    merged = merge(args.runs, args.rejudge)
    Path(args.out).write_text(json.dumps(merged, indent=1))
    for method, r in merged["results"].items():
        print(f"{method}: accuracy {r['accuracy']:.3f} (current values {r['accuracy_latest']:.3f}), "
              f"stale only {r['stale_only']:.3f}, reply median {r['latency_median_s']} s, {r['questions']} questions")
    return 0
