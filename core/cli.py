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
from core.config import BACKENDS, LLMSettings, llm_settings_from


# -- shared option groups ------------------------------------------------------------------------
def _add_llm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM (defaults from WORKBENCH_LLM_* variables, else the embedded Qwen2.5-Coder-0.5B)")
    g.add_argument("--backend", choices=list(BACKENDS), default=None,
                   help="local = embedded llama.cpp (default); transformers = HF model here; openai = an endpoint")
    g.add_argument("--model", default=None,
                   help="local: small | default | large | path.gguf; transformers: HF id or folder; openai: model name")
    g.add_argument("--threads", type=int, default=None, help="local: CPU threads (default all cores)")
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
        threads=args.threads if getattr(args, "threads", None) is not None else base.threads,
    )


def make_toolkit(settings: LLMSettings, with_embedder: bool = True):
    from core.llm import make_llm
    from core.methods import Toolkit
    from core.resources import load_embedder, load_shared_llm

    llm = make_llm(settings) if settings.backend == "openai" else load_shared_llm(settings)
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
    try:
        if args.ping:
            toolkit = make_toolkit(settings, with_embedder=False)
            reply = toolkit.llm.ping()
            print(f"answers in {reply.seconds:.2f} s: {reply.text!r}")
        if args.speed:
            return _measure_speed(settings)
    except (LLMError, paths.MissingResource) as err:
        print(f"not answering: {err}", file=sys.stderr)
        return 1
    return 0


def _measure_speed(settings: LLMSettings) -> int:
    """Load time (first: GGUF conversion; later: the cached safetensors) and decode speed."""
    import time

    from core.llm import make_llm

    t0 = time.perf_counter()
    llm = make_llm(settings)
    where = getattr(llm, "loaded_from", settings.backend)
    detail = f", {llm.dtype}" if hasattr(llm, "dtype") else (f", {llm.threads} threads" if hasattr(llm, "threads") else "")
    print(f"load: {time.perf_counter() - t0:.2f} s ({where}: {llm.name}{detail})")
    prompt = "Write a short paragraph about the history of tea."
    llm.chat(prompt, temperature=0.0, max_tokens=8)  # warm-up
    rates = []
    for _ in range(3):
        c = llm.chat(prompt, temperature=0.0, max_tokens=128)
        rates.append(c.completion_tokens / c.seconds)
    firsts = []
    for i in range(3):  # what a Chat user waits before the reply starts to appear (a fresh prompt each time)
        t1 = time.perf_counter()
        pieces = llm.stream(f"{i}. Hi, my name is Alice and I live in Lisbon. Where do I live?", temperature=0.0, max_tokens=16)
        next(iter(pieces), None)
        firsts.append(time.perf_counter() - t1)
        pieces.close()
    print(f"first streamed piece: {sorted(firsts)[1]:.2f} s (median of 3, a 30-token prompt not seen before)")
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
        tokens = (len(llm.tokenizer(long_prompt)["input_ids"]) if hasattr(llm, "tokenizer")
                  else len(llm.tokenize(long_prompt)) if hasattr(llm, "tokenize") else 0)
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


# -- models --------------------------------------------------------------------------------------
def _add_models(sub) -> None:
    p = sub.add_parser("models", help="the embedded LLMs: installed or not, joined and verified")
    p.add_argument("--prepare", default=None, metavar="KEY", help="join and verify this model now (small, default, large)")
    p.set_defaults(func=_run_models)


def _run_models(args) -> int:
    from core.llm.gguf_models import MODELS, ModelFileError, model_file

    keys = [args.prepare] if args.prepare else list(MODELS)
    status = 0
    for key in keys:
        if key not in MODELS:
            print(f"unknown model {key!r}; known: {', '.join(MODELS)}", file=sys.stderr)
            return 2
        model = MODELS[key]
        try:
            path = model_file(model)
            print(f"{key:8} {model.label}: ready, {path} ({path.stat().st_size:,} bytes{', sha256 verified' if model.sha256 else ''})")
        except ModelFileError as err:
            print(f"{key:8} {model.label}: {err}", file=sys.stderr if args.prepare else sys.stdout)
            status = 1 if args.prepare else status
    return status


# -- chat ----------------------------------------------------------------------------------------
def _add_chat(sub) -> None:
    from core.methods import METHODS

    p = sub.add_parser("chat", help="chat headlessly with a method: interactive, or a JSONL script of user turns")
    p.add_argument("--method", default="base", choices=list(METHODS))
    p.add_argument("--script", default=None, help='JSONL: {"user": "..."} per turn; {"new_dialogue": true} starts afresh')
    p.add_argument("--out", default=None, help="JSONL of replies (default: stdout)")
    p.add_argument("--max-tokens", type=int, default=0, help="bound on each reply's length (default: the method's setting)")
    _add_llm_options(p)
    p.set_defaults(func=_run_chat)


def _run_chat(args) -> int:
    from core.chat import ChatSession, ScriptError, read_script, run_script, summarise
    from core.llm import LLMError

    try:
        steps = read_script(args.script) if args.script else None
    except (OSError, ScriptError) as err:
        print(f"cannot read the script: {err}", file=sys.stderr)
        return 2
    settings = llm_settings_from_args(args)
    try:
        session = ChatSession(args.method, make_toolkit(settings), max_tokens=args.max_tokens)
        if steps is None:
            return _interactive(session)
        out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
        records = []
        try:
            for record in run_script(session, steps):
                records.append(record)
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                out.flush()
        finally:
            if out is not sys.stdout:
                out.close()
        print(json.dumps({"method": args.method, "model": session.tools.llm.name, **summarise(records)}), file=sys.stderr)
    except (LLMError, paths.MissingResource) as err:
        print(f"the LLM failed: {err}", file=sys.stderr)
        return 1
    return 0


def _interactive(session) -> int:
    print(f"{session.method_name} on {session.tools.llm.name}. /new starts a fresh conversation, /quit (or Ctrl-D) ends.")
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            print()
            return 0
        if text in ("/quit", "/exit"):
            return 0
        if text == "/new":
            session.new_dialogue()
            print("(new conversation)")
            continue
        if not text:
            continue
        print("bot> ", end="", flush=True)
        streamed = []
        record = session.send(text, sink=lambda piece: (streamed.append(piece), print(piece, end="", flush=True)))
        print(("" if streamed else record["reply"]) + f"   [{record['seconds']:.1f} s]")


# -- annotation ------------------------------------------------------------------------------------
def _add_annotation(sub) -> None:
    from core.annotation.cli import add_parser

    add_parser(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Dialogue memory and factuality workbench")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_bench(sub)
    _add_info(sub)
    _add_chat(sub)
    _add_models(sub)
    _add_train_nli(sub)
    _add_annotation(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
