"""Node naming for the clause rules: which individual, literal or owner a token of a spaCy parse
stands for (pronouns by speaker, relative pronouns by antecedent, nouns by their compounds,
owners and facility names, named entities by type), and the subject and owner of a clause.

The lowest rule family: it reads the parse context (context.py: the builder and the speaker) and
calls no other family; change_rules.py, value_rules.py and clause_rules.py call it.
"""

from __future__ import annotations

import re

from rdflib import Literal, URIRef

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.context import ParseContext
from core.methods.dsmart.literals import date_literal, parse_number
from core.methods.dsmart.vocab import ASSISTANT, DSM, USER, entity, slug

NER_CLASS = {"PERSON": DSM.Person, "GPE": DSM.Place, "LOC": DSM.Place, "FAC": DSM.Place, "ORG": DSM.Organization,
             "NORP": DSM.Thing, "PRODUCT": DSM.Thing, "WORK_OF_ART": DSM.Thing, "EVENT": DSM.Event,
             "LANGUAGE": DSM.Thing, "LAW": DSM.Thing}
LITERAL_NER = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})
PERSON_WORDS = {"user": USER, "assistant": ASSISTANT}
MOD_DEPS = frozenset({"compound", "amod", "nmod", "npadvmod", "punct", "advmod", "nummod", "quantmod"})
CLAUSE = frozenset({"VERB", "AUX"})
SUBJECTS = frozenset({"nsubj", "nsubjpass"})


def ent_span(tok):
    return next((e for e in tok.doc.ents if e.start <= tok.i < e.end), None)


def is_number(tok) -> bool:
    if tok.lower_ in ("one", "ones") and tok.pos_ != "NUM":
        return False  # "new ones", "the one": a pronoun-like noun, not a count
    return (tok.pos_ == "NUM" or tok.ent_type_ in ("CARDINAL", "ORDINAL") or tok.lower_ in lx.ORDINAL_WORDS
            or tok.lower_ in lx.NUMBER_WORDS) and parse_number(tok) is not None


class NodeRules:
    """Who and what the tokens of a parse name."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx

    def pronoun(self, tok) -> URIRef | None:
        word = tok.lower_
        if word in lx.FIRST:
            who = ASSISTANT if self.ctx.speaker == "assistant" else USER
        elif word in lx.SECOND:
            who = USER if self.ctx.speaker in ("assistant", "narrator") else ASSISTANT
        elif (ante := self.gendered_antecedent(tok)) is not None:
            node = self.node(ante)
            return node if isinstance(node, URIRef) else None
        else:
            return None  # it / they, or he / she with no single antecedent: no guess
        return self.ctx.builder.speaker(who)

    @staticmethod
    def gendered_antecedent(tok):
        """'My daughter got two more plushies, so she has 10 now': he / she (him, her, his) stand for
        the one person noun of that gender (word_lists.FEMALE_NOUNS / MALE_NOUNS) the utterance names
        before them; None when it names none or several (names carry no gender here)."""
        gender = lx.THIRD_PERSON.get(tok.lower_)
        if gender is None:
            return None
        nouns = lx.FEMALE_NOUNS if gender == "female" else lx.MALE_NOUNS
        found = [t for t in tok.doc[: tok.i] if t.pos_ == "NOUN" and t.lemma_.lower() in nouns]
        return found[-1] if found and len({t.lemma_.lower() for t in found}) == 1 else None

    @staticmethod
    def antecedent(tok):
        """The noun a relative pronoun stands for ('Rachel, who is ...', 'the gym, which is ...')."""
        if tok.lower_ in lx.RELATIVE and tok.dep_ in SUBJECTS | {"dobj", "pobj"}:
            clause = tok.head if tok.dep_ != "pobj" else tok.head.head
            if clause.dep_ == "relcl" and clause.head.pos_ in ("NOUN", "PROPN"):
                noun = clause.head
                if tok.lower_ == "who":  # 'who' is a person: past a mis-attached 'from my company'
                    x = noun
                    while not NodeRules.personal(x) and x.head.i != x.i and x.pos_ in ("NOUN", "PROPN", "ADP"):
                        x = x.head
                    noun = x if NodeRules.personal(x) else noun
                if noun.dep_ == "appos" and noun.head.pos_ == "PROPN":
                    noun = noun.head  # "Rachel, an old colleague, who ...": Rachel
                return noun
        return None

    @staticmethod
    def personal(tok) -> bool:
        return tok.ent_type_ == "PERSON" or tok.lemma_.lower() in lx.PERSON_NOUNS or NodeRules.kin_before(tok) is not None

    def modifiers(self, tok) -> list:
        """The tokens before a noun that name it with it: compounds, adjectives, hyphenated parts
        ('Kansas City Masterpiece BBQ sauce', 'cocktail-making class'); no determiners, owners or counts."""
        out = []
        for child in tok.children:
            if child.i < tok.i and child.dep_ in MOD_DEPS and (not is_number(child) or self.attached(child)):
                out += [t for t in child.subtree if t.dep_ not in ("det", "poss", "case", "cc")
                        and (not is_number(t) or self.attached(t))
                        and t.pos_ not in ("DET", "PRON") and t.lower_ not in lx.INTENSIFIERS]
        return sorted(out, key=lambda t: t.i)

    @staticmethod
    def attached(tok) -> bool:
        """A number written into a word ('70-200mm', '5K'): part of a name, not a count."""
        before = tok.doc[tok.i - 1] if tok.i > 0 else None
        return not tok.whitespace_ or (before is not None and not before.whitespace_ and before.text == "-")

    @staticmethod
    def name_number(tok) -> bool:
        """'a Dell XPS 13', 'my iPhone 15', 'Windows 11': a number after the proper name it modifies is
        part of the name (a model or edition), not a count; counts come before what they count."""
        return tok.dep_ == "nummod" and tok.head.pos_ == "PROPN" and tok.head.i < tok.i and tok.like_num

    def key(self, tok) -> tuple[str, str] | None:
        """(key, label) of the individual a nominal token names, or None for pronouns/literals."""
        if tok.pos_ == "PRON":
            if (ante := self.gendered_antecedent(tok)) is not None:
                return self.key(ante)  # 'her shelf' after 'my daughter': the daughter's shelf
            node = self.pronoun(tok)
            return (node.split("/")[-1], node.split("/")[-1]) if node is not None else None
        if tok.ent_type_ and tok.ent_type_ not in LITERAL_NER and tok.pos_ == "PROPN":
            span = ent_span(tok)
            text = re.sub(r"^(the|a|an)\s+", "", span.text, flags=re.I)
            return slug(text), text
        if tok.lemma_.lower() in PERSON_WORDS and self.ctx.speaker == "narrator":
            return tok.lemma_.lower(), tok.lemma_.lower()
        mods = [t for t in self.modifiers(tok) if t.i != getattr(self.kin_before(tok), "i", -1)]
        named = [t for t in mods if t.pos_ in ("NOUN", "PROPN", "VERB") or t.dep_ == "compound"]
        base_key = " ".join([t.lemma_.lower() for t in named] + [tok.lemma_.lower()])
        base_label = "".join(t.text_with_ws for t in mods) + tok.text
        for number in (c for c in tok.children if self.name_number(c)):  # 'Dell XPS 13'
            base_key, base_label = f"{base_key} {number.lower_}", f"{base_label} {number.text}"
        if (street := self.street(tok)) is not None:  # "the music shop on Main St": that one shop
            base_key, base_label = f"{base_key} {street[0]}", f"{base_label} {street[1]}"
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is not None and (owner_key := self.key(owner)) is not None:
            return f"{owner_key[0]} {base_key}", f"{owner_key[1]}'s {base_label}"
        return base_key, base_label

    @staticmethod
    def street(tok) -> tuple[str, str] | None:
        """('on main st', 'on Main St') when a noun is placed by a facility name ('the music shop on
        Main St', 'the bakery at Union Station'): a shop on a named street is one shop, not every
        shop of the dialogue. Towns and regions ('the gym in Denver') do not split a noun: a later
        'the gym' is the same gym."""
        if tok.pos_ != "NOUN" or NodeRules.personal(tok):
            return None
        for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ in lx.FACILITY_PREPS):
            pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if pobj is not None and pobj.pos_ == "PROPN" and pobj.ent_type_ == "FAC":
                name = ent_span(pobj).text
                return f"{prep.lower_} {name.lower()}", f"{prep.lower_} {name}"
        return None

    def node(self, tok) -> URIRef | Literal | None:
        """The individual (or literal) a nominal token stands for, declared in the fragment."""
        if (ante := self.antecedent(tok)) is not None:
            return self.node(ante)
        if tok.pos_ == "PRON":
            return self.pronoun(tok)
        if tok.ent_type_ in LITERAL_NER:
            return self.literal(tok)
        if tok.pos_ == "NUM" and (value := parse_number(tok)) is not None:
            return Literal(value)
        if tok.pos_ not in ("NOUN", "PROPN"):
            return None
        appos = next((c for c in tok.children if c.dep_ == "appos" and c.pos_ == "PROPN"), None)
        appos = appos if appos is not None else self.name_after(tok)
        if appos is not None and tok.pos_ == "NOUN":
            # "my sister Anna": Anna is the individual, a Sister, and the owner has her
            ind = self.node(appos)
            if isinstance(ind, URIRef):
                self.ctx.builder.individual(ind, "", self.ctx.builder.noun_class(tok.lemma_.lower(), self.top_class(tok)))
                owner = next((c for c in tok.children if c.dep_ == "poss"), None)
                if owner is not None and isinstance(o := self.node(owner), URIRef):
                    self.ctx.builder.fact(o, DSM.has, ind)
            return ind
        key = self.key(tok)
        if key is None:
            return None
        if tok.lemma_.lower() in PERSON_WORDS and self.ctx.speaker == "narrator":
            return self.ctx.builder.speaker(PERSON_WORDS[tok.lemma_.lower()])
        iri = entity(key[0])
        if tok.pos_ == "PROPN":  # a name is typed by its NER label only where nothing surer types it (settle)
            self.ctx.builder.guess(iri, key[1], NER_CLASS.get(tok.ent_type_))
        else:
            self.ctx.builder.individual(iri, key[1], self.ctx.builder.noun_class(tok.lemma_.lower(), self.top_class(tok)))
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if (kin := self.kin_before(tok)) is not None:  # "my niece Lily": a Niece, the speaker's
            self.ctx.builder.individual(iri, "", self.ctx.builder.noun_class(kin.lemma_.lower(), DSM.Person))
            owner = next((c for c in kin.children if c.dep_ == "poss"), owner)
        if owner is not None and isinstance(o := self.node(owner), URIRef):
            self.ctx.builder.fact(o, DSM.has, iri)  # "my dog", "my Honda Civic": the speaker has it
        return iri

    @staticmethod
    def kin_before(tok):
        """'my niece Lily', parsed with 'niece' as the name's compound: the person noun, which types
        the name (as in apposition) and is no part of it; None otherwise."""
        if tok.pos_ != "PROPN":
            return None
        return next((c for c in tok.children if c.dep_ == "compound" and c.i == tok.i - 1
                     and c.lemma_.lower() in lx.PERSON_NOUNS), None)

    @staticmethod
    def name_after(tok):
        """'My niece Lily is 6': a person noun right before a name is in apposition to it, however
        the parser hangs the name (as a second subject, a compound); None otherwise."""
        nxt = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
        if nxt is None or nxt.pos_ != "PROPN" or tok.lemma_.lower() not in lx.PERSON_NOUNS:
            return None
        return nxt if nxt.head.i in (tok.i, tok.head.i) and nxt.dep_ in ("nsubj", "compound", "appos", "dobj", "pobj") else None

    def literal(self, tok) -> Literal:
        span = ent_span(tok)
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

    @staticmethod
    def top_class(tok) -> URIRef:
        return NodeRules.top_class_of(tok.lemma_.lower())

    @staticmethod
    def top_class_of(lemma: str) -> URIRef:
        if lemma in lx.PERSON_NOUNS:
            return DSM.Person
        if lemma in lx.PLACE_NOUNS:
            return DSM.Place
        if lemma in lx.EVENT_NOUNS:
            return DSM.Event
        if lemma in lx.TIME_NOUNS:
            return DSM.TimeExpression
        return DSM.Thing

    @staticmethod
    def local(iri) -> str:
        return str(iri).rsplit("/", 1)[-1]

    def possessor(self, noun) -> URIRef | None:
        for t in [noun, *noun.children, *(c for c in noun.head.children)]:
            if t.dep_ == "poss" and isinstance(o := self.node(t), URIRef):
                return o
        return None

    def group_owner(self, noun) -> URIRef | None:
        """Whose a group's members are: 'my vinyl collection', 'our team' (word_lists.AGGREGATE_NOUNS);
        None for other nouns or an unowned group."""
        return self.possessor(noun) if noun.lemma_.lower() in lx.AGGREGATE_NOUNS else None

    def place(self, tok, around=None):
        """Where a thing is kept, with the place that place is in: 'the safe in my bedroom closet', 'a
        shoe rack in my closet' are one spot (the safe, not every safe); a town does not narrow it.
        `around`: a locative the parser hung elsewhere ('to a lockbox by the back door')."""
        node = self.node(tok)
        inner = next((p for prep in tok.children if prep.dep_ == "prep" and prep.lower_ in lx.LOCATIVE_PREPS
                      for p in prep.children if p.dep_ == "pobj" and p.pos_ == "NOUN"), None)
        inner = inner if inner is not None or around is None or around.pos_ != "NOUN" else around
        if not isinstance(node, URIRef) or inner is None or not isinstance(self.node(inner), URIRef):
            return node
        outer, key = self.key(inner), self.key(tok)
        if outer is None or key is None:
            return node
        prep = inner.head.lower_
        return self.ctx.builder.individual(entity(f"{key[0]} {prep} {outer[0]}"), f"{key[1]} {prep} {outer[1]}",
                                 self.ctx.builder.noun_class(tok.lemma_.lower(), self.top_class(tok)))

    @staticmethod
    def span_text(tok) -> str:
        """A name with its compounds ('New York'), or the entity span it belongs to."""
        if tok.ent_type_:
            span = ent_span(tok)
            if span is not None:
                return span.text
        parts = [c for c in tok.children if c.dep_ in ("compound", "amod") and c.i < tok.i] + [tok]
        return " ".join(t.text for t in sorted(parts, key=lambda t: t.i))

    def subject(self, verb):
        subj = next((c for c in verb.children if c.dep_ in SUBJECTS), None)
        if subj is None:  # "I got pre-approved": the parser may hang the subject on the auxiliary
            auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
            subj = next((g for a in auxes for g in a.children if g.dep_ in SUBJECTS), None)
        inherit = verb.dep_ in ("conj", "xcomp") or (verb.dep_ in ("advcl", "pcomp") and verb.tag_ in ("VBG", "VBN"))
        if subj is None and inherit:
            x = verb.head  # "..., having watched 15 videos", "proud of sticking to ...": the governing clause's subject
            while x.head.i != x.i and x.pos_ not in CLAUSE:
                x = x.head
            if x.i != verb.i and x.pos_ in CLAUSE:
                return self.subject(x)
        return subj

    def owner(self, verb) -> URIRef | None:
        subj = self.subject(verb)
        node = self.node(subj) if subj is not None else None
        return node if isinstance(node, URIRef) else None

    def anchor(self, tok):
        """The clause a token belongs to: its nearest verbal ancestor."""
        x = tok
        span = ent_span(tok)
        inside = range(span.start, span.end) if span is not None else range(0)
        while x.head.i != x.i:
            x = x.head
            if x.i in inside:
                continue  # '7:15 am' with 'am' tagged a verb: a word of the same name or time is no clause
            if x.pos_ in CLAUSE and x.dep_ not in ("aux", "auxpass", "prep"):  # not 'including', a preposition
                return x
        return x if x.pos_ in CLAUSE else None

    def first_person_clause(self, verb):
        for t in verb.subtree:
            if t.i != verb.i and t.pos_ in CLAUSE and t.dep_ not in ("aux", "auxpass") and self.owner(t) is not None:
                return t
        return None

    def previous_first_person(self, verb):
        for t in reversed(list(verb.doc[verb.sent.start : verb.i])):
            if t.pos_ == "VERB" and t.dep_ not in ("aux", "auxpass") and self.owner(t) is not None:
                return t
        return None
