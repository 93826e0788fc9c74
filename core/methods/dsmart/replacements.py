"""Replacements: 'I traded in my Civic for a Subaru Outback', 'I replaced my old faucet with a Moen',
'I switched to T-Mobile'. The new thing takes the old thing's place: every fact the speaker had
with the old thing (drives it, goes to it, has it) is carried onto the new one, and the old fact
is pruned as a conflict (rule "replacement"), kept in the history.

The extractor reads these clauses as minted relations (speaker --trade_in--> old, speaker
--trade_for--> new; word_lists.REPLACE_VERBS). The old thing is the named one ('my Civic' is the node
whose name holds 'civic', 'Honda Civic'); with 'switch to Y' and no old thing named, it is the one
thing the speaker had a relation to whose top class (organisation, place, person, ...) is Y's, when
there is exactly one: 'I go to Planet Fitness' then 'I switched to the YMCA' (a class the tagger could
not tell matches any class). Ambiguous: nothing is replaced.
"""

from __future__ import annotations

import re

from rdflib import RDF, Graph, URIRef

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.vocab import DSM, RELATION_BASE, TOP_CLASSES, label_of, relation

_WORD = re.compile(r"[a-z0-9]+")


def replacement_updates(old: Graph, fragment: Graph) -> tuple[list, list, list]:
    """(conflicts, carried, withdrawn): the speaker's old facts with a replaced thing, the same facts
    with the new thing, and the facts the replacing sentence itself states with the old thing
    ('I traded in *my* Civic': the speaker has it no longer) for the fragment to drop."""
    from core.methods.dsmart.conflicts import Conflict

    found, carried, withdrawn = [], [], []
    marks = {relation(f"{v} {new}") for v, (_, new) in lx.REPLACE_VERBS.items()}
    marks |= {relation(f"{v} {old}" if old else v) for v, (old, _) in lx.REPLACE_VERBS.items()}
    for verb, (old_prep, new_prep) in lx.REPLACE_VERBS.items():
        old_rel = relation(f"{verb} {old_prep}" if old_prep else verb)
        for speaker, _, new in fragment.triples((None, relation(f"{verb} {new_prep}"), None)):
            if not isinstance(new, URIRef):
                continue
            named = [o for o in fragment.objects(speaker, old_rel) if isinstance(o, URIRef)]
            withdrawn += [(speaker, p, n) for n in named for p in set(fragment.predicates(speaker, n)) - marks]
            targets = ({t for n in named for t in same_thing(old, fragment, n)} if named
                       else one_of_its_class(old, fragment, speaker, new, marks))
            for target in targets - {new}:
                for p in set(old.predicates(speaker, target)) - marks:
                    if str(p).startswith(RELATION_BASE) or p in lx.REPLACED_PROPERTIES:
                        why = f"replaced by {label_of(fragment, new)} ('{verb}')"
                        found.append(Conflict((speaker, p, target), why, "replacement"))
                        carried.append((speaker, p, new))
    return found, carried, withdrawn


def words(graph: Graph, node) -> set[str]:
    return set(_WORD.findall(label_of(graph, node).lower())) - {"user", "s", "my", "the", "a", "an"}


def same_thing(old: Graph, fragment: Graph, named) -> set:
    """The old graph's nodes that the named old thing refers to: its own node, or a node whose name
    holds all its words ('my Civic' -> 'user's Honda Civic')."""
    wanted = words(fragment, named)
    if not wanted:
        return set()
    return {n for n in set(old.subjects(RDF.type, None)) if n == named or wanted <= words(old, n)}


def one_of_its_class(old: Graph, fragment: Graph, speaker, new, marks) -> set:
    """With no old thing named: the one named thing (a capitalised name) of the new thing's top
    class, or of none when spaCy typed neither, that the speaker had a relation to; none when there
    are several, or the new thing is no name."""
    if not is_name(label_of(fragment, new)):
        return set()
    classes = {c for c in fragment.objects(new, RDF.type) if c in TOP_CLASSES} - {DSM.Thing}
    candidates = {o for p, o in old.predicate_objects(speaker) if isinstance(o, URIRef) and p not in marks
                  and (str(p).startswith(RELATION_BASE) or p in lx.REPLACED_PROPERTIES)
                  and is_name(label_of(old, o)) and same_class(classes, old, o)}
    return candidates if len(candidates) == 1 else set()


def is_name(label: str) -> bool:
    """A name has a capital letter ('Planet Fitness', 'YMCA', 'iPhone 15'); a common noun has none."""
    return any(ch.isupper() for ch in label)


def same_class(classes: set, old: Graph, node) -> bool:
    """The old thing may be what the new one replaces: the same top class, or either one's class
    unknown (no tag, or only Thing): 'switched to the YMCA' (a noun the tagger did not type) may
    replace Planet Fitness (an organisation); 'the one named thing' still has to be one."""
    theirs = {c for c in old.objects(node, RDF.type) if c in TOP_CLASSES} - {DSM.Thing}
    return not classes or not theirs or classes == theirs
