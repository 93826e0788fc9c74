"""The one token F1 (core/metrics/lexical.py, a normalisation parameter) against the two functions
it replaced (`lexical.word_f1`, SQuAD; `qa.token_f1` + `qa.locomo_scores`, LoCoMo), read from an
earlier commit with `git show`. No per-item QA files are kept in results/ (only summaries), so the
pairs come from the shared data and the stored runs:

- LoCoMo: every dev question (categories 1-4) scored by `locomo_scores` against its gold, each
  evidence turn, the next question's gold and an empty answer; LongMemEval oracle dev: each
  answer against its question, the next answer and each answer-holding turn (`token_f1`, LoCoMo).
- SQuAD: every MT-Bench-101 dev bot turn against the next one and itself, every stored chat
  reply in results/chat/*.jsonl against its user message, and the MT-Bench run fixture's stored
  `f1` re-scored.

  .venv/bin/python scripts/lab/token_f1_equivalence.py --before fe66c6c
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core.metrics import qa  # noqa: E402
from core.metrics.lexical import LOCOMO, SQUAD, token_f1  # noqa: E402


def old_module(commit: str, path: str, name: str, folder: Path):
    source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    file = folder / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def locomo_cases(data: Path):
    for conv in json.loads((data / "locomo/locomo_dev.json").read_text()):
        turns = {t["dia_id"]: t["text"] for k, v in conv["conversation"].items() if k.startswith("session_") and isinstance(v, list) for t in v}
        scored = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and "answer" in q]
        for i, q in enumerate(scored):
            nxt = scored[(i + 1) % len(scored)]["answer"]
            for pred in [q["answer"], nxt, "", *(turns.get(e, "") for e in q.get("evidence", []))]:
                yield pred, q["answer"], q["category"]


def longmemeval_cases(data: Path):
    rows = json.loads((data / "longmemeval/longmemeval_oracle_dev.json").read_text())
    for i, r in enumerate(rows):
        held = [t["content"] for s in r["haystack_sessions"] for t in s if t.get("has_answer")]
        for pred in [r["question"], str(rows[(i + 1) % len(rows)]["answer"]), *held]:
            yield pred, str(r["answer"])


def squad_cases(data: Path):
    for line in (data / "mt-bench-101/mtbench101_dev.jsonl").read_text().splitlines():
        bots = [h["bot"] for h in json.loads(line)["history"]]
        for a, b in zip(bots, bots[1:] + bots[:1]):
            yield a, b
            yield a, a
    for file in sorted((REPO / "results/chat").glob("*.jsonl")):
        for line in file.read_text().splitlines():
            row = json.loads(line)
            if "reply" in row and "user" in row:
                yield row["reply"], row["user"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="a commit with the two old functions")
    ap.add_argument("--data", default=str(REPO.parent / "shared/data"))
    args = ap.parse_args()
    data = Path(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        old_qa = old_module(args.before, "core/metrics/qa.py", "old_qa", Path(tmp))
        old_lex = old_module(args.before, "core/metrics/lexical.py", "old_lexical", Path(tmp))
    counts, differ = {}, []
    for pred, gold, cat in locomo_cases(data):
        counts["locomo_scores"] = counts.get("locomo_scores", 0) + 1
        if old_qa.locomo_scores(pred, gold, cat) != qa.locomo_scores(pred, gold, cat):
            differ.append(("locomo_scores", pred, gold))
    for pred, gold in longmemeval_cases(data):
        counts["token_f1 locomo"] = counts.get("token_f1 locomo", 0) + 1
        if old_qa.token_f1(pred, gold) != token_f1(pred, gold, LOCOMO) or old_qa.exact_match(pred, gold) != qa.exact_match(pred, gold):
            differ.append(("longmemeval", pred, gold))
    for pred, ref in squad_cases(data):
        counts["token_f1 squad"] = counts.get("token_f1 squad", 0) + 1
        if old_lex.word_f1(pred, ref) != token_f1(pred, ref, SQUAD):
            differ.append(("squad", pred, ref))
    for line in (REPO / "tests/fixtures/mtbench_run/items.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item.get("f1") is not None:  # golden rows (the reference itself) carry none
            counts["stored mtbench f1"] = counts.get("stored mtbench f1", 0) + 1
            if item["f1"] != token_f1(item["response"], item["reference"], SQUAD):
                differ.append(("stored", item["response"], item["reference"]))
    print(json.dumps({"before": args.before, "items": counts, "total": sum(counts.values()), "differ": len(differ)}))
    for d in differ[:10]:
        print("differs:", d)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
