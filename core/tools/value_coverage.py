"""How often the local extractor turns a numbered first-person sentence into a typed value.

Samples user sentences from LongMemEval questions of the types other than the one the update rules
were written from (knowledge-update is left out), keeps first-person statements with a number
written in digits, runs the spaCy extractor on each, and prints how many gave no typed (numeric,
date or duration) value, with those sentences listed for reading. docs/dsm-updates.md, "Third session".

Usage: .venv/bin/python -m core value-coverage ../shared/data/longmemeval/longmemeval_oracle_dev.json [--n 300] [--seed 1]
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

FIRST_PERSON = re.compile(r"\b(I|I've|I'm|my|we)\b")
DIGITS = re.compile(r"(?<![\w$:/-])\d+(?![\w:/%-])")  # a number standing alone: not '80D', '5-2', '6:00', '20%'


def sentences(data: list[dict], skip_type: str) -> list[str]:
    from core.text import split_sentences

    out = []
    for item in data:
        if item["question_type"] == skip_type:
            continue
        for session in item["haystack_sessions"]:
            for turn in session:
                if turn["role"] != "user":
                    continue
                out += [s for s in split_sentences(turn["content"])
                        if FIRST_PERSON.search(s) and DIGITS.search(s) and not s.rstrip().endswith("?")]
    return out


def has_value(graph) -> bool:
    from rdflib import Literal

    from core.methods.dsmart.fragment import is_fact

    return any(is_fact(t) and isinstance(t[2], Literal) and not isinstance(t[2].toPython(), str) for t in graph)


def add_arguments(p) -> None:
    p.add_argument("data")
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--skip-type", default="knowledge-update")


def main(args) -> int:
    from core.methods.dsmart.extract import SpacyExtractor, Utterance
    from core.resources import load_spacy

    found = sentences(json.loads(Path(args.data).read_text(encoding="utf-8")), args.skip_type)
    random.Random(args.seed).shuffle(found)
    sample = found[: args.n]
    extractor = SpacyExtractor(load_spacy())
    missed = [s for s in sample if not has_value(extractor.extract([Utterance("user", s)]))]
    print(f"{len(missed)} of {len(sample)} sentences gave no typed value ({len(found)} candidates)")
    for s in missed:
        print("-", s[:220])
    return 0
