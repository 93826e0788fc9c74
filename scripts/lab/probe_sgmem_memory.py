"""Do SGMem's own fact and summary prompts (paper Appendix B.3-B.4) work with an LLM?

For LongMemEval questions whose answer is a short span said by the user in one evidence session,
runs the fact prompt (and the summary prompt) on that session and checks whether the answer span
appears in the generated facts / summary, next to the symbolic facts the method falls back to
(first-person sentences made standalone). Prints one JSON line per question and a summary line.

  .venv/bin/python scripts/lab/probe_sgmem_memory.py --limit 12 [--model default|small|large|path]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core.config import LLMSettings  # noqa: E402
from core.data.longmemeval import load_longmemeval  # noqa: E402
from core.llm import make_llm  # noqa: E402
from core.methods.sgmem.memory import MemoryGenerator, symbolic_facts  # noqa: E402



def contains(haystack: str, needle: str) -> bool:
    clean = lambda s: " ".join(re.sub(r"[^a-z0-9]+", " ", s.lower()).split())  # noqa: E731
    return clean(needle) in clean(haystack)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data/longmemeval/longmemeval_oracle_dev.json"))
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--model", default="")
    parser.add_argument("--max-answer-words", type=int, default=4)
    args = parser.parse_args()
    picked = [i for i in load_longmemeval(args.data)
              if i.question_type == "single-session-user" and len(i.answer.split()) <= args.max_answer_words
              and len(i.dialogue.sessions) == 1][: args.limit]
    llm = make_llm(LLMSettings(model=args.model))
    gen = MemoryGenerator(llm, cache_folder=tempfile.mkdtemp(prefix="sgmem-probe-"))
    rows = []
    for inst in picked:
        turns = list(inst.dialogue.sessions[0].turns)
        t0 = time.perf_counter()
        facts = gen.facts(turns)
        t1 = time.perf_counter()
        summary = gen.summary(turns)
        t2 = time.perf_counter()
        fact_text = " ".join(f.text for f in facts)
        row = {"question_id": inst.question_id, "answer": inst.answer, "facts": len(facts),
               "facts_fell_back": any(f.meta.get("fallback") for f in facts),
               "answer_in_llm_facts": contains(fact_text, inst.answer),
               "answer_in_summary": bool(summary) and contains(summary[0].text, inst.answer),
               "answer_in_symbolic_facts": contains(" ".join(symbolic_facts(turns)), inst.answer),
               "fact_s": round(t1 - t0, 1), "summary_s": round(t2 - t1, 1), "first_fact": facts[0].text[:200] if facts else ""}
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    share = lambda key: round(sum(r[key] for r in rows) / len(rows), 3) if rows else None  # noqa: E731
    print(json.dumps({"model": llm.name, "questions": len(rows), "answer_in_llm_facts": share("answer_in_llm_facts"),
                      "answer_in_summary": share("answer_in_summary"), "answer_in_symbolic_facts": share("answer_in_symbolic_facts"),
                      "fact_s_median": statistics.median(r["fact_s"] for r in rows) if rows else None,
                      "summary_s_median": statistics.median(r["summary_s"] for r in rows) if rows else None}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
