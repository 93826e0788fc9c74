"""Train Triton's relevance cross-encoder on OpenDialKG (`python -m core train-relevance`).

Labels come from the data itself: for an assistant turn grounded by a walk, the walk's first
triple (and any other walk triple among the turn's candidates) is relevant to the user's query;
other triples around the query's entities are not. Negatives are drawn from the candidates the
pipeline would rank (entities linked in the query) plus those around the walk's own entities, so
the model also learns which relation a question asks for when linking misses.

Split: dialogues with index % 5 != 0 are trained on; index % 5 == 0 are never seen (they are the
`opendialkg-triples --split eval` evaluation). There is no model selection on them: the schedule
is fixed, the time budget bounds it, and the card reports the held-out figures once.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from core.data.opendialkg import TurnExample, in_split, iter_opendialkg
from core.methods.kgaug.candidates import CandidateSettings, gather
from core.methods.kgaug.triples import canonical, verbalize
from core.hashing import file_sha256

Pair = tuple[str, str, float]  # query, verbalised triple, label


@dataclass(frozen=True)
class RelevanceTrainConfig:
    data_files: tuple[str, ...]
    out_dir: str
    work_dir: str
    base_model: str  # sentence-transformers MiniLM folder (its transformer weights)
    layers: int = 3  # keep the first n transformer layers: half the cost of all 6, to train and to rank
    max_length: int = 48  # query + verbalised triple rarely need more
    negatives: int = 4  # per positive
    freeze_embeddings: bool = True  # the 30k x 384 word embeddings stay as pretrained (a third of the time per step)
    loss: str = "listwise+bce"  # or "bce" (binary cross-entropy only, as the paper)
    batch_size: int = 32
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    epochs: int = 2
    seed: int = 13
    time_budget_min: float = 14.0
    # What the budget counts: "cpu" = this process's CPU seconds (on an idle machine never more than
    # the wall time, whatever the threads; on a shared, time-sliced one it bounds the work, not the
    # waiting), or "wall".
    budget_clock: str = "cpu"
    threads: int = 0
    split: str = "train"
    limit_examples: int = 0  # 0 = all (tests use a handful)
    log_every: int = 50  # steps per row of training_log.jsonl (mean loss over those steps)


@dataclass
class TrainReport:
    examples: int = 0
    pairs: int = 0
    positives: int = 0
    steps: int = 0
    planned_steps: int = 0  # the learning-rate schedule's length (shortened to fit the time budget)
    epochs_done: float = 0.0
    train_seconds: float = 0.0  # wall
    cpu_seconds: float = 0.0
    stopped_by_budget: bool = False
    history: list[dict] = field(default_factory=list)


def training_examples(files, split: str, limit: int = 0) -> list[TurnExample]:
    out = []
    for path in files:
        for d in iter_opendialkg(path):
            if in_split(d.index, split):
                out.extend(d.examples())
    return out[:limit] if limit else out


@dataclass(frozen=True)
class Group:
    """One query's positive triple (first) and its negatives, verbalised."""

    query: str
    texts: tuple[str, ...]

    def pairs(self) -> list[Pair]:
        return [(self.query, t, 1.0 if i == 0 else 0.0) for i, t in enumerate(self.texts)]


def build_groups(examples, kg, linker, negatives: int, rng: random.Random,
                 candidates: CandidateSettings = CandidateSettings()) -> list[Group]:
    groups: list[Group] = []
    for ex in examples:
        gold = [canonical(*t) for t in ex.gold]
        linked = [i for e in linker.link(ex.query) for i in e.ids]
        pool = [c.triple for c in gather(kg, linked, candidates)] if linked else []
        in_pool = set(pool)
        positives = [g for k, g in enumerate(gold) if k == 0 or g in in_pool]
        walk_entities = [i for i in (kg.entity_id(gold[0].head), kg.entity_id(gold[0].tail)) if i is not None]
        pool += [c.triple for c in gather(kg, walk_entities, candidates)]
        gold_set = set(gold)
        others = list(dict.fromkeys(t for t in pool if t not in gold_set))
        for pos in dict.fromkeys(positives):
            sampled = rng.sample(others, min(negatives, len(others)))
            groups.append(Group(ex.query, (verbalize(pos), *(verbalize(n) for n in sampled))))
    return groups


def _batches(groups: list[Group], per_batch: int, rng: random.Random) -> list[list[Group]]:
    order = list(range(len(groups)))
    rng.shuffle(order)
    window = per_batch * 50  # similar lengths per batch: less padding
    out = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window], key=lambda i: len(groups[i].query) + len(groups[i].texts[0]))
        out.extend([groups[i] for i in chunk[j : j + per_batch]] for j in range(0, len(chunk), per_batch))
    rng.shuffle(out)
    return out


def group_loss(logits, sizes: list[int], kind: str = "listwise+bce"):
    """Binary cross-entropy on every pair (the paper's classifier), plus (`listwise+bce`) the
    softmax cross-entropy of each group's positive against its negatives, which ranks directly
    and learns faster from few steps."""
    import torch
    import torch.nn.functional as F

    labels = torch.cat([torch.tensor([1.0] + [0.0] * (n - 1)) for n in sizes])
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    if kind == "listwise+bce":
        ranked = [g for g in torch.split(logits, sizes) if len(g) > 1]
        if ranked:
            loss = loss + torch.stack([torch.logsumexp(g, 0) - g[0] for g in ranked]).mean()
    return loss


def load_base(base_model: str, layers: int):
    from transformers import AutoModelForSequenceClassification

    # ignore_mismatched_sizes: a cross-encoder with another head (e.g. the 3-way NLI model) may be the start
    return AutoModelForSequenceClassification.from_pretrained(base_model, num_labels=1, num_hidden_layers=layers,
                                                              ignore_mismatched_sizes=True)


def train(config: RelevanceTrainConfig, kg, linker, progress: bool = True) -> TrainReport:
    """Fine-tune and export to config.out_dir; returns what happened."""
    import torch
    from tqdm import tqdm
    from transformers import AutoTokenizer

    if config.split == "eval" or config.split == "all":
        raise ValueError("the relevance model trains on the train split only (index % 5 != 0)")
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    examples = training_examples(config.data_files, config.split, config.limit_examples)
    groups = build_groups(examples, kg, linker, config.negatives, rng)
    if not groups:
        raise ValueError("no training pairs: the data files hold no grounded assistant turns in the train split")
    per_batch = max(1, config.batch_size // (config.negatives + 1))  # groups per batch
    report = TrainReport(examples=len(examples), pairs=sum(len(g.texts) for g in groups), positives=len(groups))
    tokenizer = AutoTokenizer.from_pretrained(config.base_model)
    model = load_base(config.base_model, config.layers)
    if config.freeze_embeddings:
        model.base_model.embeddings.word_embeddings.weight.requires_grad_(False)
    steps_per_epoch = math.ceil(len(groups) / per_batch)
    total = steps_per_epoch * config.epochs
    report.planned_steps = total
    no_decay = ("bias", "LayerNorm.weight")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    param_groups = [
        {"params": [p for n, p in trainable if not n.endswith(no_decay)], "weight_decay": config.weight_decay},
        {"params": [p for n, p in trainable if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(param_groups, lr=config.learning_rate)
    # Linear warm-up and decay over the steps that will actually run: all epochs, or (when the time
    # budget is shorter) the steps that fit in it, estimated from the speed of the first steps.
    plan = {"total": total, "warmup": max(1, int(config.warmup_ratio * total))}

    def lr_factor(step: int) -> float:
        if step < plan["warmup"]:
            return (step + 1) / plan["warmup"]
        return max(0.0, (plan["total"] - step) / max(1, plan["total"] - plan["warmup"]))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    work = Path(config.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    log_path = work / "training_log.jsonl"
    log_path.unlink(missing_ok=True)
    started = time.monotonic()
    cpu0 = time.process_time()
    clock = (lambda: time.process_time() - cpu0) if config.budget_clock == "cpu" else (lambda: time.monotonic() - started)
    model.train()
    bar = tqdm(total=total, disable=not progress, desc="train-relevance")
    running = []
    for epoch in range(config.epochs):
        for batch in _batches(groups, per_batch, random.Random(config.seed * 1000 + epoch)):
            pairs = [p for g in batch for p in g.pairs()]
            enc = tokenizer([q for q, _, _ in pairs], [t for _, t, _ in pairs], truncation=True,
                            max_length=config.max_length, padding=True, return_tensors="pt")
            logits = model(**enc).logits[:, 0]
            loss = group_loss(logits, [len(g.texts) for g in batch], config.loss)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            report.steps += 1
            running.append(loss.item())
            bar.update(1)
            if report.steps % config.log_every == 0 or report.steps == total:
                _log(log_path, report, running, epoch, started, cpu0)
                running = []
            elapsed = clock()
            if report.steps == 20:
                fits = int(config.time_budget_min * 60 / (elapsed / 20))
                plan["total"] = max(21, min(total, fits))
                plan["warmup"] = max(1, int(config.warmup_ratio * plan["total"]))
                report.planned_steps = plan["total"]
            if elapsed > config.time_budget_min * 60 or report.steps >= plan["total"]:
                report.stopped_by_budget = report.steps < total
                break
        if report.stopped_by_budget:
            break
    bar.close()
    if running:
        _log(log_path, report, running, epoch, started, cpu0)
    report.train_seconds = round(time.monotonic() - started, 1)
    report.cpu_seconds = round(time.process_time() - cpu0, 1)
    report.epochs_done = round(report.steps / steps_per_epoch, 3)
    export(model, tokenizer, config, report, log_path)
    return report


def _log(path: Path, report: TrainReport, losses: list[float], epoch: int, started: float, cpu0: float) -> None:
    row = {"step": report.steps, "epoch": epoch, "loss": round(sum(losses) / max(1, len(losses)), 4),
           "wall_minutes": round((time.monotonic() - started) / 60, 2), "cpu_minutes": round((time.process_time() - cpu0) / 60, 2)}
    report.history.append(row)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def export(model, tokenizer, config: RelevanceTrainConfig, report: TrainReport, log_path: Path) -> Path:
    """fp16 safetensors, tokenizer, settings, data hashes and the training log, atomically."""
    out = Path(config.out_dir)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.half().save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    settings = asdict(config)
    settings["base_model"] = Path(config.base_model).name if Path(config.base_model).exists() else config.base_model
    settings["data_files"] = [Path(f).name for f in config.data_files]
    settings.pop("work_dir")
    settings.pop("out_dir")
    (tmp / "settings.json").write_text(json.dumps(settings, indent=1))
    (tmp / "data_hashes.json").write_text(json.dumps({Path(f).name: file_sha256(f) for f in config.data_files}, indent=1))
    summary = {k: v for k, v in asdict(report).items() if k != "history"}
    (tmp / "training_summary.json").write_text(json.dumps(summary, indent=1))
    if log_path.exists():
        shutil.copy(log_path, tmp / "training_log.jsonl")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
