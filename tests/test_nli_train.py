"""The NLI trainer end to end on a tiny pool, on the CPU: it refuses held-out files, trains from the
shipped fp16 model in float32, checkpoints, exports fp16 safetensors that load back as a scorer."""

from __future__ import annotations

import json

import pytest

from core.metrics.nli_train import HELD_OUT_FILES, MONITOR_FILE, NLITrainConfig, NLITrainer, resolve_device
from core.paths import DEFAULT_NLI_MODEL_DIR

PAIRS = [
    ("A man is playing a guitar.", "A man plays an instrument.", "entailment"),
    ("A man is playing a guitar.", "Nobody is playing anything.", "contradiction"),
    ("A man is playing a guitar.", "The man is a famous singer.", "neutral"),
    ("Two dogs run on the beach.", "Animals are outside.", "entailment"),
    ("Two dogs run on the beach.", "The dogs are asleep indoors.", "contradiction"),
    ("Two dogs run on the beach.", "The dogs belong to a child.", "neutral"),
]


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"premise": p, "hypothesis": h, "label": y}) + "\n" for p, h, y in rows))


@pytest.fixture()
def data_dir(tmp_path):
    root = tmp_path / "nli"
    _write(root / "tiny/train.jsonl", PAIRS * 2)
    _write(root / MONITOR_FILE, PAIRS)
    return root


def test_held_out_files_are_refused(data_dir, tmp_path):
    cfg = NLITrainConfig(base_model=str(DEFAULT_NLI_MODEL_DIR), data_dir=str(data_dir), work_dir=str(tmp_path / "w"),
                         out_dir=str(tmp_path / "o"), train_files=("tiny/train.jsonl", HELD_OUT_FILES[0]))
    with pytest.raises(ValueError, match="overlap the evaluation sets"):
        NLITrainer(cfg).run(progress=False)


def test_train_on_cpu_and_export_loads_back(data_dir, tmp_path):
    from core.metrics.nli import NLIScorer

    assert resolve_device("cpu") == "cpu" and resolve_device("auto") in ("cpu", "cuda")
    cfg = NLITrainConfig(base_model=str(DEFAULT_NLI_MODEL_DIR), data_dir=str(data_dir), work_dir=str(tmp_path / "w"),
                         out_dir=str(tmp_path / "o"), train_files=("tiny/train.jsonl",), batch_size=4, epochs=1,
                         max_length=48, eval_pairs=6, eval_every_steps=100, learning_rate=1e-5, device="cpu")
    trainer = NLITrainer(cfg)
    state = trainer.run(progress=False)
    assert state.global_step == 3 and state.pairs_seen == 12
    log = [json.loads(line) for line in (tmp_path / "w" / "training_log.jsonl").read_text().splitlines()]
    assert log and 0.0 <= log[-1]["mnli_m_sample_accuracy"] <= 1.0
    out = trainer.export()
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as f:
        assert {str(f.get_tensor(k).dtype) for k in f.keys()} == {"torch.float16"}
    assert json.loads((out / "training_state.json").read_text())["global_step"] == 3
    # a low learning rate for 3 steps keeps the shipped model's judgement on a clear pair
    (probs,) = NLIScorer(str(out)).predict([("A man is playing a guitar.", "Nobody is playing anything.")])
    assert probs.label == "contradiction"
