"""The automatic verifier's labels of a task's items (issue 17 item 4, "against the automatic
verifier"): each item becomes a FactScore FactItem (history + query, the item's passages as
evidence, never the gold marks) and the chosen verifier labels it. `agreement.against(labels,
verifier_labels(...))` then gives each annotator's kappa against it."""

from __future__ import annotations

from collections.abc import Sequence

from core.annotation.model import Item


def fact_item(item: Item):
    from core.metrics.fact_types import FactItem, Passage

    history = tuple((str(who), str(text)) for who, text in item.history) + ((("user", item.query),) if item.query else ())
    evidence = tuple(Passage(text=p.text, title=p.title, source=p.id) for p in item.evidence if p.text.strip())
    return FactItem(fact=item.fact, history=history, evidence=evidence, response=item.response, id=item.item_id)


def verifier_labels(items: Sequence[Item], verifier) -> dict[str, str]:
    """item_id -> the verifier's label (Supports / Refutes / Not Enough Info)."""
    from core.metrics.verifier import verify_facts

    verdicts = verify_facts([fact_item(i) for i in items], verifier)
    return {i.item_id: v.label for i, v in zip(items, verdicts)}
