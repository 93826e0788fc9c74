"""Command line: the training commands (`train-nli`, `train-factcheck`, `train-relevance`,
`train-triton`), each resumable or repeatable, writing its model and card under assets/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core import paths


def add_commands(sub) -> None:
    _add_train_nli(sub)
    _add_train_relevance(sub)
    _add_train_triton(sub)
    _add_train_factcheck(sub)


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
    p.add_argument("--device", default="auto", help="auto (the GPU when torch sees one), cpu or cuda")
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
        device=args.device,
    )
    trainer = NLITrainer(config)
    if not args.export_only:
        state = trainer.run()
        print(f"trained {state.global_step} steps, {state.pairs_seen} pairs, {state.train_seconds / 60:.1f} min")
    if not args.no_export:
        print(f"exported to {trainer.export()}")
    return 0


# -- train-factcheck ------------------------------------------------------------------------------
def _add_train_factcheck(sub) -> None:
    p = sub.add_parser("train-factcheck", help="train the offline FactScore verifier's classifier on HybriDialogue dev")
    p.add_argument("--data", default=str(paths.SHARED_DIR / "data" / "hybridialogue" / "hybridial_annotated_dev.json"))
    p.add_argument("--out", default="", help="model folder (default assets/models/factcheck)")
    p.add_argument("--signals-cache", default=str(paths.DEFAULT_CACHE_DIR / "factcheck-signals.json"),
                   help="extracted signals, reused while the data file is unchanged")
    p.add_argument("--report", default="results/factcheck-train.json", help="cross-validation summary (JSON)")
    p.add_argument("--repeats", type=int, default=3, help="shuffles of the outer grouped CV")
    p.set_defaults(func=_run_train_factcheck)


def _run_train_factcheck(args) -> int:
    from dataclasses import replace

    from core.data.hybridialogue import load_hybridialogue_facts
    from core.metrics.fact_classifier import DEFAULT_FACTCHECK_DIR, TrainSettings
    from core.metrics.fact_train import run_training

    command = "python -m core train-factcheck --data " + paths.portable_path(args.data) + (
        f" --repeats {args.repeats}" if args.repeats != 3 else "")
    summary = run_training(args.data, load_hybridialogue_facts, args.out or DEFAULT_FACTCHECK_DIR, replace(TrainSettings(), repeats=args.repeats),
                           args.signals_cache or None, args.report or None, command)
    print(json.dumps(summary, indent=2))
    return 0



# -- train-relevance -----------------------------------------------------------------------------
def _add_train_relevance(sub) -> None:
    from core.methods.kgaug.relevance import DEFAULT_RELEVANCE_DIR

    default_data = paths.SHARED_DIR / "data" / "opendialkg" / "opendialkg_test.csv"
    p = sub.add_parser("train-relevance", help="train Triton's query-triple relevance cross-encoder on OpenDialKG")
    p.add_argument("--data", action="append", default=None, help=f"OpenDialKG CSV (repeatable; default {default_data})")
    p.add_argument("--out", default=str(DEFAULT_RELEVANCE_DIR), help="where the exported model goes")
    p.add_argument("--work-dir", default=str(paths.DEFAULT_CACHE_DIR / "relevance-train"), help="training log")
    p.add_argument("--base-model", default="",
                   help="weights to start from: a MiniLM folder or a cross-encoder such as assets/models/nli-minilm-l6 "
                        "(default: the packaged MiniLM)")
    p.add_argument("--layers", type=int, default=3, help="keep the first N transformer layers")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=6e-5)
    p.add_argument("--negatives", type=int, default=4, help="negatives per positive")
    p.add_argument("--max-length", type=int, default=48)
    p.add_argument("--minutes", type=float, default=14.0, help="time budget of the training loop")
    p.add_argument("--budget-clock", choices=["cpu", "wall"], default="cpu",
                   help="cpu: CPU seconds of this process (= wall on an idle machine; bounds the work on a shared one)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--limit", type=int, default=0, help="train on the first N grounded turns only (smoke tests)")
    p.add_argument("--no-eval", action="store_true", help="skip the held-out evaluation written into the model card")
    p.set_defaults(func=_run_train_relevance)


def _run_train_relevance(args) -> int:
    from core.methods.kgaug.card import evaluate_and_write_card
    from core.methods.kgaug.pipeline import load_knowledge
    from core.methods.kgaug.sources import opendialkg_sources
    from core.methods.kgaug.train import RelevanceTrainConfig, train

    data = tuple(args.data or [str(paths.SHARED_DIR / "data" / "opendialkg" / "opendialkg_test.csv")])
    config = RelevanceTrainConfig(
        data_files=data, out_dir=args.out, work_dir=args.work_dir,
        base_model=args.base_model or str(paths.packaged_embedder_dir()), layers=args.layers,
        max_length=args.max_length, negatives=args.negatives, batch_size=args.batch_size, learning_rate=args.lr,
        epochs=args.epochs, seed=args.seed, time_budget_min=args.minutes, threads=args.threads,
        limit_examples=args.limit, budget_clock=args.budget_clock,
    )
    knowledge = load_knowledge(opendialkg_sources().with_dialogues(*data))
    report = train(config, knowledge.kg, knowledge.linker)
    print(f"trained {report.steps} steps ({report.epochs_done} epochs) on {report.pairs} pairs from "
          f"{report.examples} turns in {report.train_seconds / 60:.1f} min -> {args.out}")
    card = evaluate_and_write_card(config, report, knowledge, evaluate=not args.no_eval, command=" ".join(sys.argv[1:]))
    print(f"model card: {card}")
    return 0


# -- train-triton ----------------------------------------------------------------------------------
def _add_train_triton(sub) -> None:
    from core.methods.kgaug.features import DEFAULT_FEATURE_MODEL_DIR

    default_data = paths.SHARED_DIR / "data" / "opendialkg" / "opendialkg_test.csv"
    p = sub.add_parser("train-triton", help="train Triton's default relevance model (relation classifier + BM25 + graph features)")
    p.add_argument("--data", action="append", default=None, help=f"OpenDialKG CSV (repeatable; default {default_data})")
    p.add_argument("--out", default=str(DEFAULT_FEATURE_MODEL_DIR), help="where the model goes")
    p.add_argument("--no-eval", action="store_true", help="skip the held-out evaluation written into the model card")
    p.set_defaults(func=_run_train_triton)


def _run_train_triton(args) -> int:
    from core.methods.kgaug.card import evaluate, write_feature_card
    from core.methods.kgaug.features import FeatureTrainSettings, settings_record, train_feature_model
    from core.methods.kgaug.pipeline import load_knowledge
    from core.methods.kgaug.rankers import BM25Ranker, TritonFeatureRanker
    from core.methods.kgaug.sources import opendialkg_sources
    from core.methods.kgaug.train import training_examples

    data = tuple(args.data or [str(paths.SHARED_DIR / "data" / "opendialkg" / "opendialkg_test.csv")])
    knowledge = load_knowledge(opendialkg_sources().with_dialogues(*data))
    settings = FeatureTrainSettings()
    model, report = train_feature_model(training_examples(data, "train"), knowledge, settings)
    model.save(args.out, settings_record(settings, data, report))
    print(f"trained on {report.examples} turns ({report.candidate_rows} candidates, {report.relation_classes} relation classes) "
          f"in {report.seconds:.0f} s -> {args.out}")
    figures = {}
    if not args.no_eval:
        figures = evaluate(training_examples(data, "eval"), knowledge, [BM25Ranker(), TritonFeatureRanker(model)])
        (Path(args.out) / "heldout_eval.json").write_text(json.dumps(figures, indent=1))
    card = write_feature_card(Path(args.out), data, settings, report, figures, " ".join(sys.argv[1:]) or "train-triton")
    print(f"model card: {card}")
    return 0
