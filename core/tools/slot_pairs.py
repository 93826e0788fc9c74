"""Log every candidate slot pair the DSM scores on knowledge-update dialogues, with its cosine.

Every candidate slot pair (old slot, new slot of the same owner and kind) that the DSM scores while
it reads the dev-split knowledge-update dialogues, with its embedding cosine: the data the slot
threshold (DSMConfig.slot_threshold) is calibrated on (docs/dsm-updates.md).

Pairs are logged with the threshold in force (the graph evolves as with the default), so a pair
below the threshold is logged but prunes nothing. Label the pairs by hand (same slot or not) and
pick the threshold that separates them.

Usage: .venv/bin/python -m core slot-pairs DATA.json OUT.jsonl [--limit N] [--threshold T]
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path


def add_arguments(parser) -> None:
    from core.methods.dsmart.config import DSMConfig

    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=DSMConfig().slot_threshold)


def main(args) -> int:
    from core.benchmarks.dsm_updates import rounds
    from core.data.longmemeval import load_longmemeval
    from core.methods.dsmart.config import DSMConfig
    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.methods.dsmart.vocab import label_of
    from core.resources import load_embedder, load_spacy

    config = replace(DSMConfig(), statements="text", llm_conflicts="off", reasoner=False, background=False,
                     slot_threshold=args.threshold)
    nlp, embedder = load_spacy(), load_embedder()
    instances = [i for i in load_longmemeval(args.data) if i.question_type == "knowledge-update" and not i.abstention]
    instances = instances[: args.limit] if args.limit else instances
    with Path(args.out).open("w", encoding="utf-8") as f:
        for inst in instances:
            memory = DynamicStructuredMemory(None, config=config, nlp=nlp, embedder=embedder)
            for index, (q, a) in enumerate(rounds(inst.dialogue)):
                memory.slots.log = []
                memory.observe_round(q, a, index)
                for pair, prop, stale in memory.slots.log:
                    f.write(json.dumps({"question_id": inst.question_id, "round": index, "property": label_of(memory.graph, prop),
                                        "old": pair.old_text, "new": pair.new_text, "score": round(pair.score, 4),
                                        "matched": pair.matched, "stale": [str(v) for v in stale]}) + "\n")
            print(inst.question_id, flush=True)
    return 0
