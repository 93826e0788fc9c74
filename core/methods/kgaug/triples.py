"""Triples: canonical direction, verbalisation, and the relation names of OpenDialKG's item graph.

OpenDialKG writes each relation both ways: `~r` is the reverse of `r`, so (a, ~r, b) is the fact
(b, r, a). The graph stores every fact once, in the direction without `~`; a walk reads edges both
ways.
"""

from __future__ import annotations

import re
from typing import NamedTuple

REVERSE = "~"

# iEvaLM's coarse attribute keys in opendialkg_items_kg_ievalm_id2info.json -> OpenDialKG relations
# (head = the item name, tail = the value); see ../shared/data/opendialkg/SOURCE.md.
ITEM_RELATIONS = {
    "actor": "starred_actors",
    "director": "directed_by",
    "genre": "has_genre",
    "language": "in_language",
    "writer": "written_by",
    "year": "release_year",
}

# Relations are read as their words ("starred_actors" -> "starred actors"), as the paper's baselines
# read Wikidata relation labels; only symbols get a phrase.
_PHRASES = {"is-a": "is a"}


class Triple(NamedTuple):
    head: str
    relation: str
    tail: str

    def key(self) -> str:
        """A stable string id (used for gold matching and in results files)."""
        return f"{self.head}\t{self.relation}\t{self.tail}"


def canonical(head: str, relation: str, tail: str) -> Triple:
    """The fact in the stored direction: (a, ~r, b) -> (b, r, a)."""
    head, relation, tail = clean(head), relation.strip(), clean(tail)
    if relation.startswith(REVERSE):
        return Triple(tail, relation[len(REVERSE):].strip(), head)
    return Triple(head, relation, tail)


def clean(name: str) -> str:
    """Entity names as stored: whitespace collapsed (names never contain newlines or tabs)."""
    return " ".join(str(name).split())


def relation_phrase(relation: str) -> str:
    return _PHRASES.get(relation) or re.sub(r"[_\s]+", " ", relation).strip().lower()


def verbalize(triple: Triple) -> str:
    """'Find Me Guilty directed by Sidney Lumet': the text BM25, KAPING and the relevance model read."""
    return f"{triple.head} {relation_phrase(triple.relation)} {triple.tail}"


def as_prompt_line(triple: Triple) -> str:
    """The paper's prompt form: (head, relation, tail)."""
    return f"({triple.head}, {triple.relation}, {triple.tail})"
