"""Command line: `python -m core --help`.

With the app, the command line is the only place that reads the environment: it turns flags and
variables (WORKBENCH_LLM_BACKEND / _MODEL / _BASE_URL / _API_KEY / _DTYPE) into the frozen settings that
`core` functions take.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from core import paths
from core.config import LLMSettings, llm_settings_from


# -- shared option groups ------------------------------------------------------------------------
def _add_llm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM (defaults from WORKBENCH_LLM_* variables, else the local SmolLM2)")
    g.add_argument("--backend", choices=["local", "openai"], default=None)
    g.add_argument("--model", default=None, help="local: HF id or path; openai: model name")
    g.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    g.add_argument("--strong", action=argparse.BooleanOptionalAction, default=None,
                   help="treat the LLM as able to follow the papers' free-text prompts")
    g.add_argument("--dtype", choices=["auto", "float32", "bfloat16"], default=None,
                   help="local model weights (default auto: bfloat16 where the CPU/GPU computes it natively)")


def llm_settings_from_args(args: argparse.Namespace) -> LLMSettings:
    base = llm_settings_from(os.environ)
    backend = args.backend or ("openai" if args.base_url else base.backend)
    return LLMSettings(
        backend=backend,
        model=args.model if args.model is not None else (base.model if backend == base.backend else ""),
        base_url=args.base_url if args.base_url is not None else base.base_url,
        api_key=base.api_key,  # only from the environment: a key on the command line ends up in shell history
        strong=args.strong,
        dtype=getattr(args, "dtype", None) or base.dtype,
    )


def make_toolkit(settings: LLMSettings, with_embedder: bool = True):
    from core.llm import make_llm
    from core.methods import Toolkit
    from core.resources import load_embedder, load_local_llm

    llm = load_local_llm(settings.model, dtype=settings.dtype) if settings.backend == "local" else make_llm(settings)
    return Toolkit(llm=llm, embedder=load_embedder() if with_embedder else None, strong=settings.is_strong)


# -- bench ---------------------------------------------------------------------------------------
def _add_bench(sub) -> None:
    from core.eval import BENCHMARKS, load_benchmark

    p = sub.add_parser("bench", help="run a benchmark: writes DIR/items.jsonl and DIR/summary.json")
    names = p.add_subparsers(dest="benchmark", required=True, metavar="NAME")
    for name in sorted(BENCHMARKS):
        module = load_benchmark(name)
        b = names.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        b.add_argument("--data", required=True, type=Path, help="benchmark file")
        b.add_argument("--out", required=True, type=Path, help="output folder")
        b.add_argument("--methods", default=getattr(module, "DEFAULT_METHODS", "base"), help="comma-separated")
        b.add_argument("--limit", type=int, default=None, help="N items only (a benchmark may spread them, e.g. mtbench over its 13 tasks)")
        b.add_argument("--seed", type=int, default=0)
        b.add_argument("--quiet", action="store_true", help="no progress bar")
        _add_llm_options(b)
        if hasattr(module, "add_arguments"):
            module.add_arguments(b)
        b.set_defaults(func=_run_bench)


def _run_bench(args) -> int:
    from core.eval import BenchContext, run_benchmark

    common = {"command", "func", "benchmark", "data", "out", "methods", "limit", "seed", "quiet",
              "backend", "model", "base_url", "strong"}
    settings = llm_settings_from_args(args)
    ctx = BenchContext(
        name=args.benchmark,
        data=args.data,
        out=args.out,
        methods=[m.strip() for m in args.methods.split(",") if m.strip()],
        limit=args.limit,
        seed=args.seed,
        options={k: v for k, v in vars(args).items() if k not in common},
        make_tools=lambda: make_toolkit(settings),
        progress=not args.quiet,
    )
    summary = run_benchmark(ctx)
    print(json.dumps({"results": summary["results"], "out": str(args.out)}, indent=2, default=str))
    return 0


# -- info ----------------------------------------------------------------------------------------
def _add_info(sub) -> None:
    p = sub.add_parser("info", help="which LLM backend is configured, and whether it answers")
    _add_llm_options(p)
    p.add_argument("--ping", action="store_true", help="send a tiny request and time it")
    p.add_argument("--speed", action="store_true", help="time the model load and generation (tokens per second)")
    p.set_defaults(func=_run_info)


def _run_info(args) -> int:
    from core.llm import LLMError

    settings = llm_settings_from_args(args)
    print(f"LLM: {settings.describe()} (key {'set' if settings.api_key else 'not set'})")
    if args.ping:
        try:
            toolkit = make_toolkit(settings, with_embedder=False)
            reply = toolkit.llm.ping()
        except LLMError as err:
            print(f"not answering: {err}", file=sys.stderr)
            return 1
        print(f"answers in {reply.seconds:.2f} s: {reply.text!r}")
    if args.speed:
        return _measure_speed(settings)
    return 0


def _measure_speed(settings: LLMSettings) -> int:
    """Load time (first: GGUF conversion; later: the cached safetensors) and decode speed."""
    import time

    from core.llm import make_llm

    t0 = time.perf_counter()
    llm = make_llm(settings)
    where = getattr(llm, "loaded_from", settings.backend)
    print(f"load: {time.perf_counter() - t0:.2f} s ({where}{', ' + llm.dtype if hasattr(llm, 'dtype') else ''})")
    prompt = "Write a short paragraph about the history of tea."
    llm.chat(prompt, temperature=0.0, max_tokens=8)  # warm-up
    rates = []
    for _ in range(3):
        c = llm.chat(prompt, temperature=0.0, max_tokens=128)
        rates.append(c.completion_tokens / c.seconds)
    batch = llm.chat_batch([prompt] * 4, temperature=0.0, max_tokens=64)
    batch_rate = sum(c.completion_tokens for c in batch) / batch[0].seconds
    print(f"decode: {sorted(rates)[1]:.1f} tokens/s (median of 3, 128 new tokens, greedy); batch of 4: {batch_rate:.1f} tokens/s")
    if llm.supports_scoring:  # prompt processing, what likelihood scoring costs (cache cleared: a cold prompt)
        long_prompt = " ".join(f"Fact {i}: the user mentioned item number {i} in passing." for i in range(40))
        seconds = []
        for _ in range(3):
            llm.clear_prompt_cache()
            t1 = time.perf_counter()
            llm.score(long_prompt, [f"{k / 10:.1f}" for k in range(11)])
            seconds.append(time.perf_counter() - t1)
        llm.clear_prompt_cache()
        tokens = len(llm.tokenizer(long_prompt)["input_ids"]) if hasattr(llm, "tokenizer") else 0
        print(f"scoring: {sorted(seconds)[1]:.3f} s for a {tokens}-token prompt and 11 candidates (median of 3)")
    return 0


# -- train-nli -----------------------------------------------------------------------------------
def _add_train_nli(sub) -> None:
    p = sub.add_parser("train-nli", help="fine-tune the 3-way NLI cross-encoder (resumable)")
    p.add_argument("--data-dir", default=str(paths.SHARED_DIR / "data" / "nli"))
    p.add_argument("--work-dir", default=str(paths.DEFAULT_CACHE_DIR / "nli-train"), help="checkpoints and log")
    p.add_argument("--out", default=str(paths.DEFAULT_NLI_MODEL_DIR), help="where the exported model goes")
    p.add_argument("--base-model", default="", help="transformer weights to start from (default: packaged MiniLM)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--minutes", type=float, default=60.0, help="time budget of this run (a rerun resumes)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--export-only", action="store_true", help="export the latest checkpoint and exit")
    p.add_argument("--no-export", action="store_true")
    p.set_defaults(func=_run_train_nli)


def _run_train_nli(args) -> int:
    from core.metrics.nli_train import NLITrainConfig, NLITrainer

    config = NLITrainConfig(
        base_model=args.base_model or str(paths.packaged_embedder_dir()),
        data_dir=args.data_dir,
        work_dir=args.work_dir,
        out_dir=args.out,
        max_length=args.max_length,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        epochs=args.epochs,
        time_budget_min=args.minutes,
        threads=args.threads,
    )
    trainer = NLITrainer(config)
    if not args.export_only:
        state = trainer.run()
        print(f"trained {state.global_step} steps, {state.pairs_seen} pairs, {state.train_seconds / 60:.1f} min")
    if not args.no_export:
        print(f"exported to {trainer.export()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Dialogue memory and factuality workbench")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_bench(sub)
    _add_info(sub)
    _add_train_nli(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
