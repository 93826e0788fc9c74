"""Hand-built graphs and OpenDialKG rows for the kgaug tests."""

from __future__ import annotations

import csv
import json

from core.methods.kgaug.graph import FROM_FILE, GraphBuilder
from core.methods.kgaug.triples import Triple

# A small movie graph; "~" relations are stored reversed.
FACTS = [
    ("Find Me Guilty", "directed_by", "Sidney Lumet"),
    ("Sidney Lumet", "~written_by", "Find Me Guilty"),  # = (Find Me Guilty, written_by, Sidney Lumet)
    ("Find Me Guilty", "starred_actors", "Vin Diesel"),
    ("Find Me Guilty", "has_genre", "Crime Fiction"),
    ("12 Angry Men", "directed_by", "Sidney Lumet"),
    ("12 Angry Men", "starred_actors", "Henry Fonda"),
    ("12 Angry Men", "has_genre", "Drama"),
    ("Fast Five", "starred_actors", "Vin Diesel"),
    ("Fast Five", "has_genre", "Action Film"),
    ("Star Trek (Science Fiction Film)", "starred_actors", "Simon Pegg"),
    ("Shaun of the Dead", "starred_actors", "Simon Pegg"),
    ("It", "written_by", "Stephen King"),
    ("The Hobbit", "written_by", "J.R.R. Tolkien"),
    ("The Hobbit", "has_genre", "High Fantasy"),
]


def small_graph(extra=()):
    b = GraphBuilder()
    for h, r, t in [*FACTS, *extra]:
        b.add(h, r, t, FROM_FILE)
    return b.build()


def dialogue_row(turns) -> list[str]:
    """One CSV row from [(sender, text or None, path triples or None)]: a path becomes a
    kgwalk/choose_path action right before that sender's message."""
    actions = []
    for sender, text, path in turns:
        if path:
            actions.append({"type": "action", "sender": sender, "action_id": "kgwalk/choose_path",
                            "metadata": {"path": [0.0, [list(t) for t in path], "rendering"]}})
        if text is not None:
            actions.append({"type": "chat", "sender": sender, "message": text})
    return [json.dumps(actions), "{}", "{}"]


def write_csv(path, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Messages", "User Rating", "Assistant Rating"])
        for row in rows:
            w.writerow(row)


def tiny_dataset(tmp_path, questions):
    """One dialogue per (question, gold triple): a greeting, the question, the grounded answer; the
    CSV path and the knowledge built over `small_graph()` (spaCy linking off)."""
    from core.methods.kgaug.linking import LinkerSettings
    from core.methods.kgaug.pipeline import build_knowledge

    rows = [dialogue_row([("user", "Hi!", None), ("assistant", "Hello.", None), ("user", q, None),
                          ("assistant", f"That is {gold[2]}.", [gold])]) for q, gold in questions]
    path = tmp_path / "tiny.csv"
    write_csv(path, rows)
    return path, build_knowledge(small_graph(), LinkerSettings(use_spacy=False))


def all_triples(kg) -> set[Triple]:
    """Every triple of `kg`, read through `triple(i)` as the candidate search reads them."""
    return {kg.triple(i) for i in range(len(kg))}
