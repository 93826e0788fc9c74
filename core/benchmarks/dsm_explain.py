"""`dsm-updates --explain`: why each knowledge-update check passed or failed.

For every question: the update sentence (in the latest evidence turn, the sentence that carries the
answer, else the one closest to the question), the earlier sentence (same, in the earliest evidence
turn), the facts the extractor draws from each, the conflicts pruned in the update round, and one
miss cause. The causes, first match wins:

- answer not checkable: the answer is no value the check can find in a graph: yes/no, a sentence,
  a score such as '5-2' (no content word, not one number).
- asks for the earlier value: the answer is stated in the earliest evidence session and not in the
  latest ("previous status", "before the update"): a memory that prunes the stale value has moved
  it to its history, and the benchmark checks the current graph (a limit of the check, reported
  apart).
- wrong side pruned: the latest value was extracted and later pruned.
- value not typed: the number is in the update round only inside a text literal or a node label.
- no triple: nothing extracted carries the latest value.
- wrong subject: the latest value is in the graph, on a fact the question is not about.
- relation not matched: latest and stale sit on different slots (subject node or relation), so no
  rule could compare them.
- conflict not detected: latest and stale share subject and relation, and no rule fired.
- stale elsewhere: the stale number sits on a question fact that did not come from the earlier
  sentence's slot (a reply, another sentence).
"""

from __future__ import annotations

from collections import Counter

from rdflib import Literal

from core.benchmarks import dsm_check as check
from core.methods.dsmart.conflicts import describe
from core.methods.dsmart.extract import Utterance
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.vocab import label_of

CAUSES = ("ok", "answer not checkable", "asks for the earlier value", "wrong side pruned", "value not typed", "no triple", "wrong subject",
          "relation not matched", "conflict not detected", "stale elsewhere")


def best_sentence(text: str, question: set[str], answer: str) -> str:
    """The sentence of `text` that states the answer (number or words), else the one closest to
    the question."""
    from core.text import split_sentences

    latest = check.answer_number(answer)
    wanted = check.content_words(answer)

    def score(s: str) -> tuple:
        has_value = latest in check.numbers(s) if latest is not None else bool(wanted & check.content_words(s))
        return (has_value, len(check.content_words(s) & question), -len(s))

    return max(split_sentences(text), key=score, default="")


def round_of(instance, turn_id: str) -> int | None:
    for index, group in enumerate(instance.dialogue.rounds()):
        if any(t.turn_id == turn_id for t in group):
            return index
    return None


def untyped(graph, triples, latest: float | None) -> bool:
    """The number only inside text: a string literal or a node label ('ones (add)', '3 months')."""
    if latest is None:
        return False
    for s, _, o in triples:
        for term in (s, o):
            text = str(term) if isinstance(term, Literal) and not check.is_number(term, latest) else label_of(graph, term)
            if latest in check.numbers(text):
                return True
    return False


def fmt(graph, triples) -> list[str]:
    return [describe(graph, t) for t in triples]


def explain(instance, memory, item: dict, nlp) -> dict:
    """One question's explanation (see the module docstring)."""
    graph = memory.graph
    question = check.question_words(instance.question, nlp)
    evidence = check.evidence_turns(instance)
    update_turn = evidence[-1] if evidence else None
    first_turn = evidence[0] if len(evidence) > 1 else None
    update = best_sentence(update_turn.text, question, instance.answer) if update_turn else ""
    stale_text = check.stale_sentence(instance) if first_turn else ""
    extractor = memory.extractor()
    update_facts = [t for t in extractor.extract([Utterance("user", update)]) if is_fact(t)] if update else []
    stale_facts = [t for t in extractor.extract([Utterance("user", stale_text)]) if is_fact(t)] if stale_text else []
    r = round_of(instance, update_turn.turn_id) if update_turn else None
    record = memory.history[r] if r is not None and r < len(memory.history) else None
    pruned = [p for p in record.pruned] if record else []
    cause = classify(instance, memory, item, question, record)
    carrying = [t for t in graph if is_fact(t) and check.carries(graph, t[2], instance.answer)]
    stale_left = [t for t in graph if is_fact(t) and item["stale"] is not None and check.is_number(t[2], item["stale"])]
    return {
        "question_id": instance.question_id, "question": instance.question, "answer": instance.answer,
        "stale": item["stale"], "update_sentence": update, "update_triples": sorted(fmt(graph, update_facts)),
        "earlier_sentence": stale_text, "earlier_triples": sorted(fmt(graph, stale_facts)),
        "update_round": r, "conflicts": [f"{describe(graph, p.triple)} [{p.rule}]" for p in pruned],
        "latest_kept": item["latest_kept"], "stale_removed": item["stale_removed"], "cause": cause,
        "latest_facts": sorted(fmt(graph, carrying))[:8], "stale_facts": sorted(fmt(graph, stale_left))[:8],
    }


def classify(instance, memory, item: dict, question: set[str], record) -> str:
    graph = memory.graph
    stale = item["stale"]
    if item["latest_kept"] and (stale is None or item["stale_removed"]):
        return "ok"
    latest = check.answer_number(instance.answer)
    if not check.checkable(instance.answer):
        return "answer not checkable"
    if check.asks_earlier(instance):
        return "asks for the earlier value"
    words = check.content_words(instance.answer)
    if not item["latest_kept"]:
        in_graph = [t for t in graph if is_fact(t) and check.carries(graph, t[2], instance.answer)]
        pruned = [p.triple for rec in memory.history for p in rec.pruned if check.carries(graph, p.triple[2], instance.answer)]
        if pruned and not in_graph:
            return "wrong side pruned"
        added = [t for t in (record.added if record else ()) if is_fact(t)]
        if not any(check.carries(graph, t[2], instance.answer) for t in added) and not in_graph:
            return "value not typed" if untyped(graph, added, latest) else "no triple"
        return "wrong subject"
    # latest kept, stale still on a question fact
    facts = check.question_triples(graph, question)
    new = [t for t in facts if check.is_number(t[2], latest)]
    old = [t for t in facts if check.is_number(t[2], stale)]
    if any((s, p) == (s2, p2) for s, p, _ in new for s2, p2, _ in old):
        return "conflict not detected"
    earlier = {t for rec in memory.history for t in rec.added if check.is_number(t[2], stale)}
    if not any(t in earlier for t in old):
        return "stale elsewhere"
    return "relation not matched"


def table(explanations: list[dict]) -> str:
    """Markdown: count of questions per cause, with their ids."""
    counts = Counter(e["cause"] for e in explanations)
    rows = ["| cause | questions | ids |", "| --- | ---: | --- |"]
    for cause in CAUSES:
        ids = [e["question_id"] for e in explanations if e["cause"] == cause]
        if ids:
            rows.append(f"| {cause} | {counts[cause]} | {', '.join(ids)} |")
    return "\n".join(rows)


def report(explanations: list[dict]) -> str:
    """The whole --explain report as Markdown: the cause table, then one block per question."""
    parts = ["# dsm-updates: why each check passed or failed", "", table(explanations), ""]
    for e in explanations:
        parts += [f"## {e['question_id']}: {e['cause']}", "",
                  f"- question: {e['question']} (answer: {e['answer']}; stale: {e['stale']})",
                  f"- latest kept: {e['latest_kept']}; stale removed: {e['stale_removed']}",
                  f"- update sentence (round {e['update_round']}): {e['update_sentence']}",
                  "- its triples: " + ("; ".join(e["update_triples"]) or "none"),
                  f"- earlier sentence: {e['earlier_sentence'] or '-'}",
                  "- its triples: " + ("; ".join(e["earlier_triples"]) or "none"),
                  "- conflicts pruned in the update round: " + ("; ".join(e["conflicts"]) or "none"),
                  "- facts with the answer in the final graph: " + ("; ".join(e["latest_facts"]) or "none"),
                  "- facts with the stale value in the final graph: " + ("; ".join(e["stale_facts"]) or "none"), ""]
    return "\n".join(parts)
