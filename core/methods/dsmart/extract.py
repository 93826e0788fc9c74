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

import datetime as dt
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Sequence

from rdflib import XSD, Graph, Literal, URIRef

from core.methods.dsmart.fragment import FragmentBuilder
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
    def extract(self, utterances: Sequence[Utterance]) -> Graph:
        """The OWL fragment the utterances assert."""


# -- lexicon: the small, explicit substitute for Framester's supersenses ------------------------
PERSON_NOUNS = frozenset(
    "person man woman boy girl friend sister brother mother father mom dad parent son daughter wife husband "
    "partner boyfriend girlfriend spouse colleague coworker boss manager teacher doctor child kid baby aunt "
    "uncle cousin grandmother grandfather grandma grandpa neighbor neighbour roommate coach student".split()
)
PLACE_NOUNS = frozenset(
    "city town country village place home house apartment flat room office park restaurant cafe shop store "
    "street road beach lake mountain island state region neighborhood neighbourhood closet kitchen garage "
    "bedroom basement school university gym studio harbor harbour".split()
)
EVENT_NOUNS = frozenset("trip party meeting class lesson course event concert game match wedding vacation holiday "
                        "tournament race workshop conference session appointment".split())
TIME_NOUNS = frozenset("day week month year hour minute second morning evening night weekend time".split())
PERSON_WORDS = {"user": USER, "assistant": ASSISTANT}

FIRST = frozenset("i me my mine myself we us our ours ourselves".split())
SECOND = frozenset("you your yours yourself yourselves".split())
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
ORDINAL_WORDS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)$")

NER_CLASS = {"PERSON": DSM.Person, "GPE": DSM.Place, "LOC": DSM.Place, "FAC": DSM.Place, "ORG": DSM.Organization,
             "NORP": DSM.Thing, "PRODUCT": DSM.Thing, "WORK_OF_ART": DSM.Thing, "EVENT": DSM.Event,
             "LANGUAGE": DSM.Thing, "LAW": DSM.Thing}
LITERAL_NER = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})

# verb lemma -> fixed property, by preposition ("" = direct object)
LIVE_VERBS = frozenset("live reside relocate move".split())
STORE_VERBS = frozenset("keep store put leave".split())
LOCATIVE_PREPS = frozenset("in under on at inside behind near".split())
LIKE_VERBS = frozenset("like love enjoy adore prefer".split())
DISLIKE_VERBS = frozenset("dislike hate detest".split())
HAVE_VERBS = frozenset("have own".split())
# verbs that count the same thing ("I completed 4 projects", "I finished my 5th project")
COUNT_SYNONYMS = {"complete": "finish", "own": "have", "get": "have", "collect": "add", "acquire": "add"}
NAME_VERBS = frozenset("call name".split())
DISCOURSE = frozenset({("by", "way"), ("for", "while"), ("in", "fact"), ("of", "course")})


def parse_number(token) -> int | float | None:
    """'25' -> 25, 'twenty' -> 20, '5th'/'fifth' -> 5, '1,300' -> 1300, '2.5' -> 2.5."""
    text = token.text.lower().replace(",", "")
    if m := _ORDINAL.match(text):
        return int(m.group(1))
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    if text in ORDINAL_WORDS:
        return ORDINAL_WORDS[text]
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else value


def date_literal(text: str) -> Literal:
    """xsd:date when the text is a full calendar date, else the text itself (e.g. 'last week')."""
    for fmt in ("%d %B %Y", "%B %d %Y", "%B %d, %Y", "%Y-%m-%d", "%Y/%m/%d", "%d %b %Y", "%b %d, %Y"):
        try:
            return Literal(dt.datetime.strptime(text.strip(), fmt).date(), datatype=XSD.date)
        except ValueError:
            continue
    return Literal(text)


class SpacyExtractor(Extractor):
    """Rule-based extraction over spaCy dependency parses (see the module docstring)."""

    name = "spacy"

    def __init__(self, nlp) -> None:
        self.nlp = nlp

    def extract(self, utterances: Sequence[Utterance]) -> Graph:
        b = FragmentBuilder()
        texts = [u.text for u in utterances]
        for u, doc in zip(utterances, self.nlp.pipe(texts), strict=True):
            _Clauses(b, u.speaker).sentences(doc)
        return b.graph


class _Clauses:
    """Walks one utterance's parse and emits triples into the builder."""

    def __init__(self, builder: FragmentBuilder, speaker: str) -> None:
        self.b = builder
        self.speaker = speaker

    # -- nodes ---------------------------------------------------------------------------------
    def pronoun(self, tok) -> URIRef | None:
        word = tok.lower_
        if word in FIRST:
            who = ASSISTANT if self.speaker == "assistant" else USER
        elif word in SECOND:
            who = USER if self.speaker in ("assistant", "narrator") else ASSISTANT
        else:
            return None  # he / she / it / they: no coreference resolution, so no guess
        return self.b.speaker(who)

    def key(self, tok) -> tuple[str, str] | None:
        """(key, label) of the individual a nominal token names, or None for pronouns/literals."""
        if tok.pos_ == "PRON":
            node = self.pronoun(tok)
            return (node.split("/")[-1], node.split("/")[-1]) if node is not None else None
        if tok.ent_type_ and tok.ent_type_ not in LITERAL_NER:
            span = next(e for e in tok.doc.ents if e.start <= tok.i < e.end)
            text = re.sub(r"^(the|a|an)\s+", "", span.text, flags=re.I)
            return slug(text), text
        if tok.lemma_.lower() in PERSON_WORDS and self.speaker == "narrator":
            return tok.lemma_.lower(), tok.lemma_.lower()
        compounds = [c for c in tok.children if c.dep_ == "compound" and c.i < tok.i]
        mods = [c for c in tok.children if c.dep_ in ("amod", "compound", "nmod") and c.i < tok.i and parse_number(c) is None]
        base_key = " ".join([c.lemma_.lower() for c in compounds] + [tok.lemma_.lower()])
        base_label = " ".join([c.text for c in sorted(mods, key=lambda c: c.i)] + [tok.text])
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is not None and (owner_key := self.key(owner)) is not None:
            return f"{owner_key[0]} {base_key}", f"{owner_key[1]}'s {base_label}"
        return base_key, base_label

    def node(self, tok) -> URIRef | Literal | None:
        """The individual (or literal) a nominal token stands for, declared in the fragment."""
        if tok.pos_ == "PRON":
            return self.pronoun(tok)
        if tok.ent_type_ in LITERAL_NER:
            span = next(e for e in tok.doc.ents if e.start <= tok.i < e.end)
            if span.label_ in ("DATE", "TIME"):
                return date_literal(span.text)
            if span.label_ in ("MONEY", "PERCENT"):  # "$350,000" -> 350000, "20%" -> 20
                digits = re.sub(r"[^\d.]", "", span.text)
                if re.fullmatch(r"\d+(\.\d+)?", digits):
                    value = float(digits)
                    return Literal(int(value) if value.is_integer() else value)
                return Literal(span.text)
            value = parse_number(tok)
            return Literal(value) if value is not None and span.label_ in ("CARDINAL", "ORDINAL") else Literal(span.text)
        if tok.pos_ == "NUM" and (value := parse_number(tok)) is not None:
            return Literal(value)
        if tok.pos_ not in ("NOUN", "PROPN"):
            return None
        appos = next((c for c in tok.children if c.dep_ == "appos" and c.pos_ == "PROPN"), None)
        if appos is not None and tok.pos_ == "NOUN":
            # "my sister Anna": Anna is the individual, a Sister, and the owner has her
            ind = self.node(appos)
            if isinstance(ind, URIRef):
                self.b.individual(ind, "", self.b.noun_class(tok.lemma_.lower(), self.top_class(tok)))
                owner = next((c for c in tok.children if c.dep_ == "poss"), None)
                if owner is not None and isinstance(o := self.node(owner), URIRef):
                    self.b.fact(o, DSM.has, ind)
            return ind
        key = self.key(tok)
        if key is None:
            return None
        if tok.lemma_.lower() in PERSON_WORDS and self.speaker == "narrator":
            return self.b.speaker(PERSON_WORDS[tok.lemma_.lower()])
        iri = entity(key[0])
        if tok.ent_type_ in NER_CLASS:
            return self.b.individual(iri, key[1], NER_CLASS[tok.ent_type_])
        if tok.pos_ == "PROPN":
            return self.b.individual(iri, key[1])  # a name spaCy could not type: no class guessed
        cls = self.b.noun_class(tok.lemma_.lower(), self.top_class(tok))
        self.b.individual(iri, key[1], cls)
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is not None and isinstance(o := self.node(owner), URIRef):
            self.b.fact(o, DSM.has, iri)  # "my dog": the speaker has the dog
        return iri

    @staticmethod
    def top_class(tok) -> URIRef:
        lemma = tok.lemma_.lower()
        if lemma in PERSON_NOUNS:
            return DSM.Person
        if lemma in PLACE_NOUNS:
            return DSM.Place
        if lemma in EVENT_NOUNS:
            return DSM.Event
        if lemma in TIME_NOUNS:
            return DSM.TimeExpression
        return DSM.Thing

    @staticmethod
    def count(tok) -> int | float | None:
        """The number counting a noun: '25 postcards', 'my 5th project'."""
        for c in tok.children:
            after = c.i > tok.i and c.dep_ in ("appos", "npadvmod", "nummod")  # "page 200", "level 100"
            if (c.dep_ in ("nummod", "amod") or after) and (c.pos_ == "NUM" or c.ent_type_ in ("CARDINAL", "ORDINAL")):
                value = parse_number(c)
                if value is not None:
                    return value
        return None

    # -- clauses -------------------------------------------------------------------------------
    def sentences(self, doc) -> None:
        for sent in doc.sents:
            if sent.text.rstrip().endswith("?"):
                continue  # questions assert nothing
            for tok in sent:
                if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in ("aux", "auxpass"):
                    self.clause(tok)

    def subject(self, verb):
        subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None:  # "I got pre-approved": the parser may hang the subject on the auxiliary
            auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
            subj = next((g for a in auxes for g in a.children if g.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None and verb.dep_ in ("conj", "xcomp") and verb.head.pos_ in ("VERB", "AUX"):
            return self.subject(verb.head)
        return subj

    def clause(self, verb) -> None:
        subj_tok = self.subject(verb)
        if subj_tok is None:
            return
        negative = any(c.dep_ == "neg" for c in verb.children)
        lemma = verb.lemma_.lower()
        if lemma == "be":
            self.copula(verb, subj_tok, negative)
        elif lemma in NAME_VERBS and any(c.dep_ == "oprd" for c in verb.children):
            self.naming(verb, subj_tok)
        elif lemma == "bear" and subj_tok.dep_ == "nsubjpass":
            self.birth(verb, subj_tok)
        else:
            self.action(verb, subj_tok, lemma, negative)

    def objects(self, verb) -> list:
        direct = [c for c in verb.children if c.dep_ in ("dobj", "attr", "oprd")]
        # conjoined objects of the same kind only: "pizza and pasta", not "pizza and I ..."
        return direct + [c for d in direct for c in d.conjuncts if c.pos_ == d.pos_]

    def preps(self, verb) -> list[tuple[str, object]]:
        out = []
        for prep in (c for c in verb.children if c.dep_ in ("prep", "dative", "agent")):
            for pobj in (c for c in prep.children if c.dep_ == "pobj"):
                if (prep.lower_, pobj.lemma_.lower()) in DISCOURSE:
                    continue  # "by the way" says nothing about the world
                out += [(prep.lemma_.lower(), p) for p in [pobj, *pobj.conjuncts]]
        return out

    def copula(self, verb, subj_tok, negative: bool) -> None:
        owner = next((c for c in subj_tok.children if c.dep_ == "poss"), None)
        if owner is not None and subj_tok.lemma_.lower() in ("name", "age"):
            subj = self.node(owner)  # "my name is Alice" is about me, not about an individual "my name"
            subj_tok = owner
        else:
            subj = self.node(subj_tok)
        if subj is None or isinstance(subj, Literal):
            return
        for c in verb.children:
            if c.dep_ == "attr":
                self.copula_attr(subj, subj_tok, c, negative)
            elif c.dep_ == "acomp" and not negative:
                self.copula_adjective(subj, c)
        for _, pobj in self.preps(verb):  # "I'm currently on page 200"
            amount = self.count(pobj) if pobj.pos_ == "NOUN" else None
            if amount is not None and not negative:
                self.quantity(subj, None, "be", pobj, amount)

    def copula_attr(self, subj: URIRef, subj_tok, attr, negative: bool) -> None:
        if negative:
            return  # "X is not Y" says what X is not; nothing to assert
        about_owner = subj_tok.head.lemma_.lower() if subj_tok.dep_ == "poss" else ""
        if about_owner == "name":
            self.b.fact(subj, DSM.name, Literal(self.span_text(attr)))  # "my name is Alice"
        elif about_owner == "age" and parse_number(attr) is not None:
            self.b.fact(subj, DSM.age, Literal(parse_number(attr)))
        elif attr.pos_ == "PROPN" and subj_tok.pos_ == "NOUN":
            self.b.fact(subj, DSM.name, Literal(self.span_text(attr)))  # "my dog is Rex"
        elif attr.pos_ == "NOUN" and subj_tok.pos_ == "NOUN" and subj_tok.lemma_.lower() != "user":
            self.b.fact(subj, DSM.value, Literal(self.span_text(attr)))  # "my favourite food is pizza"
        elif attr.pos_ == "NOUN":
            # "Paris is the capital of France", "I am a teacher": a type, plus the attr's of-relations
            self.b.individual(subj, "", self.b.noun_class(attr.lemma_.lower(), self.top_class(attr)))
            for prep, pobj in self.preps(attr):
                obj = self.node(pobj)
                if obj is not None:
                    self.b.fact(subj, self.b.relation(f"{attr.lemma_} {prep}", datatype=isinstance(obj, Literal)), obj)
        elif attr.pos_ == "NUM" and (value := parse_number(attr)) is not None:
            self.b.fact(subj, DSM.value, Literal(value))

    def copula_adjective(self, subj: URIRef, adj) -> None:
        if adj.lemma_.lower() == "old":  # "I'm 30 years old"
            for t in adj.subtree:
                if t.pos_ == "NUM" and (value := parse_number(t)) is not None:
                    self.b.fact(subj, DSM.age, Literal(value))
                    return
        if adj.pos_ == "ADJ":
            self.b.fact(subj, DSM.quality, Literal(adj.lemma_.lower()))

    def naming(self, verb, subj_tok) -> None:
        """'my dog is called Max' (passive) or 'I named my dog Max' (active)."""
        name = next(c for c in verb.children if c.dep_ == "oprd")
        target_tok = next((c for c in verb.children if c.dep_ == "dobj"), None)
        target_tok = target_tok if target_tok is not None else subj_tok
        target = self.node(target_tok)
        if isinstance(target, URIRef):
            self.b.fact(target, DSM.name, Literal(self.span_text(name)))

    def birth(self, verb, subj_tok) -> None:
        subj = self.node(subj_tok)
        if not isinstance(subj, URIRef):
            return
        for _, pobj in self.preps(verb):
            obj = self.node(pobj)
            if isinstance(obj, Literal):
                self.b.fact(subj, DSM.birthDate, obj)
            elif isinstance(obj, URIRef):
                self.b.individual(obj, "", DSM.Place)
                self.b.fact(subj, DSM.birthPlace, obj)

    def action(self, verb, subj_tok, lemma: str, negative: bool) -> None:
        subj = self.node(subj_tok)
        if not isinstance(subj, URIRef):
            return
        objects = [o for o in self.objects(verb)]
        preps = self.preps(verb)
        for obj_tok in objects:
            self.direct(subj, subj_tok, verb, lemma, obj_tok, negative, preps)
        for prep, pobj in preps:
            self.prepositional(subj, lemma, prep, pobj, negative, objects)
        about = next((o.lemma_.lower() for o in objects if o.pos_ == "NOUN"), "")
        for adv in (c for c in verb.children if c.dep_ == "npadvmod" and c.pos_ == "NOUN"):
            amount = self.count(adv)  # "I've made it 10 times"
            if amount is not None and not negative:
                self.quantity(subj, None, lemma, adv, amount, about)

    def direct(self, subj, subj_tok, verb, lemma, obj_tok, negative, preps) -> None:
        amount = self.count(obj_tok)
        if amount is not None and not negative:
            self.quantity(subj, subj_tok, lemma, obj_tok, amount)
            return
        obj = self.node(obj_tok)
        if obj is None:
            return
        if isinstance(obj, URIRef) and lemma in LIKE_VERBS | DISLIKE_VERBS:
            liked = (lemma in LIKE_VERBS) != negative
            self.b.fact(subj, DSM.likes if liked else DSM.dislikes, obj)
        elif isinstance(obj, URIRef) and lemma in HAVE_VERBS and not negative:
            self.b.fact(subj, DSM.has, obj)
        else:
            self.b.fact(subj, self.b.relation(lemma, datatype=isinstance(obj, Literal), negative=negative), obj)
        if lemma in STORE_VERBS and isinstance(obj, URIRef) and not negative:
            for prep, pobj in preps:  # "I keep my sneakers under my bed": where the sneakers are now
                place = self.node(pobj)
                if prep in LOCATIVE_PREPS and isinstance(place, URIRef):
                    self.b.fact(obj, DSM.storedAt, place)

    def prepositional(self, subj, lemma, prep, pobj, negative, objects) -> None:
        amount = self.count(pobj) if pobj.pos_ == "NOUN" else None
        if amount is not None and not negative:  # "tried it for 5 times", "I'm on page 200"
            self.quantity(subj, None, lemma, pobj, amount, next((o.lemma_.lower() for o in objects if o.pos_ == "NOUN"), ""))
            return
        obj = self.node(pobj)
        if obj is None:
            return
        if lemma in LIVE_VERBS and prep in ("in", "to", "at") and isinstance(obj, URIRef) and not negative:
            self.b.individual(obj, "", DSM.Place)
            self.b.fact(subj, DSM.livesIn, obj)
        elif lemma == "work" and prep in ("at", "for") and isinstance(obj, URIRef) and not negative:
            self.b.fact(subj, DSM.worksFor, obj)
        elif lemma == "marry" and prep == "to" and isinstance(obj, URIRef) and not negative:
            self.b.fact(subj, DSM.hasSpouse, obj)
        elif lemma in STORE_VERBS and objects:
            return  # handled as storedAt of the object
        else:
            self.b.fact(subj, self.b.relation(f"{lemma} {prep}", datatype=isinstance(obj, Literal), negative=negative), obj)

    def quantity(self, subj, subj_tok, lemma, obj_tok, amount, about: str = "") -> None:
        """'I've added 25 postcards' -> user add [postcards added by user] amount 25. `about`: the
        verb's object when the count is adverbial ('worn my sneakers 4 times'), so counts of
        different things done the same way stay apart."""
        verb = COUNT_SYNONYMS.get(lemma, lemma)
        noun = obj_tok.lemma_.lower()
        subj_key = str(subj).rsplit("/", 1)[-1]
        q = entity(" ".join(w for w in (subj_key, verb, about, noun, "count") if w))
        label = f"{obj_tok.text} ({verb})"
        self.b.individual(q, label, DSM.Quantity)
        self.b.fact(q, DSM.ofKind, self.b.noun_class(noun, self.top_class(obj_tok)))
        self.b.fact(q, DSM.amount, Literal(amount))
        self.b.fact(subj, self.b.relation(verb), q)

    @staticmethod
    def span_text(tok) -> str:
        """A name with its compounds ('New York'), or the entity span it belongs to."""
        if tok.ent_type_:
            span = next((e for e in tok.doc.ents if e.start <= tok.i < e.end), None)
            if span is not None:
                return span.text
        parts = [c for c in tok.children if c.dep_ in ("compound", "amod") and c.i < tok.i] + [tok]
        return " ".join(t.text for t in sorted(parts, key=lambda t: t.i))


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

    def extract(self, utterances: Sequence[Utterance]) -> Graph:
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
