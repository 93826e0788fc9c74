"""Train the project's 3-way NLI cross-encoder from the all-MiniLM-L6-v2 weights.

No entailment/neutral/contradiction model can be had offline, so we fine-tune one on the real
pairs in ../shared/data/nli. MNLI dev-matched, LingNLI val (MNLI dev-matched premises), SNLI dev
and the dialogue NLI test set are never trained on: they are the evaluation.

Speed on a 2-core CPU is the constraint, so batches are bucketed by length and padded per batch
(most pairs are far shorter than max_length). Training is resumable from a checkpoint, stops at a
time budget, and `export` writes a compact fp16 model with its log, settings and data hashes.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from core.hashing import file_sha256

LABELS = ("entailment", "neutral", "contradiction")

# Files trained on, relative to the NLI data folder. The held-out ones are listed so the trainer can
# refuse a pool that overlaps them.
TRAIN_FILES = (
    "lingnli/lingnli_train.jsonl",
    "mnli/mnli_dev_mismatched.jsonl",
    "snli/snli_test.jsonl",
    "sick/sick_train.jsonl",
    "sick/sick_dev.jsonl",
    "dnli2024/dnli2024_train_ctx5.jsonl",
    "dnli2024/dnli2024_dev_ctx5.jsonl",
)
HELD_OUT_FILES = (
    "mnli/mnli_dev_matched.jsonl",
    "lingnli/lingnli_val.jsonl",
    "snli/snli_dev.jsonl",
    "dnli2024/dnli2024_test_ctx5.jsonl",
)
MONITOR_FILE = "mnli/mnli_dev_matched.jsonl"


@dataclass(frozen=True)
class NLITrainConfig:
    base_model: str  # folder of the sentence-transformers MiniLM (its transformer weights)
    data_dir: str
    work_dir: str  # checkpoints and the running log
    out_dir: str  # the exported model
    train_files: tuple[str, ...] = TRAIN_FILES
    max_length: int = 128
    batch_size: int = 32
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    epochs: int = 3
    seed: int = 13
    time_budget_min: float = 60.0
    eval_every_steps: int = 500
    eval_pairs: int = 1000
    checkpoint_every_min: float = 5.0
    threads: int = 0  # 0: torch's default
    device: str = "auto"  # "auto": the GPU when torch sees one, else the CPU


@dataclass
class TrainState:
    epoch: int = 0
    step_in_epoch: int = 0
    global_step: int = 0
    pairs_seen: int = 0
    train_seconds: float = 0.0
    history: list[dict] = field(default_factory=list)


def read_pairs(path: Path) -> list[tuple[str, str, int]]:
    pairs = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("label") in LABELS:
                pairs.append((row["premise"], row["hypothesis"], LABELS.index(row["label"])))
    return pairs


def length_bucketed_batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffle, then sort within windows of 50 batches so each batch holds similar lengths."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    window = batch_size * 50
    batches = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window], key=lengths.__getitem__)
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def _encode(tokenizer, pairs, max_length: int):
    return tokenizer(
        [p for p, _, _ in pairs],
        [h for _, h, _ in pairs],
        truncation=True,
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def resolve_device(name: str) -> str:
    import torch

    return ("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name


def evaluate(model, tokenizer, pairs, max_length: int, batch_size: int = 64) -> dict:
    import torch

    model.eval()
    device = next(model.parameters()).device
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(pairs), batch_size):
            chunk = pairs[i : i + batch_size]
            logits = model(**_encode(tokenizer, chunk, max_length).to(device)).logits
            gold = torch.tensor([y for _, _, y in chunk], device=device)
            correct += int((logits.argmax(-1) == gold).sum())
    model.train()
    return {"accuracy": correct / max(1, len(pairs)), "pairs": len(pairs)}


class NLITrainer:
    """Resumable fine-tuning loop; `run()` trains until the epochs or the time budget run out."""

    def __init__(self, config: NLITrainConfig):
        self.config = config
        self.work_dir = Path(config.work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)

    @property
    def checkpoint_path(self) -> Path:
        return self.work_dir / "checkpoint.pt"

    def _load_data(self):
        data_dir = Path(self.config.data_dir)
        overlap = set(self.config.train_files) & set(HELD_OUT_FILES)
        if overlap:
            raise ValueError(f"training files overlap the evaluation sets: {sorted(overlap)}")
        train, hashes = [], {}
        for rel in self.config.train_files:
            path = data_dir / rel
            train.extend(read_pairs(path))
            hashes[rel] = file_sha256(path)
        monitor = read_pairs(data_dir / MONITOR_FILE)
        random.Random(0).shuffle(monitor)
        return train, monitor[: self.config.eval_pairs], hashes

    def run(self, progress: bool = True) -> TrainState:
        import torch
        from tqdm import tqdm
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

        cfg = self.config
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        train, monitor, hashes = self._load_data()
        tokenizer = AutoTokenizer.from_pretrained(cfg.base_model)
        # float32 even when the base is a compact fp16 export (e.g. the shipped model, trained further)
        model = AutoModelForSequenceClassification.from_pretrained(
            cfg.base_model,
            num_labels=3,
            id2label=dict(enumerate(LABELS)),
            label2id={l: i for i, l in enumerate(LABELS)},
            torch_dtype=torch.float32,
        )
        device = resolve_device(cfg.device)
        model.to(device)
        lengths = [len(p) + len(h) for p, h, _ in train]  # characters: a cheap proxy for tokens
        steps_per_epoch = math.ceil(len(train) / cfg.batch_size)
        total_steps = steps_per_epoch * cfg.epochs
        no_decay = ("bias", "LayerNorm.weight")
        groups = [
            {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": cfg.weight_decay},
            {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total_steps), total_steps)
        state = TrainState()
        if self.checkpoint_path.exists():
            ckpt = torch.load(self.checkpoint_path, weights_only=False, map_location=device)
            model.load_state_dict(ckpt["model"])
            optimizer.load_state_dict(ckpt["optimizer"])
            scheduler.load_state_dict(ckpt["scheduler"])
            state = TrainState(**ckpt["state"])
        (self.work_dir / "data_hashes.json").write_text(json.dumps(hashes, indent=1))
        (self.work_dir / "settings.json").write_text(json.dumps(asdict(cfg), indent=1))

        model.train()
        started = time.monotonic()
        budget_s = cfg.time_budget_min * 60
        last_ckpt = started
        bar = tqdm(total=total_steps, initial=state.global_step, disable=not progress, desc="train-nli")
        while state.epoch < cfg.epochs:
            # The batch order of an epoch depends only on (seed, epoch), so a resumed run continues it.
            batches = length_bucketed_batches(lengths, cfg.batch_size, random.Random(cfg.seed * 1000 + state.epoch))
            for batch in batches[state.step_in_epoch :]:
                t0 = time.monotonic()
                pairs = [train[i] for i in batch]
                enc = _encode(tokenizer, pairs, cfg.max_length).to(device)
                labels = torch.tensor([y for _, _, y in pairs], device=device)
                loss = model(**enc, labels=labels).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                state.step_in_epoch += 1
                state.global_step += 1
                state.pairs_seen += len(pairs)
                state.train_seconds += time.monotonic() - t0
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.3f}", epoch=state.epoch)
                if state.global_step % cfg.eval_every_steps == 0:
                    self._log_eval(model, tokenizer, monitor, state, loss.item())
                now = time.monotonic()
                if now - last_ckpt > cfg.checkpoint_every_min * 60:
                    self._save(model, optimizer, scheduler, state)
                    last_ckpt = now
                if now - started > budget_s:
                    self._log_eval(model, tokenizer, monitor, state, loss.item())
                    self._save(model, optimizer, scheduler, state)
                    bar.close()
                    return state
            state.epoch += 1
            state.step_in_epoch = 0
        self._log_eval(model, tokenizer, monitor, state, loss.item())
        self._save(model, optimizer, scheduler, state)
        bar.close()
        return state

    def _log_eval(self, model, tokenizer, monitor, state: TrainState, loss: float) -> None:
        result = evaluate(model, tokenizer, monitor, self.config.max_length)
        row = {
            "global_step": state.global_step,
            "epoch": state.epoch,
            "pairs_seen": state.pairs_seen,
            "train_minutes": round(state.train_seconds / 60, 2),
            "loss": round(loss, 4),
            "mnli_m_sample_accuracy": round(result["accuracy"], 4),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        state.history.append(row)
        with (self.work_dir / "training_log.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    def _save(self, model, optimizer, scheduler, state: TrainState) -> None:
        import torch

        tmp = self.checkpoint_path.with_suffix(".tmp")
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "state": asdict(state),
            },
            tmp,
        )
        tmp.replace(self.checkpoint_path)  # atomic: a crash never leaves a half-written checkpoint

    def export(self) -> Path:
        """Write the trained model as fp16 safetensors with tokenizer, log, settings and hashes."""
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        cfg = self.config
        if not self.checkpoint_path.exists():
            raise FileNotFoundError(f"no checkpoint in {self.work_dir}: run training first")
        ckpt = torch.load(self.checkpoint_path, weights_only=False, map_location="cpu")
        model = AutoModelForSequenceClassification.from_pretrained(
            cfg.base_model, num_labels=3, id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)},
            torch_dtype=torch.float32,
        )
        model.load_state_dict(ckpt["model"])
        out = Path(cfg.out_dir)
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        model.half().save_pretrained(tmp, safe_serialization=True)
        AutoTokenizer.from_pretrained(cfg.base_model).save_pretrained(tmp)
        for name in ("training_log.jsonl", "data_hashes.json", "settings.json"):
            if (self.work_dir / name).exists():
                shutil.copy(self.work_dir / name, tmp / name)
        (tmp / "training_state.json").write_text(json.dumps(ckpt["state"], indent=1))
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
        return out
