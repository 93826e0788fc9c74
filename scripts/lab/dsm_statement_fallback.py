"""Item 4 of issue 40: the LLM writing the round's statement (the paper's path) where the rules
keep no fact of a user turn, measured with the embedded models (docs/dsm-memory.md).

For every user turn of the chat scripts that states something (`statement.states_something`) and of
which the spaCy rules keep nothing but types and bare adjectives (`statement.rules_found_little`),
each model writes the Appendix E statement of the round (the user's turn and the reply an earlier
`bench replies` run gave it, from --replies; "" where none) and the rules read that statement.
A turn is "recovered" when the statement's fragment holds a fact beyond types and bare adjectives
whose labels share a content word with the user's turn (what `DSMConfig.statements = "fallback"`
would add to the graph). With --json each model also writes the turn's triples itself
(`LLMExtractor`, the JSON path the DSM takes with a strong model), for comparison. The turns,
statements and facts are written to --out for reading.

  .venv/bin/python scripts/lab/dsm_statement_fallback.py --models medium,large \\
      --replies results/replies/check-long-large-dsm/items.jsonl --out results/dsm-statement-fallback.json
  .venv/bin/python scripts/lab/dsm_statement_fallback.py --count-only   # how often the fallback fires
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from rdflib import RDF  # noqa: E402

from core.config import LLMSettings  # noqa: E402
from core.methods.dsmart.config import DSMConfig  # noqa: E402
from core.llm.base import LLMError, LLMOutputError  # noqa: E402
from core.methods.dsmart.extract import LLMExtractor, SpacyExtractor, Utterance  # noqa: E402
from core.methods.dsmart.fragment import is_fact  # noqa: E402
from core.methods.dsmart.statement import StatementMaker, content_words, rules_found_little, states_something  # noqa: E402
from core.methods.dsmart.vocab import DSM, label_of  # noqa: E402
from core.resources import load_shared_llm, load_spacy  # noqa: E402

SCRIPTS = ("benchmarks/memory_long_dev.jsonl", "benchmarks/memory_long_dev_dsmart.jsonl",
           "benchmarks/chat_short_memory.jsonl", "benchmarks/memory_dialogues_dev.jsonl")


def user_turns(path: Path):
    """(dialogue, turn, text) of every user turn without expected answers, numbered as `chat` does."""
    dialogue, turn = -1, 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("new_dialogue"):
            dialogue, turn = dialogue + 1, 0
            continue
        if "user" not in row:
            continue
        if not row.get("expect"):
            yield max(dialogue, 0), turn, row["user"]
        turn += 1


def facts_of(graph) -> list[str]:
    return [" | ".join(label_of(graph, x) for x in t) for t in sorted(graph)
            if is_fact(t) and t[1] not in (RDF.type, DSM.quality)]


def recovered(facts: list[str], text: str) -> bool:
    said = content_words(text)
    return any(content_words(f.replace("|", " ")) & said for f in facts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", default=",".join(SCRIPTS))
    parser.add_argument("--models", default="medium,large", help="embedded model keys")
    parser.add_argument("--replies", default="", help="a bench replies items.jsonl whose replies stand for the rounds' answers")
    parser.add_argument("--json", action="store_true", help="also the model's own JSON triples of the user's turn")
    parser.add_argument("--count-only", action="store_true", help="list the turns the fallback fires on, call no LLM")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    nlp = load_spacy()
    rules = SpacyExtractor(nlp)
    replies = {}
    if args.replies:
        for line in Path(args.replies).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            replies.setdefault(r["user"], r["reply"])
    turns, total = [], 0
    for name in args.scripts.split(","):
        for dialogue, turn, text in user_turns(REPO / name):
            total += 1
            if states_something(text) and rules_found_little(rules.extract([Utterance("user", text)])):
                turns.append({"script": name, "dialogue": dialogue, "turn": turn, "user": text,
                              "answer": replies.get(text, "")})
    print(f"the fallback fires on {len(turns)} of {total} user turns", flush=True)
    models = {}
    if not args.count_only:
        for key in args.models.split(","):
            llm = load_shared_llm(LLMSettings(model=key))
            maker = StatementMaker(llm, False, DSMConfig(statements="fallback"))
            models[key] = maker
            for row in turns:
                notes: list[str] = []
                t0 = time.perf_counter()
                statement = " ".join(maker.distil(row["user"], row["answer"], notes).split())
                seconds = time.perf_counter() - t0
                facts = facts_of(rules.extract([Utterance("narrator", statement)])) if statement else []
                row[key] = {"statement": statement, "facts": facts, "recovered": recovered(facts, row["user"]),
                            "seconds": round(seconds, 2), "notes": notes}
                print(f"{key} {row['script'].split('/')[-1]} d{row['dialogue']} t{row['turn']} "
                      f"{'+' if row[key]['recovered'] else '-'} {statement[:100]!r} {facts[:3]}", flush=True)
                if args.json:
                    t0 = time.perf_counter()
                    try:
                        triples = facts_of(LLMExtractor(llm).extract([Utterance("user", row["user"])]))
                        error = ""
                    except (LLMOutputError, LLMError) as err:
                        triples, error = [], str(err)[:200]
                    row[key]["json"] = {"facts": triples, "recovered": recovered(triples, row["user"]),
                                        "seconds": round(time.perf_counter() - t0, 2), "error": error}
                    print(f"   json {'+' if row[key]['json']['recovered'] else '-'} {triples[:4]} {error[:80]}", flush=True)
    summary = {"fires": len(turns), "user_turns": total}
    for key in models:
        seconds = sorted(r[key]["seconds"] for r in turns)
        summary[key] = {"recovered": sum(r[key]["recovered"] for r in turns),
                        "median_s": seconds[len(seconds) // 2] if seconds else 0.0, "max_s": max(seconds, default=0.0)}
        if args.json:
            json_s = sorted(r[key]["json"]["seconds"] for r in turns)
            summary[key]["json"] = {"recovered": sum(r[key]["json"]["recovered"] for r in turns),
                                    "failed": sum(bool(r[key]["json"]["error"]) for r in turns),
                                    "median_s": json_s[len(json_s) // 2] if json_s else 0.0}
    print(json.dumps(summary))
    if args.out:
        command = "python scripts/lab/dsm_statement_fallback.py " + " ".join(sys.argv[1:])
        args.out.write_text(json.dumps({"command": command, "summary": summary, "turns": turns}, indent=1,
                                       ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
