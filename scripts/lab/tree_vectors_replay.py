"""One-off check (issue 53): what keeping the reasoning tree's embeddings between replies saves
before `dsmart`'s prompt, and whether the search still reaches the same state.

Replays the users' turns and the recorded replies of a `chat --script` transcript of `dsmart` into a
fresh `dsmart` (default model and embedder), one exchange at a time. Before each next message it
runs the entity link and the tree search twice over the same graph: with a new linker and a new
embedding store (each text embedded during the search, as before 161b728), and with the method's
own, which `wait()` filled between replies. Writes the seconds of each and whether the best state
(its facts and value) and the linked entities came out the same.

    PYTHONPATH=. .venv/bin/python scripts/lab/tree_vectors_replay.py \
        --records results/replies/chat/conversational-long-4/dsmart.jsonl \
        --out results/cache-layout/tree-vectors-replay.json

Measured 2026-11-29: docs/speed.md, "The tree's embeddings kept between replies".
"""

from __future__ import annotations

import argparse
import statistics
import time

from core.chat import ChatSession
from core.config import LLMSettings
from core.methods.dsmart.reasoning_tree import ReasoningTree
from core.methods.dsmart.rt_graph import EntityLinker, MemoryView
from core.methods.dsmart.rt_llm import TreeModel
from core.methods.dsmart.tree_methods import _spacy_helpers
from core.methods.layout import conversation_window, window_messages
from core.toolkit import make_toolkit
from scripts.lab.dsm_round_time import dialogues_of, write_summary


def search(session: ChatSession, view: MemoryView, query: str, linker: EntityLinker, vectors) -> dict:
    """The link and the tree search of one reply (no answer written), timed."""
    method, tools = session.method, session.tools
    cfg, gen = method.config, method.config.generation
    t0 = time.perf_counter()
    links = linker.link(query, view, cfg.tree.max_linked)
    link_s = time.perf_counter() - t0
    model = TreeModel(tools.llm, view, cfg.tree, strong=tools.strong,
                      context=window_messages(conversation_window(session.dialogue.turns(), gen.max_history_chars)),
                      generation=gen, embedder=tools.embedder, turns_in_answer=cfg.turns_in_answer, vectors=vectors)
    t0 = time.perf_counter()
    result = ReasoningTree(view, model, cfg.tree).search(query, links)
    return {"link_s": link_s, "search_s": time.perf_counter() - t0, "links": [str(link.node) for link in links],
            "best": (sorted(map(str, result.best.facts)), round(float(result.best.value), 5))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", required=True, help="a chat --script transcript of dsmart")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    tools = make_toolkit(LLMSettings())
    lemmatise, phrases = _spacy_helpers(tools.spacy_model)
    rows = []
    for d, turns in dialogues_of(args.records).items():
        session = ChatSession("dsmart", tools, judge=None)
        for before, after in zip(turns, turns[1:]):
            session.replay(before["user"], before["reply"])  # stores the exchange, waits: the method warms here
            view = MemoryView(session.method.memory.graph)
            if not view.facts:
                continue
            fresh = search(session, view, after["user"], EntityLinker(lemmatise, tools.embedder,
                                                                     session.method.config.tree.link_threshold, phrases), None)
            kept = search(session, view, after["user"], session.method.responder.linker(), session.method.responder._vectors)
            rows.append({"dialogue": d, "turn": after["turn"], "facts": len(view.facts),
                         "fresh_link_s": round(fresh["link_s"], 4), "kept_link_s": round(kept["link_s"], 4),
                         "fresh_search_s": round(fresh["search_s"], 4), "kept_search_s": round(kept["search_s"], 4),
                         "same_best": fresh["best"] == kept["best"], "same_links": fresh["links"] == kept["links"]})
    med = lambda key: round(statistics.median(r[key] for r in rows), 4)  # noqa: E731
    summary = {
        "command": "PYTHONPATH=. python scripts/lab/tree_vectors_replay.py --records " + args.records + " --out " + args.out,
        "searches": len(rows),
        "median_s": {key: med(key) for key in ("fresh_link_s", "kept_link_s", "fresh_search_s", "kept_search_s")},
        "same_best": sum(r["same_best"] for r in rows),
        "same_links": sum(r["same_links"] for r in rows),
        "per_search": rows,
    }
    write_summary(args.out, summary, "per_search")


if __name__ == "__main__":
    main()
