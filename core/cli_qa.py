"""Command-line pieces of the QA benchmarks: reader and judge LLMs given as specs
(`local:default`, `openai:gpt-4o-mini`), `judge-agreement` and `qa-report`. Like core.cli, this is
where the environment is read (the judge's API key)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from core import paths
from core.config import BACKENDS, LLMSettings


def add_commands(sub) -> None:
    _add_judge_agreement(sub)
    _add_qa_report(sub)


def llm_settings_from_spec(spec: str, base_url: str = "", api_key: str = "") -> LLMSettings:
    """`local:default|small|large|PATH`, `transformers:ID`, `openai:MODEL` -> LLMSettings (the QA
    benchmarks' --reader and --judge)."""
    backend, _, model = spec.partition(":")
    if backend not in BACKENDS:
        raise SystemExit(f"LLM spec {spec!r}: start with local:, transformers: or openai:")
    if backend == "openai" and not model:
        raise SystemExit(f"LLM spec {spec!r}: name the model, e.g. openai:gpt-4o-mini")
    return LLMSettings(backend=backend, model=model, base_url=base_url if backend == "openai" else "",
                       api_key=api_key if backend == "openai" else "")


def judge_factory(args):
    """reader LLM -> judge LLM for --judge (none: no judge; reader: the reader itself)."""
    spec = getattr(args, "judge", "none") or "none"
    if spec == "none":
        return None
    if spec == "reader":
        return lambda reader: reader

    def make(reader):
        from core.llm import make_llm
        from core.resources import load_shared_llm

        key = os.environ.get("WORKBENCH_JUDGE_API_KEY") or os.environ.get("WORKBENCH_LLM_API_KEY", "")
        settings = llm_settings_from_spec(spec, getattr(args, "judge_base_url", ""), key)
        return make_llm(settings) if settings.backend == "openai" else load_shared_llm(settings)

    return make


# -- judge-agreement ------------------------------------------------------------------------------
def _add_judge_agreement(sub) -> None:
    p = sub.add_parser("judge-agreement", help="agreement (accuracy, Cohen's kappa) of a QA judge with hand-labelled answers")
    p.add_argument("--labels", type=Path, default=paths.REPO_ROOT / "benchmarks" / "qa_judge_labels.jsonl",
                   help="JSONL of question, gold, answer, label (1 correct, 0 incorrect)")
    p.add_argument("--judge", default="none", help="local:MODEL | openai:MODEL | none (only the offline F1 reference)")
    p.add_argument("--judge-base-url", default="", help="endpoint of an openai: judge")
    p.add_argument("--out", type=Path, default=None, help="write the result as JSON here")
    p.set_defaults(func=_run_judge_agreement)


def _run_judge_agreement(args) -> int:
    from core.metrics.qa_judge import QAJudge, judge_agreement, load_labels

    rows = load_labels(args.labels)
    factory = judge_factory(args)
    judge = QAJudge(factory(None)) if factory is not None and args.judge != "reader" else None
    import time

    from core.benchmarks.runner import code_version

    out = {"date": time.strftime("%Y-%m-%d"), "command": "python -m core " + " ".join(args.argv),
           "code_version": code_version(), "labels_file": paths.portable_path(args.labels), **judge_agreement(judge, rows)}
    for name in [k for k in out if k.startswith("f1>=")] + (["judge"] if "judge" in out else []):
        r = out[name]
        print(f"{out[name].get('name', name)}: accuracy {r['accuracy']:.3f}, kappa {r['kappa']:.3f} "
              f"over {r['judged']} of {r['n']} labelled answers ({r['no_verdict']} without a verdict)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


# -- qa-report ------------------------------------------------------------------------------------
def _add_qa_report(sub) -> None:
    p = sub.add_parser("qa-report", help="the QA summary of a locomo-qa / longmemeval-qa run folder, from its items "
                       "(a run still going or killed included)")
    p.add_argument("folder", type=Path)
    p.add_argument("--boot", type=int, default=2000, help="bootstrap resamples")
    p.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    p.set_defaults(func=_run_qa_report)


def _run_qa_report(args) -> int:
    from core.benchmarks.qa_report import summarise
    from core.benchmarks.runner import read_items

    items = read_items(args.folder / "items.jsonl")
    report = summarise(items, boot=args.boot)
    report["questions"] = len({i["question_id"] for i in items})
    print(f"{report['questions']} questions, {len(items)} items")
    for m, r in report["results"].items():
        ci = r.get("f1_ci95", [float("nan")] * 2)
        judged = f"  judge (unvalidated) {r['judge_accuracy']:.3f}" if "judge_accuracy" in r else ""
        print(f"{m:>12}  F1 {r.get('f1', float('nan')):.3f} [{ci[0]:.3f}, {ci[1]:.3f}]  EM {r.get('em', float('nan')):.3f}  "
              f"n {r['n']}  no_fit {r['no_fit']}  tokens {r['context_tokens_mean']}  p50 {r['latency_p50_s']} s{judged}")
    for k, v in report["paired"]["f1"].items():
        print(f"  {k:>26}: {v['diff']:+.3f} [{v['ci95'][0]:+.3f}, {v['ci95'][1]:+.3f}] n={v['n']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    return 0
