"""LLM calls of D-SMART's scored conflict checks on LongMemEval knowledge-update rounds, with a
deterministic stand-in for the model's yes/no judgement (a hash of the question), so that two
versions of the code can be compared on exactly the same rounds without a model. The statement is
the round's own text (no LLM), so everything but the conflict checks is the same in both runs.

Usage (run it on two commits, with the same PYTHONHASHSEED: rdflib's iteration order follows it):
    PYTHONHASHSEED=0 PYTHONPATH=. .venv/bin/python scripts/lab/dsm_conflict_calls.py \
        --data ../shared/data/longmemeval/longmemeval_oracle_dev.json --limit 3
"""

from __future__ import annotations

import argparse
import json
import zlib


def main() -> None:
    from core.benchmarks.dsm_updates import rounds
    from core.data.longmemeval import load_longmemeval
    from core.llm import cost
    from core.llm.fake import ScriptedLLM
    from core.methods.dsmart.config import DSMConfig
    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.resources import load_spacy

    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--limit", type=int, default=3)
    args = parser.parse_args()
    nlp = load_spacy()
    questions = [i for i in load_longmemeval(args.data) if i.question_type == "knowledge-update" and not i.abstention]
    llm = ScriptedLLM(scorer=lambda messages, option: zlib.crc32((messages[-1].content + option).encode()) % 100 / 10)
    config = DSMConfig(statements="text", llm_conflicts="on", background=False)
    n_rounds, pruned = 0, []
    with cost.measure() as meter:
        for instance in questions[: args.limit]:
            memory = DynamicStructuredMemory(llm, config=config, nlp=nlp)
            for index, (q, a) in enumerate(rounds(instance.dialogue)):
                record = memory.observe_round(q, a, index)
                n_rounds += 1
                pruned += sorted(" ".join(map(str, p.triple)) for p in record.pruned if p.rule == "llm")
    calls = meter.total().llm_calls
    print(json.dumps({"rounds": n_rounds, "llm_calls": calls, "calls_per_round": round(calls / max(1, n_rounds), 2),
                      "llm_pruned": len(pruned), "pruned_digest": zlib.crc32("\n".join(pruned).encode()),
                      "cost": meter.as_dict()}))


if __name__ == "__main__":
    main()
