"""Who stated each fact of the memory: the user or the assistant (issue 57).

The paper builds the graph from both sides of a round, and so does the DSM: the assistant's reply
sentences are extracted too, and their facts are recall lines ('I replied: "..."'). But a reply can
invent ("Your kitchen has a big oven"), so what only the assistant said is kept apart:

- a round's record lists the triples only the assistant's sentences asserted
  (`TurnRecord.assistant_only`: in the fragment of the whole round, not in the fragment of the
  user's turn alone); a triple the user's turn also asserts is the user's;
- `speakers` says, for every triple, who stated it in the latest round that asserted it: a user
  who later says it again (confirms it) makes it theirs;
- an assistant fact never prunes a user fact (`keep_user_facts`): where a symbolic conflict would
  prune a fact the user stated and the user's own sentences of the round would not, the conflict
  is dropped and the assistant's triples that caused it are left out of the round's fragment. The
  LLM's conflicts (strong endpoints) read the whole fragment and are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rdflib import RDF, Graph

from core.methods.dsmart.fragment import is_fact

Triple = tuple
USER, ASSISTANT, IMPORTED = "user", "assistant", "import"
SYMBOLIC_RULES = frozenset({"functional", "numeric", "opposite", "slot", "disjoint", "replacement"})


def assistant_only(fragment: Graph, user_part: Graph) -> set[Triple]:
    """The triples of a round's fragment that the user's turn alone does not assert."""
    return {t for t in fragment if t not in user_part}


def speakers(history: Sequence) -> dict[Triple, str]:
    """Every triple a record asserted -> who stated it: 'assistant' when only the assistant's
    sentences ever did, else who did in the latest round that was not the assistant alone:
    'import' for an imported file, 'user' for the user's turn (or the LLM's statement of the
    round, which speaks of the user). The assistant repeating a user's fact leaves it the user's."""
    out: dict[Triple, str] = {}
    for record in history:
        theirs = set(getattr(record, "assistant_only", ()))
        source = IMPORTED if getattr(record, "source", "dialogue") == "import" else USER
        for triple in record.added:
            if triple not in theirs:
                out[triple] = source
            else:
                out.setdefault(triple, ASSISTANT)
    return out


def causes(conflict_triple: Triple, only: Iterable[Triple]) -> set[Triple]:
    """The assistant's facts that clash with an old fact: those on the same subject with the same
    relation (or both types); failing that, every assistant fact on that subject."""
    s, p, _ = conflict_triple
    same_subject = [t for t in only if t[0] == s and is_fact(t)]
    same = {t for t in same_subject if t[1] == p or (p == RDF.type and t[1] == RDF.type)}
    return same or {t for t in same_subject if t[1] != RDF.type or p == RDF.type}


def keep_user_facts(found: list, spoken: dict[Triple, str], only: set[Triple],
                    user_conflicts: Callable[[], set[Triple]]) -> tuple[list, set[Triple]]:
    """(conflicts to apply, assistant triples to leave out of the fragment). A symbolic conflict
    that would prune a fact the user stated stands only if the user's own sentences of the round
    cause it too (`user_conflicts()`: the old triples the user's part alone conflicts with, asked
    only when such a conflict exists)."""
    at_risk = [c for c in found if c.rule in SYMBOLIC_RULES and spoken.get(c.triple, USER) != ASSISTANT]
    if not only or not at_risk:
        return found, set()
    theirs = user_conflicts()
    blocked = [c for c in at_risk if c.triple not in theirs]
    withheld: set[Triple] = set()
    for conflict in blocked:
        withheld |= causes(conflict.triple, only)
    return [c for c in found if c not in blocked], withheld


__all__ = ["ASSISTANT", "IMPORTED", "USER", "assistant_only", "causes", "keep_user_facts", "speakers"]
