"""Definite references to the speaker's own things, across turns: 'our electricity bill was $140', then
'the electricity bill came to $95'. The extractor names a noun by its words and its owner, so 'the
electricity bill' (no owner said) and 'user's electricity bill' are two nodes, and the new value
never meets the old one. A noun said with no owner, that is no name, is the speaker's own thing of
the same words when the memory holds exactly one such thing (the user's, or the assistant's when the
assistant speaks of its own); with none or several, it stays its own node.

A stage of the memory (memory.py), before conflict detection: it renames fragment nodes.
"""

from __future__ import annotations

from rdflib import RDF, RDFS, Graph, URIRef

from core.methods.dsmart.vocab import ASSISTANT, DSM, USER, label_of

SPEAKERS = (USER, ASSISTANT)
NOT_THINGS = (DSM.Quantity, DSM.Event, DSM.Speaker)  # counts and activities are named by what they count / do


def owned_things(old: Graph) -> dict[str, set]:
    """'electricity bill' -> {user's electricity bill}: the speakers' things by the words after the owner."""
    out: dict[str, set] = {}
    for speaker in SPEAKERS:
        prefix = f"{label_of(old, speaker)}'s "
        for thing in old.objects(speaker, DSM.has):
            label = label_of(old, thing)
            if isinstance(thing, URIRef) and label.startswith(prefix) and "'s " not in label[len(prefix):]:
                out.setdefault(label[len(prefix):], set()).add(thing)
    return out


def definite_referents(old: Graph, fragment: Graph) -> dict:
    """Fragment node -> the one owned thing of the memory it refers to (see the module docstring)."""
    owned = owned_things(old)
    found = {}
    for node in set(fragment.subjects(RDF.type, None)):
        label = label_of(fragment, node)
        if not isinstance(node, URIRef) or node in SPEAKERS or not label[:1].islower():
            continue  # names ('Jess', 'iPhone 15') are their own referents
        if any((node, RDF.type, c) in fragment for c in NOT_THINGS) or (None, DSM.has, node) in fragment:
            continue  # an owner said in this turn names it already
        things = owned.get(label, set())
        if len(things) == 1:
            found[node] = next(iter(things))
    return found


def resolve_definites(old: Graph, fragment: Graph) -> Graph:
    """The fragment with each unowned noun renamed to the owned thing it refers to (its own label
    dropped: the owned thing keeps the memory's)."""
    mapping = definite_referents(old, fragment)
    if not mapping:
        return fragment
    out = Graph(namespace_manager=fragment.namespace_manager)
    for s, p, o in fragment:
        if p == RDFS.label and s in mapping:
            continue
        out.add((mapping.get(s, s), p, mapping.get(o, o)))
    return out


__all__ = ["definite_referents", "owned_things", "resolve_definites"]
