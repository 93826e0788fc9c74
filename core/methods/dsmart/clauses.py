"""The local extractor's clause rules: one utterance's spaCy parse -> triples in a FragmentBuilder.

Two passes per sentence. `values` first finds the typed values (counts, durations, clock times,
days of the week, frequencies) and hangs each on the slot it belongs to: a Quantity of what its
owner counted, or the activity (a habit, a class) that happens at that time or that often. Then
`clause` reads subject-verb-object, copula, naming, birth and prepositional patterns over the tokens
the first pass left, normalising relations through the closed vocabulary (lexicon.RELATIONS).

What a clause asserts: statements, including first-person subordinate clauses of a question
("considering I wake up at 7:30 on Saturdays?"); not the question itself, not hypothetical or
conditional clauses ("I could", "if I"), not the assistant's advice.
"""

from __future__ import annotations

import re

from rdflib import Literal, URIRef

from core.methods.dsmart import lexicon as lx
from core.methods.dsmart.fragment import FragmentBuilder
from core.methods.dsmart.values import (date_literal, duration_literal, frequency_phrase, is_amount, number_of, parse_number,
                                         time_literal)
from core.methods.dsmart.vocab import ASSISTANT, DSM, USER, entity, slug
from core.text import singular

NER_CLASS = {"PERSON": DSM.Person, "GPE": DSM.Place, "LOC": DSM.Place, "FAC": DSM.Place, "ORG": DSM.Organization,
             "NORP": DSM.Thing, "PRODUCT": DSM.Thing, "WORK_OF_ART": DSM.Thing, "EVENT": DSM.Event,
             "LANGUAGE": DSM.Thing, "LAW": DSM.Thing}
LITERAL_NER = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})
PERSON_WORDS = {"user": USER, "assistant": ASSISTANT}
MOD_DEPS = frozenset({"compound", "amod", "nmod", "npadvmod", "punct", "advmod", "nummod", "quantmod"})
CLAUSE = frozenset({"VERB", "AUX"})
SUBJECTS = frozenset({"nsubj", "nsubjpass"})
INCREMENT = frozenset("more another additional extra".split())
OCCASIONS = {"once": 1, "twice": 2, "thrice": 3}  # 'met up twice': a count of times, said by an adverb
ELIDED_REACH = 20  # tokens back to look for a 'count' noun that a bare number measures
WINDOW_BEFORE = frozenset("last past next previous".split())  # "in the past 3 weeks", "the last 2 years"
WINDOW_AFTER = frozenset("ago before earlier".split())  # "3 months ago"


def ent_span(tok):
    return next((e for e in tok.doc.ents if e.start <= tok.i < e.end), None)


def is_number(tok) -> bool:
    if tok.lower_ in ("one", "ones") and tok.pos_ != "NUM":
        return False  # "new ones", "the one": a pronoun-like noun, not a count
    return (tok.pos_ == "NUM" or tok.ent_type_ in ("CARDINAL", "ORDINAL") or tok.lower_ in lx.ORDINAL_WORDS
            or tok.lower_ in lx.NUMBER_WORDS) and parse_number(tok) is not None


class Clauses:
    """Walks one utterance's parse and emits triples into the builder."""

    def __init__(self, builder: FragmentBuilder, speaker: str) -> None:
        self.b = builder
        self.speaker = speaker
        self.used: set[int] = set()  # tokens already turned into values (numbers, their nouns, times)

    # -- nodes ---------------------------------------------------------------------------------
    def pronoun(self, tok) -> URIRef | None:
        word = tok.lower_
        if word in lx.FIRST:
            who = ASSISTANT if self.speaker == "assistant" else USER
        elif word in lx.SECOND:
            who = USER if self.speaker in ("assistant", "narrator") else ASSISTANT
        else:
            return None  # he / she / it / they: no coreference resolution, so no guess
        return self.b.speaker(who)

    @staticmethod
    def antecedent(tok):
        """The noun a relative pronoun stands for ('Rachel, who is ...', 'the gym, which is ...')."""
        if tok.lower_ in lx.RELATIVE and tok.dep_ in SUBJECTS | {"dobj", "pobj"}:
            clause = tok.head if tok.dep_ != "pobj" else tok.head.head
            if clause.dep_ == "relcl" and clause.head.pos_ in ("NOUN", "PROPN"):
                noun = clause.head
                if tok.lower_ == "who":  # 'who' is a person: past a mis-attached 'from my company'
                    x = noun
                    while not Clauses.personal(x) and x.head.i != x.i and x.pos_ in ("NOUN", "PROPN", "ADP"):
                        x = x.head
                    noun = x if Clauses.personal(x) else noun
                if noun.dep_ == "appos" and noun.head.pos_ == "PROPN":
                    noun = noun.head  # "Rachel, an old colleague, who ...": Rachel
                return noun
        return None

    @staticmethod
    def personal(tok) -> bool:
        return tok.ent_type_ == "PERSON" or tok.lemma_.lower() in lx.PERSON_NOUNS

    def modifiers(self, tok) -> list:
        """The tokens before a noun that name it with it: compounds, adjectives, hyphenated parts
        ('Kansas City Masterpiece BBQ sauce', 'cocktail-making class'); no determiners, owners or counts."""
        out = []
        for child in tok.children:
            if child.i < tok.i and child.dep_ in MOD_DEPS and (not is_number(child) or self.attached(child)):
                out += [t for t in child.subtree if t.dep_ not in ("det", "poss", "case", "cc")
                        and (not is_number(t) or self.attached(t))
                        and t.pos_ not in ("DET", "PRON") and t.lower_ not in ("very", "really", "so", "quite")]
        return sorted(out, key=lambda t: t.i)

    @staticmethod
    def attached(tok) -> bool:
        """A number written into a word ('70-200mm', '5K'): part of a name, not a count."""
        before = tok.doc[tok.i - 1] if tok.i > 0 else None
        return not tok.whitespace_ or (before is not None and not before.whitespace_ and before.text == "-")

    def key(self, tok) -> tuple[str, str] | None:
        """(key, label) of the individual a nominal token names, or None for pronouns/literals."""
        if tok.pos_ == "PRON":
            node = self.pronoun(tok)
            return (node.split("/")[-1], node.split("/")[-1]) if node is not None else None
        if tok.ent_type_ and tok.ent_type_ not in LITERAL_NER and tok.pos_ == "PROPN":
            span = ent_span(tok)
            text = re.sub(r"^(the|a|an)\s+", "", span.text, flags=re.I)
            return slug(text), text
        if tok.lemma_.lower() in PERSON_WORDS and self.speaker == "narrator":
            return tok.lemma_.lower(), tok.lemma_.lower()
        mods = self.modifiers(tok)
        named = [t for t in mods if t.pos_ in ("NOUN", "PROPN", "VERB") or t.dep_ == "compound"]
        base_key = " ".join([t.lemma_.lower() for t in named] + [tok.lemma_.lower()])
        base_label = "".join(t.text_with_ws for t in mods) + tok.text
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
        if tok.pos_ != "NOUN" or Clauses.personal(tok):
            return None
        for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ in ("on", "at", "in")):
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
        if tok.ent_type_ in NER_CLASS and tok.pos_ == "PROPN":
            return self.b.individual(iri, key[1], NER_CLASS[tok.ent_type_])
        if tok.pos_ == "PROPN":
            return self.b.individual(iri, key[1])  # a name spaCy could not type: no class guessed
        cls = self.b.noun_class(tok.lemma_.lower(), self.top_class(tok))
        self.b.individual(iri, key[1], cls)
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is not None and isinstance(o := self.node(owner), URIRef):
            self.b.fact(o, DSM.has, iri)  # "my dog": the speaker has the dog
        return iri

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
        return Clauses.top_class_of(tok.lemma_.lower())

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

    # -- which clauses assert something --------------------------------------------------------
    def sentences(self, doc) -> None:
        for sent in doc.sents:
            question = sent.text.rstrip().endswith("?")
            self.values(sent, question)
            for tok in sent:
                if tok.pos_ in CLAUSE and tok.dep_ not in ("aux", "auxpass") and self.asserted(tok, question):
                    self.clause(tok)

    def asserted(self, verb, question: bool) -> bool:
        """False for the question itself, hypothetical / conditional clauses and the assistant's
        advice ('you could ...', 'you can ...')."""
        x = verb
        while True:
            auxes = {c.lower_.strip("'") for c in x.children if c.dep_ in ("aux", "auxpass")}
            if auxes & lx.HYPOTHETICAL or {"d"} & auxes:
                return False
            if any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in x.children):
                return False
            if self.speaker == "assistant" and auxes & {"can", "will", "ll"}:
                return False
            if question and x.dep_ in ("ROOT", "conj") and x.head.dep_ in ("ROOT", "conj"):
                return False  # the interrogative main clause
            if question and auxes & {"will", "ll"}:
                return False
            if x.dep_ not in ("xcomp", "conj") or x.head.i == x.i:
                return True
            x = x.head  # "I'd like to wake up": the hypothetical governs its complement

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

    # -- pass 1: typed values on their slots -------------------------------------------------------
    def values(self, sent, question: bool) -> None:
        """Times, days and frequencies first (so 'three times a week' is no count of 'times'), then
        the numbers left."""
        for numbers in (False, True):
            for tok in sent:
                first = not numbers and (self.starts_frequency(tok) or self.starts_measure(tok))
                if tok.i in self.used or is_number(tok) != numbers and not first:
                    continue
                verb = self.anchor(tok)
                if verb is None or not self.asserted(verb, question):
                    continue
                if not numbers:
                    self.schedule_value(tok, verb)
                elif self.countable(tok):
                    self.number(tok, verb)

    def starts_frequency(self, tok) -> bool:
        nxt = tok.nbor(1) if tok.i + 1 < len(tok.doc) else None
        return nxt is not None and nxt.lower_ == "times"

    def schedule_value(self, tok, verb) -> None:
        if tok.ent_type_ in ("TIME", "DATE", "QUANTITY", "CARDINAL") and self.measured(tok):
            return
        if tok.ent_type_ == "TIME" and (clock := self.clock(tok)) is not None:
            self.schedule(tok, verb, DSM.atTime, clock)
        elif self.weekday(tok):
            self.used.add(tok.i)
            self.schedule(tok, verb, DSM.onDay, Literal(singular(tok.lower_).capitalize()))
        elif (phrase := self.frequency(tok)) is not None:
            self.schedule(tok, verb, DSM.frequency, Literal(phrase))
        elif tok.lower_ in OCCASIONS and tok.dep_ == "advmod" and tok.head.i == verb.i and tok.i > verb.i:
            self.occasions(tok, verb)

    def occasions(self, tok, verb) -> None:
        """'we've met up twice already': once / twice / thrice after a verb, with no 'a week' after
        them (that is a frequency), count the times it happened, on the same slot as 'met up 2
        times' ('I once met ...' is no count: the adverb comes before the verb)."""
        owner = self.owner(verb)
        if owner is None:
            return
        self.used.add(tok.i)
        self.quantity(owner, verb.lemma_.lower(), None, OCCASIONS[tok.lower_], self.activity_object(verb),
                      kind="time", what="times")

    @staticmethod
    def weekday(tok) -> bool:
        if singular(tok.lower_) not in lx.WEEKDAYS:
            return False
        head = tok.head
        moved = head.lower_ == "to" and head.head.lemma_.lower() in lx.CHANGE_VERBS  # "got moved to Thursdays"
        return head.lower_ in ("on", "every") or moved or (tok.dep_ == "conj" and singular(head.lower_) in lx.WEEKDAYS) \
            or tok.dep_ == "npadvmod" or any(c.lower_ == "every" for c in tok.children)

    def anchor(self, tok):
        """The clause a token belongs to: its nearest verbal ancestor."""
        x = tok
        while x.head.i != x.i:
            x = x.head
            if x.pos_ in CLAUSE and x.dep_ not in ("aux", "auxpass", "prep"):  # not 'including', a preposition
                return x
        return x if x.pos_ in CLAUSE else None

    @staticmethod
    def starts_measure(tok) -> bool:
        span = ent_span(tok)
        return span is not None and span.start == tok.i and span.label_ in ("TIME", "DATE", "QUANTITY", "CARDINAL")

    def measured(self, tok) -> bool:
        """'my personal best time of 25:50' / '... of 27 minutes and 45 seconds': a time taken, as
        xsd:dayTimeDuration, is the value of the noun it is 'of'."""
        span = ent_span(tok)
        if span is None or span.start != tok.i or time_literal(span.text) is not None:
            return False
        value = duration_literal(span.text)
        root = span.root
        if value is None or not (root.dep_ == "pobj" and root.head.lower_ == "of" and root.head.head.pos_ == "NOUN"):
            return False
        noun = self.node(root.head.head)
        if not isinstance(noun, URIRef):
            return False
        self.used.update(range(span.start, span.end))
        self.b.fact(noun, DSM.value, value)
        return True

    def countable(self, tok) -> bool:
        """Numbers that count or measure: not clock times, not '$400,000' (a money literal on its
        relation), but '5 pounds' even where the tagger reads money."""
        if tok.ent_type_ == "TIME":
            return not self.is_clock(tok)
        if tok.ent_type_ == "DATE":  # '3 months' is a duration; '5 May 1990' and 'the 1990s' are dates
            return tok.head.lemma_.lower() in lx.TIME_UNITS or self.bare_count(tok)
        if tok.ent_type_ in ("MONEY", "PERCENT"):
            return tok.dep_ == "nummod" and tok.head.pos_ == "NOUN" and tok.head.ent_type_ == tok.ent_type_
        return True

    def bare_count(self, tok) -> bool:
        """'my current follower count - I think I'm close to 1300 now': the tagger reads a lone
        four-digit number as a year; after a 'count/total/number' noun, and not after a year's
        preposition ('in 2020', 'since 1999'), it is the count's value."""
        span = ent_span(tok)
        if span is None or len(span) != 1 or not tok.like_num:
            return False
        if tok.dep_ == "pobj" and tok.head.lower_ in ("in", "since", "by", "until", "from", "of", "during", "before", "after"):
            return False
        return self.count_noun_before(tok)

    @staticmethod
    def is_clock(tok) -> bool:
        span = ent_span(tok)
        return span is not None and time_literal(span.text) is not None

    def clock(self, tok) -> Literal | None:
        span = ent_span(tok)
        if span is None or span.start != tok.i:
            return None
        literal = time_literal(span.text)
        if literal is not None:
            self.used.update(range(span.start, span.end))
        return literal

    def frequency(self, tok) -> str | None:
        if tok.lower_ not in ("every", "once", "twice", "thrice") and tok.lower_ not in lx.FREQUENCY_ADVERBS \
                and not self.starts_frequency(tok):
            return None
        if tok.lower_ in lx.FREQUENCY_ADVERBS and tok.dep_ == "amod" and tok.head.lemma_.lower() not in lx.EVENT_NOUNS:
            return None  # "my daily routine" names the routine; "my weekly tennis sessions" schedules them
        start = tok.i
        window = tok.doc[max(start, tok.sent.start) : min(tok.i + 4, tok.sent.end)]
        phrase = frequency_phrase(window)
        if phrase is not None:
            self.used.update(t.i for t in window if t.lower_ in ("every", "other", "once", "twice", "thrice", "times",
                                                                 "a", "per", "each") or is_number(t)
                             or t.lemma_.lower() in lx.TIME_UNITS or t.lower_ in lx.FREQUENCY_ADVERBS)
        return phrase

    def number(self, tok, verb) -> None:
        """A count ('25 new postcards', 'my 5th project', '17 new ones', 'my species count to 32')
        or a duration ('for 3 months', "it's been 3 weeks")."""
        value = parse_number(tok)
        nxt = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
        if not tok.whitespace_ and nxt is not None and (nxt.is_alpha or nxt.text == "-"):
            return  # '5K', '5-mile', '70-200mm': a number inside a name
        before = [t.lower_ for t in tok.doc[max(tok.i - 3, tok.sent.start) : tok.i]]
        if before and (before[-1] == "not" or " ".join(before[-2:]) in ("instead of", "rather than")):
            return  # "120 stars, not 300": the number set aside
        noun = tok.head if tok.dep_ in ("nummod", "amod", "quantmod") and tok.head.pos_ in ("NOUN", "PROPN") else None
        if noun is None and tok.dep_ in ("appos", "npadvmod", "nummod") and tok.head.pos_ == "NOUN" and tok.head.i < tok.i:
            noun = tok.head  # "page 200", "level 100", "episode 10"
        if noun is None and self.setting_of(tok) is not None:
            noun = self.setting_of(tok)  # "a sensitivity of 6", "my GPA of 3.8"
        if noun is None and verb.lemma_.lower() == "turn":
            return  # "I just turned 32": an age, read by the clause (`action`)
        if noun is not None and any(c.lower_ in INCREMENT for c in noun.children):
            return  # "8 more postcards": an increment, not the count so far
        if noun is not None and noun.dep_ == "poss" and noun.head.pos_ == "NOUN":
            noun = noun.head  # "two free night's stays": the stays are counted
        if noun is not None and noun.lemma_.lower() in lx.TIME_UNITS:
            self.duration(tok, noun, value, verb)
            return
        if noun is None and not (tok.dep_ == "dobj" or (tok.dep_ == "pobj" and self.count_noun_before(tok))):
            return  # a bare number elsewhere ("I'm 30", "top 10") names no count
        if noun is not None and noun.lemma_.lower() == "one":
            self.used.add(noun.i)  # "17 new ones": 'ones' stands for the elided noun
            noun = None
        if noun is None:
            noun = self.elided(tok)
            if noun is None:
                return
        self.used.update({tok.i, noun.i} if noun.sent.start == tok.sent.start else {tok.i})
        self.count(tok, noun, value, verb)

    @staticmethod
    def setting_of(tok):
        """The noun a number is the value of in 'a sensitivity of 6', 'my GPA of 3.8 (out of 4.0)', 'a
        budget of 500': '<a / my> noun of N'. None otherwise ('out of 4.0', 'one of 3')."""
        prep = tok.head
        if tok.dep_ != "pobj" or prep.lower_ != "of" or prep.head.pos_ not in ("NOUN", "PROPN") or prep.head.i > tok.i:
            return None
        noun = prep.head
        marked = any(c.dep_ == "poss" or (c.dep_ == "det" and c.lower_ in ("a", "an")) for c in noun.children)
        return noun if marked and noun.lemma_.lower() not in lx.TIME_UNITS else None

    @staticmethod
    def count_noun_before(tok) -> bool:
        return any(t.lemma_.lower() in lx.COUNT_NOUNS for t in tok.doc[max(tok.i - ELIDED_REACH, 0) : tok.i])

    def elided(self, tok):
        """The counted noun left out ('I've written four so far', '17 new ones', 'close to 1300'):
        a 'count/total/number' noun's compound in the sentence, else the nearest plural noun before."""
        for t in reversed(list(tok.doc[max(tok.i - ELIDED_REACH, 0) : tok.i])):
            if t.lemma_.lower() in lx.COUNT_NOUNS:
                kinds = [c for c in t.doc[max(t.i - 3, 0) : t.i] if c.pos_ == "NOUN" and c.lemma_.lower() not in lx.COUNT_NOUNS]
                if kinds:
                    return kinds[-1]
        for t in reversed(list(tok.doc[: tok.i])):
            if t.tag_ in ("NNS", "NNPS") and t.lemma_.lower() not in {*lx.TIME_UNITS, "one", "thing", "way", "people"}:
                return t
        return None

    def count(self, tok, noun, value, verb) -> None:
        thing = self.changed(noun, verb, tok)
        if thing is not None and isinstance(owner := self.node(thing), URIRef):
            # "my team has grown to 8 engineers": as "my team is 8 engineers"; a group's members are its
            # owner's ("our board game collection has grown to 31 games": we have 31 games)
            if (mine := self.group_owner(thing)) is not None:
                self.quantity(mine, "have", noun, value)
                return
            q = self.quantity(owner, "be", noun, value)
            # "I'm changing my coffee limit to two cups", "reducing your coffee intake to one cup": the
            # cups are also whoever changed the thing's, or whose the thing is
            actor = self.owner(verb) if thing.dep_ == "dobj" else None
            actor = actor if actor is not None else self.possessor(thing)
            if actor is not None and actor != owner:
                self.b.fact(actor, self.b.relation(verb.lemma_.lower()), q)
            return
        owner = self.owner(verb)
        lemma = verb.lemma_.lower()
        about_verb = verb
        if owner is None and lemma == "be":  # "that's six times now that I've worn them", "that's 15 baseballs"
            # or a clause before it: "I finished another one yesterday, so that's 15 books this year"
            inner = self.first_person_clause(verb)
            subj = self.subject(verb)
            if inner is None and verb.dep_ != "relcl" and subj is not None and subj.lower_ in ("that", "this", "it"):
                inner = self.previous_first_person(verb)  # not "..., which is about 10 miles": a relative says what a thing is
            if inner is not None:
                owner = self.owner(inner)
                lemma = inner.lemma_.lower() if noun.lemma_.lower() == "time" else "have"
                about_verb = inner if noun.lemma_.lower() == "time" else verb
        if owner is None or lemma == "be":
            mine = self.possessor(noun)  # "... brings my total species count to 32", "here's my 17 postcards"
            if mine is not None:
                owner, lemma = mine, ("have" if lemma == "be" else lemma)
        if owner is None or self.node(noun) == owner:
            return  # "27 species is a great achievement": nobody's count
        subj = self.subject(about_verb)
        if subj is not None and (mine := self.group_owner(subj)) is not None:
            owner, lemma = mine, "have"  # "our collection has 25 board games": we have 25 board games
        about = self.measured_stuff(noun)
        if about is None:
            about = next((self.same_verb_object(o) if o.pos_ == "PRON" else o for o in about_verb.children
                          if o.dep_ in ("dobj", "attr") and o.pos_ in ("NOUN", "PROPN", "PRON")
                          and o.i != noun.i and o.i not in self.used), None)
        self.quantity(owner, lemma, noun, value, about)

    @staticmethod
    def measured_stuff(noun):
        """What a measure counts ('5 ounces of water', 'two cups of coffee'): 5 ounces of water and 1
        tablespoon of coffee are two slots, not two values of one 'ounces' slot. None otherwise."""
        if noun.lemma_.lower() not in lx.MEASURE_UNITS:
            return None
        return next((p for prep in noun.children if prep.dep_ == "prep" and prep.lower_ == "of"
                     for p in prep.children if p.dep_ == "pobj" and p.pos_ == "NOUN"), None)

    @staticmethod
    def same_verb_object(pron):
        """'I just wore my new black Converse ..., so that's six times now that I've worn them': a
        third-person object pronoun stands for the object of the same verb earlier in the utterance
        (no general coreference: only this repeated-verb pattern). None otherwise."""
        if pron.lower_ not in ("it", "them"):
            return None
        verb = pron.head
        for t in reversed(list(pron.doc[: verb.i])):
            if t.dep_ == "dobj" and t.pos_ in ("NOUN", "PROPN") and t.head.lemma_ == verb.lemma_ and t.head.i != verb.i:
                return t
        return None

    def duration(self, tok, unit, value, verb) -> None:
        """'living in Harajuku for 3 months', "it's been 3 weeks" -> a Quantity with a unit, on the
        activity it measures. Time windows ('3 months ago', 'the past 3 weeks') are no durations."""
        before = tok.doc[max(tok.i - 3, tok.sent.start) : tok.i]
        after = tok.doc[unit.i + 1] if unit.i + 1 < tok.sent.end else None
        # a window is said around the number ('the past 3 weeks', '3 months ago'); 'spent 10 hours
        # last month' is a duration followed by the window it was spent in
        window = any(t.lower_ in WINDOW_BEFORE for t in before) or (after is not None and after.lower_ in WINDOW_AFTER)
        if after is not None and after.lower_ == "old":
            return  # "my dog is 2 years old": an age (copula_adjective), not a duration
        governor = unit.head.head if unit.dep_ == "conj" else unit.head  # 'in 2 hours and 15 minutes'
        took = governor.lower_ == "in" and verb.lemma_.lower() in lx.FINISH_VERBS and verb.tag_ in ("VBD", "VBN")
        if window or (unit.head.lower_ in ("in", "within", "by", "per", "a") and not took):
            return  # 'in 3 weeks' is when, unless a finished run or task took that long
        self.used.update({tok.i, unit.i})
        thing = self.changed(unit, verb, tok)
        if thing is not None and isinstance(owner := self.node(thing), URIRef):
            self.quantity(owner, "be", unit, value, unit=lx.TIME_UNITS[unit.lemma_.lower()])
            return
        if self.owner(verb) is None:
            verb = self.previous_first_person(verb)  # "for sticking to my routine - it's been 3 weeks"
            if verb is None:
                return
        owner = self.owner(verb)
        if owner is None:
            return
        about = self.activity_object(verb)
        if took and about is None:  # "completed 30 miles in 2 hours": the 30 miles took the time
            about = next((c for c in verb.children if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN")), None)
        self.quantity(owner, verb.lemma_.lower(), unit, value, about, unit=lx.TIME_UNITS[unit.lemma_.lower()])

    def quantity(self, owner, lemma, noun, value, about=None, unit: str = "", kind: str = "", what: str = "") -> URIRef:
        """owner --verb--> Quantity(kind noun) amount value. Verbs that count the same thing share one
        node (lexicon.COUNT_VERBS), so a new count lands on the old count's functional amount. With
        no noun token (a count said by an adverb: 'twice'), `kind` and `what` name what is counted."""
        verb = lx.count_verb(lemma)
        if noun is None:
            return self.quantity_node(owner, verb, kind, "", what, self.top_class_of(kind), value, about, unit)
        kind = noun.lemma_.lower()
        named = " ".join(t.lemma_.lower() for t in self.modifiers(noun) if t.dep_ == "compound" or t.pos_ == "PROPN")
        what = (self.key(noun) or ("", noun.text))[1] if not unit else noun.text
        return self.quantity_node(owner, verb, kind, named, what, self.top_class(noun), value, about, unit)

    def quantity_node(self, owner, verb: str, kind: str, named: str, what: str, top, value, about, unit: str) -> URIRef:
        about_node = self.node(about) if about is not None else None
        about_key = self.local(about_node) if isinstance(about_node, URIRef) else ""
        if about is not None and isinstance(about_node, Literal):  # '30 miles' (a QUANTITY): the miles
            about_node, about_key = None, slug(about.lemma_.lower())
        owner_key = self.local(owner)
        tail = "duration" if unit else "count"
        q = entity(" ".join(w for w in (owner_key, verb, about_key, named, kind, tail) if w))
        about_label = (self.b.label(about_node) if about_node is not None else about.text) if about_key else ""
        label = f"{what} ({verb}{' ' + about_label if about_label else ''})"
        self.b.individual(q, label, DSM.Quantity)
        self.b.fact(q, DSM.ofKind, self.b.noun_class(kind, top))
        self.b.fact(q, DSM.amount, Literal(value))
        if unit:
            self.b.fact(q, DSM.unit, Literal(unit))
        self.b.fact(owner, self.b.relation(verb), q)
        return q

    @staticmethod
    def local(iri) -> str:
        return str(iri).rsplit("/", 1)[-1]

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

    def possessor(self, noun) -> URIRef | None:
        for t in [noun, *noun.children, *(c for c in noun.head.children)]:
            if t.dep_ == "poss" and isinstance(o := self.node(t), URIRef):
                return o
        return None

    def group_owner(self, noun) -> URIRef | None:
        """Whose a group's members are: 'my vinyl collection', 'our team' (lexicon.AGGREGATE_NOUNS);
        None for other nouns or an unowned group."""
        return self.possessor(noun) if noun.lemma_.lower() in lx.AGGREGATE_NOUNS else None

    def changed(self, phrase, verb, num=None):
        """The thing a change statement sets to the value `phrase` states ('10,000 steps', '$1,950',
        '60 days'): the object of a change verb ('bumped my daily step goal up to 10,000 steps',
        'raised my rent to $1,950'), else its subject ('my team has grown to 8 engineers', 'my streak
        just hit 60 days', 'my fund is now at $3,500'). Such a value is the thing's, as if said 'my
        rent is $1,950', so both land on one slot. None when the value is no such target, or the
        thing is the speaker ('I'm down to 172 pounds' keeps its own reading)."""
        lemma = verb.lemma_.lower()
        if verb.tag_ == "VB" and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):
            return None  # "my goal is to reach 1000 miles": an aim, not a change that happened
        marked = num is not None and any(c.dep_ == "quantmod" and c.lower_ in ("to", "at") for c in num.children)
        if marked and lemma in lx.CHANGE_VERBS:  # "bumped my goal up to 10,000 steps", parsed as the goal's appos
            if phrase.dep_ == "appos" and phrase.head.dep_ == "dobj" and phrase.head.head.i == verb.i:
                phrase = phrase.head.head  # the target is then the verb's object, found below
            elif phrase.head.i != verb.i:
                return None
        elif phrase.dep_ == "pobj" and phrase.head.lower_ in ("to", "at"):
            prep = phrase.head
            via = prep.head
            if via.i != verb.i and not (via.lower_ in ("up", "down") and via.head.i == verb.i):
                return None
            if lemma == "be" and not (prep.lower_ == "at" or via.lower_ in ("up", "down")):
                return None  # "is to ..." is no value
            if lemma != "be" and lemma not in lx.CHANGE_VERBS:
                return None
        elif not (phrase.dep_ in ("dobj", "npadvmod") and lemma in ("hit", "reach")):
            return None
        target = next((c for c in verb.children if c.dep_ == "dobj" and c.i != phrase.i), None) \
            if lemma not in ("be", "hit", "reach") else None
        thing = target if target is not None else self.subject(verb)
        if thing is None or thing.pos_ not in ("NOUN", "PROPN") or thing.i == phrase.i:
            return None
        return thing

    def activity_object(self, verb):
        """What an activity is done to or at: its direct object, else its first prepositional object."""
        obj = next((c for c in verb.children if c.dep_ in ("dobj", "attr") and c.i not in self.used
                    and c.pos_ in ("NOUN", "PROPN", "PRON")), None)
        if obj is None:
            obj = next((p for prep in verb.children if prep.dep_ == "prep" for p in prep.children
                        if p.dep_ == "pobj" and p.i not in self.used and p.pos_ in ("NOUN", "PROPN", "PRON")
                        and (prep.lower_, p.lemma_.lower()) not in lx.DISCOURSE), None)
        if obj is not None and (ante := self.antecedent(obj)) is not None:
            obj = ante  # "my gym sessions, which I go to": the sessions
        return obj if obj is not None and self.key(obj) is not None else None

    def schedule(self, tok, verb, prop, value: Literal) -> None:
        """A time, day or frequency on the activity it belongs to: an event noun it modifies ('a class
        on Fridays'), the antecedent of 'which is at 6 pm', else the clause's activity."""
        head = tok.head.head if tok.head.dep_ == "prep" else tok.head
        if head.pos_ == "NOUN" and head.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(head, verb, prop, value)
            return
        subj = self.subject(verb)
        if subj is not None and subj.pos_ == "NOUN" and subj.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(subj, None, prop, value)  # "our weekly team meeting moved to 10:30 am"
            return
        ante = self.antecedent(subj) if subj is not None else None
        if ante is not None:  # "the gym, which is usually at 6 pm": the clause the gym is in
            if ante.lemma_.lower() in lx.EVENT_NOUNS:
                self.event_fact(ante, self.anchor(ante) or verb, prop, value)
                return
            verb = self.anchor(ante)
            if verb is None:
                return
        owner = self.owner(verb)
        if owner is None:
            return
        obj = self.activity_object(verb)
        if obj is not None and obj.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(obj, verb, prop, value)
            return
        act = self.activity(owner, verb, obj)
        self.b.fact(act, prop, value)

    def event_fact(self, noun, verb, prop, value) -> None:
        event = self.node(noun)
        if not isinstance(event, URIRef):
            return
        owner = self.owner(verb) if verb is not None else None
        if owner is not None and owner != event:  # "our meeting moved to ...": the meeting does not do itself
            self.b.fact(owner, DSM.does, event)
        self.b.fact(event, prop, value)

    def activity(self, owner, verb, obj) -> URIRef:
        """The node of what the owner does ('see Dr. Smith', 'go to the gym', 'wake up')."""
        lemma = verb.lemma_.lower()
        particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
        obj_node = self.node(obj) if obj is not None else None
        has_obj = isinstance(obj_node, URIRef)
        prep = obj.head.lower_ + " " if has_obj and obj.dep_ == "pobj" else ""
        owner_key = self.local(owner)
        words = " ".join(w for w in (lemma, particle, self.local(obj_node) if has_obj else "") if w)
        label = " ".join(w for w in (lemma, particle, prep + self.b.label(obj_node) if has_obj else "") if w)
        act = entity(f"{owner_key} {words} activity")
        self.b.individual(act, label, DSM.Event)
        self.b.fact(owner, DSM.does, act)
        return act

    # -- pass 2: clauses -------------------------------------------------------------------------
    def clause(self, verb) -> None:
        subj_tok = self.subject(verb)
        if subj_tok is None:
            return
        negative = any(c.dep_ == "neg" for c in verb.children)
        lemma = verb.lemma_.lower()
        if lemma == "be":
            self.copula(verb, subj_tok, negative)
        elif lemma in lx.NAME_VERBS and any(c.dep_ == "oprd" for c in verb.children):
            self.naming(verb, subj_tok)
        elif lemma == "bear" and subj_tok.dep_ == "nsubjpass":
            self.birth(verb, subj_tok)
        else:
            self.action(verb, subj_tok, lemma, negative)

    def objects(self, verb) -> list:
        direct = [c for c in verb.children if c.dep_ in ("dobj", "attr", "oprd") and c.i not in self.used]
        # conjoined objects of the same kind only: "pizza and pasta", not "pizza and I ..."
        return direct + [c for d in direct for c in d.conjuncts if c.pos_ == d.pos_ and c.i not in self.used]

    def preps(self, verb) -> list[tuple[str, object]]:
        out = []
        if (place := self.where(verb)) is not None:
            out.append(("at", place))
        for prep in (c for c in verb.children if c.dep_ in ("prep", "dative", "agent")):
            for pobj in (c for c in prep.children if c.dep_ == "pobj" and c.i not in self.used):
                if (prep.lower_, pobj.lemma_.lower()) in lx.DISCOURSE:
                    continue  # "by the way" says nothing about the world
                out += [(prep.lemma_.lower(), p) for p in [pobj, *pobj.conjuncts] if p.i not in self.used]
        return out

    @staticmethod
    def where(verb):
        """The noun a 'where' relative clause places its verb at ('the cafe where I met Anna': met at
        the cafe). In a causative clause ('the shop where I got my guitar serviced') the place is
        also the place of the caused event (the guitar was serviced there)."""
        clause = verb
        if verb.dep_ in ("ccomp", "xcomp") and verb.tag_ in ("VBN", "VBD") and verb.head.lemma_.lower() in ("get", "have"):
            # the participle is often tagged as a past tense here ('got my guitar serviced, they're ...')
            clause = verb.head
        if clause.dep_ == "relcl" and clause.head.pos_ in ("NOUN", "PROPN") \
                and any(c.lower_ == "where" and c.dep_ == "advmod" for c in clause.children):
            return clause.head
        return None

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
            if c.dep_ == "attr" and c.i not in self.used:
                self.copula_attr(subj, subj_tok, c, negative)
            elif c.dep_ == "acomp" and not negative:
                self.copula_adjective(subj, c)
        if negative:
            return
        for prep, pobj in self.preps(verb):  # "Rachel, who's currently at TechCorp": her employer
            if self.changed_value(pobj, verb):  # "my Japan trip fund is now at $3,500"
                continue
            obj = self.node(pobj)
            if prep in ("at", "with") and pobj.ent_type_ == "ORG" and isinstance(obj, URIRef):
                self.b.fact(subj, DSM.worksFor, obj)
            elif prep in ("in", "from") and pobj.ent_type_ in ("GPE", "LOC") and isinstance(obj, URIRef) and subj_tok.lower_ in lx.FIRST:
                self.b.individual(obj, "", DSM.Place)
                self.b.fact(subj, DSM.livesIn if prep == "in" else DSM.birthPlace, obj)

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
        objects = self.objects(verb)
        if lemma == "turn" and not negative:
            objects = [o for o in objects if not self.age(subj, o)]
        preps = self.preps(verb)
        if lemma in lx.CHANGE_VERBS and not negative:
            preps = [(prep, pobj) for prep, pobj in preps if not self.changed_value(pobj, verb)]
        for obj_tok in objects:
            self.direct(subj, verb, lemma, obj_tok, negative, preps)
        for prep, pobj in preps:
            self.prepositional(subj, lemma, prep, pobj, negative, objects)

    def changed_value(self, pobj, verb) -> bool:
        """'The landlord raised my rent to $1,950 a month': the rent's value is 1950, as in 'my rent is
        $1,950' (an amount after to / at of a change verb)."""
        thing = self.changed(pobj, verb)
        value = self.node(pobj) if thing is not None else None
        node = self.node(thing) if thing is not None else None
        if not (is_amount(value) and isinstance(node, URIRef)):
            return False
        self.b.fact(node, DSM.value, value)
        return True

    def age(self, subj, obj_tok) -> bool:
        """'I just turned 32 (last month)': the number a person turned is their age (the tagger may
        read '32 last month' as one date)."""
        value = parse_number(obj_tok) if obj_tok.pos_ == "NUM" else None
        if value is None or not 0 < value < 130 or not self.personal_subject(obj_tok.head):
            return False
        self.used.add(obj_tok.i)
        self.b.fact(subj, DSM.age, Literal(value))
        return True

    def personal_subject(self, verb) -> bool:
        """A person, or someone's own ('my dog', 'my son'): what can turn an age."""
        subj = self.subject(verb)
        return subj is not None and (subj.lower_ in lx.FIRST | lx.SECOND or self.personal(subj)
                                     or (subj.pos_ == "NOUN" and any(c.dep_ == "poss" for c in subj.children)))

    def direct(self, subj, verb, lemma, obj_tok, negative, preps) -> None:
        obj = self.node(obj_tok)
        if obj is None:
            return
        fixed = self.fixed(lemma, "", obj_tok, obj)
        if fixed in (DSM.likes, DSM.dislikes):
            liked = (fixed == DSM.likes) != negative
            self.b.fact(subj, DSM.likes if liked else DSM.dislikes, obj)
        elif fixed is not None and not negative:
            self.b.fact(subj, fixed, obj)
        else:
            target = subj
            purpose = self.purpose(preps + self.preps(obj_tok)) if is_amount(obj) and not negative else None
            if purpose is not None:  # "$75 on groceries", "$250 for a food bank": the amount of that spending
                target = self.activity(subj, verb, purpose)
            self.b.fact(target, self.b.relation(lemma, datatype=isinstance(obj, Literal), negative=negative), obj)
        if obj_tok.lemma_.lower() in lx.JOB_NOUNS and lemma in lx.JOB_VERBS and not negative:
            self.employer(subj, obj_tok)
        if lemma in lx.STORE_VERBS and isinstance(obj, URIRef) and not negative:
            # "I keep my sneakers under my bed": where the sneakers are now (the place may hang on the object)
            for prep, pobj in preps + self.preps(obj_tok):
                if prep in lx.LOCATIVE_PREPS or (prep in ("to", "into") and lemma in ("move", "put", "place")):
                    place = self.place(pobj)
                    if isinstance(place, URIRef):
                        self.b.fact(obj, DSM.storedAt, place)
                        break  # the first place; 'in my bedroom closet' after 'the safe' is the safe's place

    def place(self, tok):
        """Where a thing is kept, with the place that place is in: 'the safe in my bedroom closet', 'a
        shoe rack in my closet' are one spot (the safe, not every safe); a town does not narrow it."""
        node = self.node(tok)
        inner = next((p for prep in tok.children if prep.dep_ == "prep" and prep.lower_ in lx.LOCATIVE_PREPS
                      for p in prep.children if p.dep_ == "pobj" and p.pos_ == "NOUN"), None)
        if not isinstance(node, URIRef) or inner is None or not isinstance(self.node(inner), URIRef):
            return node
        outer, key = self.key(inner), self.key(tok)
        if outer is None or key is None:
            return node
        prep = inner.head.lower_
        return self.b.individual(entity(f"{key[0]} {prep} {outer[0]}"), f"{key[1]} {prep} {outer[1]}",
                                 self.b.noun_class(tok.lemma_.lower(), self.top_class(tok)))

    def employer(self, subj, job) -> None:
        """'I just started my new job at Spotify', 'I love my internship with NASA': the name after
        'at' / 'with' a job noun is the employer (spaCy may type a company a place: any name that
        is not a person's)."""
        preps = [*job.children, *(c for c in job.head.children if job.dep_ == "dobj")]  # 'at' may hang on the verb
        for prep in (c for c in preps if c.dep_ == "prep" and c.lower_ in ("at", "with")):
            for pobj in (c for c in prep.children if c.dep_ == "pobj" and c.pos_ == "PROPN" and c.ent_type_ != "PERSON"):
                org = self.node(pobj)
                if isinstance(org, URIRef):
                    self.b.fact(subj, DSM.worksFor, org)

    def purpose(self, preps):
        """What an amount was for: the first 'on' / 'for' object that names a thing ('spent $75 on
        groceries', 'raised $250 for a local food bank'). Two amounts for different things are two
        facts, not an update of one (a new amount for the same thing still is)."""
        return next((pobj for prep, pobj in preps if prep in ("on", "for") and isinstance(self.node(pobj), URIRef)), None)

    def fixed(self, lemma: str, prep: str, tok, obj):
        """The vocabulary property for verb + preposition, checked against the object: an employer is
        an organisation (or, after 'work at/for', anything but a place noun: 'I work at home')."""
        if not isinstance(obj, URIRef):
            return None
        prop = lx.relation_for(lemma, prep)
        if prop == DSM.worksFor and not (tok.ent_type_ == "ORG" or (lemma == "work" and tok.lemma_.lower() not in lx.PLACE_NOUNS)):
            return None
        return prop

    def prepositional(self, subj, lemma, prep, pobj, negative, objects) -> None:
        obj = self.node(pobj)
        if obj is None:
            return
        fixed = self.fixed(lemma, prep, pobj, obj)
        if lemma in lx.STORE_VERBS and objects:
            return  # handled as storedAt of the object
        if fixed == DSM.livesIn and not negative:
            self.b.individual(obj, "", DSM.Place)
            self.b.fact(subj, DSM.livesIn, obj)
        elif fixed in (DSM.likes, DSM.dislikes):
            self.b.fact(subj, fixed if not negative else DSM.dislikes, obj)
        elif fixed is not None and not negative:
            self.b.fact(subj, fixed, obj)
        else:
            self.b.fact(subj, self.b.relation(f"{lemma} {prep}", datatype=isinstance(obj, Literal), negative=negative), obj)

    @staticmethod
    def span_text(tok) -> str:
        """A name with its compounds ('New York'), or the entity span it belongs to."""
        if tok.ent_type_:
            span = ent_span(tok)
            if span is not None:
                return span.text
        parts = [c for c in tok.children if c.dep_ in ("compound", "amod") and c.i < tok.i] + [tok]
        return " ".join(t.text for t in sorted(parts, key=lambda t: t.i))


__all__ = ["Clauses", "number_of"]
