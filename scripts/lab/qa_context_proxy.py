"""How much of the gold answer a QA context holds, without the reader: for the `bench locomo-qa`
sample, each method's packed context (budget tokens) and the share of gold-answer tokens it
contains (LoCoMo normalisation), beside the gold-evidence turn recall; each sgmem method also as
`<name>/sent`, its turns cut to the sentences the graph reached. The cut raised both figures and
lowered the reader's F1 (docs/qa.md, "Tried and not adopted"): these are not proxies for F1.

  .venv/bin/python scripts/lab/qa_context_proxy.py --limit 150 --seed 0 --methods rag-t,sgmem-t+h
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core.benchmarks import locomo_qa  # noqa: E402
from core.benchmarks import retrieval_common as ev  # noqa: E402
from core.benchmarks.qa_common import pack  # noqa: E402
from core.benchmarks.qa_sources import make_sources  # noqa: E402
from core.benchmarks.runner import BenchContext  # noqa: E402
from core.metrics.qa import normalize_answer  # noqa: E402


def answer_recall(context: str, gold: str) -> float:
    g = normalize_answer(gold).split()
    c = set(normalize_answer(context).split())
    return sum(t in c for t in g) / len(g) if g else 0.0


class SentenceSource:
    """An SGMem source whose turns show only their reached sentences (whole turn when none)."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name + "/sent"

    def prepare(self, dialogue) -> None:
        self.inner.prepare(dialogue)

    def pieces(self, query: str, budget: int):
        from dataclasses import replace

        from core.benchmarks.qa_sources import pieces_of
        from core.timeref import anchor_turn

        r = self.inner.retriever
        evidence = r.retrieve(query, max(5, min(200, budget // 8)))  # as RetrieverSource.pieces asks
        cut = {}
        for e in evidence:
            for tid in e.meta.get("turn_ids", ()):
                mine = [i for i in e.meta.get("sentences") or () if r.graph.nodes[i].turn_id == tid]
                if mine and tid in self.inner.turns_by_id and tid not in cut:
                    text = " ... ".join(r.graph.nodes[i].text for i in sorted(mine))
                    cut[tid] = anchor_turn(replace(self.inner.turns_by_id[tid], text=text))  # same date and speaker
        return pieces_of(evidence, {**self.inner.turns_by_id, **cut})


def pack_skip(pieces, budget):
    kept, used = [], 0
    for p in pieces:
        if used + p.tokens <= budget:
            kept.append(p)
            used += p.tokens
    return kept, len(kept) < len(pieces)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(REPO.parent / "shared/data/locomo/locomo_dev.json"))
    p.add_argument("--limit", type=int, default=150)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, default=256)
    p.add_argument("--methods", default="rag-t,sgmem-t+h")
    p.add_argument("--skip", action="store_true", help="pack: skip a piece that does not fit and go on")
    a = p.parse_args()
    names = a.methods.split(",")
    ctx = BenchContext("proxy", Path(a.data), Path(tempfile.mkdtemp()), names, a.limit, a.seed,
                       options={"sgmem_preset": "locomo"}, progress=False)
    s = ev.setup(ctx, names)
    sources, _ = make_sources(names, s.retriever_context, None)
    sources += [SentenceSource(x) for x in sources if x.name.startswith("sgmem")]
    convs = locomo_qa.conversations(a.data, "", a.limit, a.seed)
    out = {x.name: {"ans": [], "ev": [], "n": []} for x in sources}
    for conv in convs:
        for src in sources:
            src.prepare(conv.dialogue)
            for q in conv.questions:
                kept, _ = (pack_skip if a.skip else pack)(src.pieces(q.question, a.budget), a.budget)
                context = locomo_qa.render(kept)
                out[src.name]["ans"].append(answer_recall(context, q.gold))
                turns = {x.source for x in kept if x.turn is not None}
                if q.evidence:
                    out[src.name]["ev"].append(len(turns & set(q.evidence)) / len(set(q.evidence)))
                out[src.name]["n"].append(len(kept))
    for name, v in out.items():
        print(f"{name:12s} answer-token recall {statistics.mean(v['ans']):.3f}  evidence recall "
              f"{statistics.mean(v['ev']):.3f}  pieces {statistics.mean(v['n']):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
