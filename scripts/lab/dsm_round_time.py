"""One-off timing (issue 53): how long D-SMART's memory round for one exchange takes, which runs in
the background while the person reads the reply, and which `chat --script` (the next message sent
at once) runs beside the next reply's prompt.

Replays a recorded `chat --script` transcript of `dsm` or `dsmart` (the users' turns and the
recorded replies) into a fresh DSM, one round after another in the foreground, with the default
model and embedder, and writes each round's seconds by stage (`TurnRecord.timings`) and its LLM
calls and prompt tokens.

    PYTHONPATH=. .venv/bin/python scripts/lab/dsm_round_time.py \
        --records results/replies/chat/conversational-long-3/dsmart.jsonl \
        --out results/cache-layout/dsm-round-time.json

Measured 2026-11-29: docs/speed.md, "Before the prompt" (what the memory round costs).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from core.config import LLMSettings
from core.methods import create_method
from core.toolkit import make_toolkit


def dialogues_of(records_path: str) -> dict[int, list[dict]]:
    """A `chat --script` transcript's replies by dialogue, each dialogue's in turn order (forget
    steps and other records without a reply left out)."""
    by_dialogue: dict[int, list[dict]] = {}
    for line in Path(records_path).read_text().splitlines():
        if line.strip() and "reply" in (r := json.loads(line)):
            by_dialogue.setdefault(r["dialogue"], []).append(r)
    return {d: sorted(rs, key=lambda r: r["turn"]) for d, rs in sorted(by_dialogue.items())}


def write_summary(out: str, summary: dict, detail: str) -> None:
    """`summary` as JSON to `out`; printed without its `detail` list."""
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != detail}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", required=True, help="a chat --script transcript of dsm or dsmart")
    parser.add_argument("--dialogues", type=int, default=0, help="the first N dialogues only (0 = all)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    by_dialogue = dialogues_of(args.records)
    dialogues = list(by_dialogue)[: args.dialogues or None]
    tools = make_toolkit(LLMSettings())
    rounds = []
    for d in dialogues:
        memory = create_method("dsmart", tools).memory  # a fresh DSM per dialogue, the method's own config
        for r in by_dialogue[d]:
            record = memory.observe_round(r["user"], r["reply"], r["turn"], "2026-11-29")
            generate = record.cost or {}
            calls = sum(stage.get("llm_calls", 0) for stage in generate.values()) if isinstance(generate, dict) else 0
            tokens = sum(stage.get("processed_tokens", 0) for stage in generate.values()) if isinstance(generate, dict) else 0
            rounds.append({"dialogue": d, "turn": r["turn"], "seconds": {k: round(v, 3) for k, v in record.timings.items()},
                           "llm_calls": calls, "prompt_tokens_computed": tokens})
    total = [r["seconds"].get("maintenance", 0.0) for r in rounds]
    stages = sorted({k for r in rounds for k in r["seconds"]})
    summary = {
        "command": "PYTHONPATH=. python scripts/lab/dsm_round_time.py --records " + args.records + " --out " + args.out,
        "rounds": len(rounds),
        "median_round_s": round(statistics.median(total), 3),
        "p90_round_s": round(sorted(total)[int(0.9 * (len(total) - 1))], 3),
        "median_by_stage_s": {k: round(statistics.median(r["seconds"].get(k, 0.0) for r in rounds), 3) for k in stages},
        "rounds_with_llm_calls": sum(r["llm_calls"] > 0 for r in rounds),
        "median_llm_calls": statistics.median(r["llm_calls"] for r in rounds),
        "per_round": rounds,
    }
    write_summary(args.out, summary, "per_round")


if __name__ == "__main__":
    main()
