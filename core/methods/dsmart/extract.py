"""Knowledge-fragment extraction G'_t = KGE(s_t): text -> OWL fragment.

The paper's KGE is a remote neuro-symbolic service (SPRING AMR -> AMR2FRED -> WSD/Framester).
Offline we build the closest honest substitute from spaCy dependency parses (`SpacyExtractor`):
named entities typed by their NER label, noun chunks as individuals typed by a class minted from the
head noun and aligned under a top-level DSM class (the WSD/DUL alignment step of Algorithm 1, by a
small lexicon instead of Framester), subject-verb-object and verb-preposition-object relations,
copulas ("X is Y"), possessives ("my dog is Rex"), counts ("I have 2 cats"), negation, numbers and
dates as typed literals. `LLMExtractor` asks a strong LLM for typed triples as JSON (validated),
and falls back to the spaCy extractor on malformed output.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Sequence

from rdflib import Graph, Literal, URIRef

from core.methods.dsmart.clause_rules import read
from core.methods.dsmart.fragment import FragmentBuilder
from core.methods.dsmart.literals import date_literal
from core.methods.dsmart.vocab import ASSISTANT, DSM, USER, entity, slug


@dataclass(frozen=True)
class Utterance:
    """Text to extract from, and who says it: first person resolves to that speaker.
    `speaker` is "user", "assistant" or "narrator" (a third-person statement about the user)."""

    speaker: str
    text: str


class Extractor(ABC):
    name: ClassVar[str]

    @abstractmethod
    def extract(self, utterances: Sequence[Utterance], known: Graph | None = None) -> Graph:
        """The OWL fragment the utterances assert; `known`: the memory so far (a name's type it
        already holds outweighs a guess)."""


_MARKUP = re.compile(r"(\*\*|__|`+|^#+\s*|^\s*[-*]\s+)", re.M)


def plain(text: str) -> str:
    """Text without Markdown emphasis, code ticks, headings and list bullets ('**125 stars**')."""
    return _MARKUP.sub("", text)


class SpacyExtractor(Extractor):
    """Rule-based extraction over spaCy dependency parses (see the module docstring)."""

    name = "spacy"

    def __init__(self, nlp) -> None:
        self.nlp = nlp

    def extract(self, utterances: Sequence[Utterance], known: Graph | None = None) -> Graph:
        b = FragmentBuilder()
        texts = [plain(u.text) for u in utterances]
        for u, doc in zip(utterances, self.nlp.pipe(texts), strict=True):
            read(doc, b, u.speaker)
        return b.settle(known)


# -- the LLM extractor (strong endpoints) --------------------------------------------------------
TRIPLE_SCHEMA = {
    "type": "object",
    "required": ["triples"],
    "properties": {
        "triples": {
            "type": "array",
            "maxItems": 40,
            "items": {
                "type": "object",
                "required": ["subject", "predicate", "object"],
                "properties": {k: {"type": ["string", "number"]} for k in
                               ("subject", "subject_type", "predicate", "object", "object_type")},
            },
        }
    },
}
TYPE_CLASS = {"person": DSM.Person, "place": DSM.Place, "organization": DSM.Organization, "thing": DSM.Thing,
              "event": DSM.Event, "time": DSM.TimeExpression, "quantity": DSM.Quantity}
FIXED_PREDICATES = {"name": DSM.name, "age": DSM.age, "birth_date": DSM.birthDate, "lives_in": DSM.livesIn,
                    "stored_at": DSM.storedAt, "has_spouse": DSM.hasSpouse, "works_for": DSM.worksFor,
                    "likes": DSM.likes, "dislikes": DSM.dislikes, "has": DSM.has, "amount": DSM.amount}
DATA_PREDICATES = frozenset({DSM.name, DSM.age, DSM.birthDate, DSM.amount})
SPEAKER_NAMES = {"user": USER, "i": USER, "me": USER, "assistant": ASSISTANT, "ai": ASSISTANT}


class LLMExtractor(Extractor):
    """Typed triples as validated JSON from a strong LLM, mapped onto the DSM vocabulary."""

    name = "llm"

    def __init__(self, llm) -> None:
        self.llm = llm

    def extract(self, utterances: Sequence[Utterance], known: Graph | None = None) -> Graph:
        from core.llm.base import Message
        from core.llm.prompts import render_prompt

        b = FragmentBuilder()
        for u in utterances:
            first, second = {"user": ("the user", "the assistant"), "assistant": ("the assistant", "the user")}.get(
                u.speaker, ("the user", "the user"))
            prompt = render_prompt("dsmart_extract", first_person=first, second_person=second, text=u.text)
            reply = self.llm.json([Message("user", prompt)], TRIPLE_SCHEMA)  # LLMOutputError -> caller falls back
            for item in reply["triples"]:
                self.add(b, item)
        return b.graph

    def add(self, b: FragmentBuilder, item: dict) -> None:
        pred_key = slug(str(item["predicate"]))
        negative = pred_key.startswith("not_")
        predicate = FIXED_PREDICATES.get(pred_key)
        subject = self.individual(b, str(item["subject"]), str(item.get("subject_type", "thing")))
        obj_type = str(item.get("object_type", "thing")).lower()
        raw = item["object"]
        is_literal = obj_type == "literal" or predicate in DATA_PREDICATES or isinstance(raw, (int, float))
        if is_literal:
            obj = Literal(raw) if isinstance(raw, (int, float)) else self.literal(str(raw))
        else:
            obj = self.individual(b, str(raw), obj_type)
        if predicate is None:
            base = pred_key[4:] if negative else pred_key
            predicate = b.relation(base, datatype=is_literal, negative=negative)
        if predicate == DSM.amount:
            b.individual(subject, "", DSM.Quantity)
        b.fact(subject, predicate, obj)

    @staticmethod
    def individual(b: FragmentBuilder, name: str, kind: str) -> URIRef:
        key = name.strip().lower()
        if key in SPEAKER_NAMES or key in ("the user", "the assistant"):
            return b.speaker(SPEAKER_NAMES.get(key, USER if "user" in key else ASSISTANT))
        top = TYPE_CLASS.get(kind.lower().strip())
        return b.individual(entity(name), name.strip(), *([top] if top is not None else []))

    @staticmethod
    def literal(text: str) -> Literal:
        number = text.replace(",", "").strip()
        try:
            value = float(number)
            return Literal(int(value) if value.is_integer() else value)
        except ValueError:
            return date_literal(text) if any(ch.isdigit() for ch in text) else Literal(text.strip())
