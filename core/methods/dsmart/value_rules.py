"""Typed values for the clause rules (pass 1): counts, durations, clock times, days of the week and
frequencies, each hung on the slot it belongs to: a Quantity of what its owner counted, or the
activity (a habit, a class) that happens at that time or that often.

A rule family above node_rules.py and change_rules.py (which it calls); clause_rules.py calls it.
The literals themselves (numbers, clock times, durations, frequency phrases) are read by literals.py.
"""

from __future__ import annotations

from rdflib import Literal, URIRef

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.change_rules import ChangeRules
from core.methods.dsmart.context import ParseContext
from core.methods.dsmart.literals import duration_literal, frequency_phrase, parse_number, time_literal
from core.methods.dsmart.node_rules import NodeRules, ent_span, is_number
from core.methods.dsmart.vocab import DSM, entity, slug
from core.text import singular

ELIDED_REACH = 20  # tokens back to look for a 'count' noun that a bare number measures


class ValueRules:
    """Pass 1: numbers, times, days and frequencies on their slots."""

    def __init__(self, ctx: ParseContext, nodes: NodeRules, changes: ChangeRules) -> None:
        self.ctx, self.nodes, self.changes = ctx, nodes, changes

    def sentence(self, sent, question: bool) -> None:
        """Times, days and frequencies first (so 'three times a week' is no count of 'times'), then
        the numbers left."""
        for numbers in (False, True):
            for tok in sent:
                first = not numbers and (self.starts_frequency(tok) or self.starts_measure(tok))
                if tok.i in self.ctx.used or is_number(tok) != numbers and not first:
                    continue
                verb = self.nodes.anchor(tok)
                if verb is None or not self.ctx.asserted(verb, question):
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
            self.ctx.used.add(tok.i)
            self.schedule(tok, verb, DSM.onDay, Literal(singular(tok.lower_).capitalize()))
        elif (phrase := self.frequency(tok)) is not None:
            self.schedule(tok, verb, DSM.frequency, Literal(phrase))
        elif tok.lower_ in lx.OCCASIONS and tok.dep_ == "advmod" and tok.head.i == verb.i and tok.i > verb.i:
            self.occasions(tok, verb)

    def occasions(self, tok, verb) -> None:
        """'we've met up twice already': once / twice / thrice after a verb, with no 'a week' after
        them (that is a frequency), count the times it happened, on the same slot as 'met up 2
        times' ('I once met ...' is no count: the adverb comes before the verb)."""
        owner = self.nodes.owner(verb)
        if owner is None:
            return
        self.ctx.used.add(tok.i)
        self.quantity(owner, verb.lemma_.lower(), None, lx.OCCASIONS[tok.lower_], self.activity_object(verb),
                      kind="time", what="times")

    @staticmethod
    def weekday(tok) -> bool:
        if singular(tok.lower_) not in lx.WEEKDAYS:
            return False
        head = tok.head
        moved = head.lower_ == "to" and head.head.lemma_.lower() in lx.CHANGE_VERBS  # "got moved to Thursdays"
        return head.lower_ in lx.DAY_PREPS or moved or (tok.dep_ == "conj" and singular(head.lower_) in lx.WEEKDAYS) \
            or tok.dep_ == "npadvmod" or any(c.lower_ == "every" for c in tok.children)

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
        noun = self.nodes.node(root.head.head)
        if not isinstance(noun, URIRef):
            return False
        self.ctx.used.update(range(span.start, span.end))
        self.ctx.builder.fact(noun, DSM.value, value)
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
        if tok.dep_ == "pobj" and tok.head.lower_ in lx.YEAR_PREPS:
            return False
        return self.count_noun_before(tok)

    @staticmethod
    def is_clock(tok) -> bool:
        span = ent_span(tok)
        return span is not None and any(time_literal(tok.doc[span.start : end].text) is not None
                                        for end in range(span.end, span.start, -1))

    def clock(self, tok) -> Literal | None:
        span = ent_span(tok)
        if span is None or span.start != tok.i:
            return None
        for end in range(span.end, span.start, -1):  # '6:30 am before work': the tagger's span runs on
            literal = time_literal(tok.doc[span.start : end].text)
            if literal is not None:
                self.ctx.used.update(range(span.start, end))
                return literal
        return None

    def frequency(self, tok) -> str | None:
        if tok.lower_ not in ("every", *lx.OCCASIONS) and tok.lower_ not in lx.FREQUENCY_ADVERBS \
                and not self.starts_frequency(tok):
            return None
        if tok.lower_ in lx.FREQUENCY_ADVERBS and tok.dep_ == "amod" and tok.head.lemma_.lower() not in lx.EVENT_NOUNS:
            return None  # "my daily routine" names the routine; "my weekly tennis sessions" schedules them
        start = tok.i
        window = tok.doc[max(start, tok.sent.start) : min(tok.i + 4, tok.sent.end)]
        phrase = frequency_phrase(window)
        if phrase is not None:
            self.ctx.used.update(t.i for t in window if t.lower_ in ("every", "other", "once", "twice", "thrice", "times",
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
        if self.nodes.name_number(tok):
            return  # 'a Dell XPS 13': a model number, part of the name
        before = [t.lower_ for t in tok.doc[max(tok.i - 3, tok.sent.start) : tok.i]]
        if before and (before[-1] == "not" or " ".join(before[-2:]) in lx.SET_ASIDE):
            return  # "120 stars, not 300": the number set aside
        noun = tok.head if tok.dep_ in ("nummod", "amod", "quantmod") and tok.head.pos_ in ("NOUN", "PROPN") else None
        if noun is None and tok.dep_ in ("appos", "npadvmod", "nummod") and tok.head.pos_ == "NOUN" and tok.head.i < tok.i:
            noun = tok.head  # "page 200", "level 100", "episode 10"
        if noun is None and self.setting_of(tok) is not None:
            noun = self.setting_of(tok)  # "a sensitivity of 6", "my GPA of 3.8"
        if noun is None and verb.lemma_.lower() == "turn":
            return  # "I just turned 32": an age, read by the clause (`action`)
        if noun is not None and any(c.lower_ in lx.INCREMENT for c in noun.children):
            return  # "8 more postcards": an increment, not the count so far
        if noun is not None and noun.dep_ == "poss" and noun.head.pos_ == "NOUN":
            noun = noun.head  # "two free night's stays": the stays are counted
        if noun is not None and noun.lemma_.lower() in lx.TIME_UNITS:
            self.duration(tok, noun, value, verb)
            return
        if noun is None and not (tok.dep_ == "dobj" or (tok.dep_ == "pobj" and self.count_noun_before(tok))):
            return  # a bare number elsewhere ("I'm 30", "top 10") names no count
        if noun is not None and noun.lemma_.lower() == "one":
            self.ctx.used.add(noun.i)  # "17 new ones": 'ones' stands for the elided noun
            noun = None
        if noun is None:
            noun = self.elided(tok)
            if noun is None:
                return
        self.ctx.used.update({tok.i, noun.i} if noun.sent.start == tok.sent.start else {tok.i})
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
        thing = self.changes.changed(noun, verb, tok)
        if thing is not None and isinstance(owner := self.nodes.node(thing), URIRef):
            # "my team has grown to 8 engineers": as "my team is 8 engineers"; a group's members are its
            # owner's ("our board game collection has grown to 31 games": we have 31 games)
            if (mine := self.nodes.group_owner(thing)) is not None:
                self.quantity(mine, "have", noun, value)
                return
            q = self.quantity(owner, "be", noun, value)
            # "I'm changing my coffee limit to two cups", "reducing your coffee intake to one cup": the
            # cups are also whoever changed the thing's, or whose the thing is
            actor = self.nodes.owner(verb) if thing.dep_ == "dobj" else None
            actor = actor if actor is not None else self.nodes.possessor(thing)
            if actor is not None and actor != owner:
                self.ctx.builder.fact(actor, self.ctx.builder.relation(verb.lemma_.lower()), q)
            return
        owner = self.nodes.owner(verb)
        lemma = verb.lemma_.lower()
        about_verb = verb
        if owner is None and lemma == "be":  # "that's six times now that I've worn them", "that's 15 baseballs"
            # or a clause before it: "I finished another one yesterday, so that's 15 books this year"
            inner = self.nodes.first_person_clause(verb)
            subj = self.nodes.subject(verb)
            if inner is None and verb.dep_ != "relcl" and subj is not None and subj.lower_ in lx.DEMONSTRATIVES:
                inner = self.nodes.previous_first_person(verb)  # not "..., which is about 10 miles": a relative says what a thing is
            if inner is not None:
                owner = self.nodes.owner(inner)
                lemma = inner.lemma_.lower() if noun.lemma_.lower() == "time" else "have"
                about_verb = inner if noun.lemma_.lower() == "time" else verb
        if owner is None or lemma == "be":
            mine = self.nodes.possessor(noun)  # "... brings my total species count to 32", "here's my 17 postcards"
            if mine is not None:
                owner, lemma = mine, ("have" if lemma == "be" else lemma)
        if owner is None or self.nodes.node(noun) == owner:
            return  # "27 species is a great achievement": nobody's count
        subj = self.nodes.subject(about_verb)
        measure = None
        if lemma == "be" and noun.lemma_.lower() in lx.MEASURE_OF and subj is not None \
                and (subj.lower_ in lx.FIRST | lx.SECOND or self.nodes.personal(subj)):
            # "I'm down to 198 pounds": what the speaker weighs ('I weigh 210 pounds': one slot), their weight
            lemma, measure = lx.MEASURE_OF[noun.lemma_.lower()]
        if subj is not None and (mine := self.nodes.group_owner(subj)) is not None:
            owner, lemma = mine, "have"  # "our collection has 25 board games": we have 25 board games
        about = self.measured_stuff(noun)
        if about is None:
            about = next((self.same_verb_object(o) if o.pos_ == "PRON" else o for o in about_verb.children
                          if o.dep_ in ("dobj", "attr") and o.pos_ in ("NOUN", "PROPN", "PRON")
                          and o.i != noun.i and o.i not in self.ctx.used), None)
        q = self.quantity(owner, lemma, noun, value, about)
        if measure is not None:
            self.ctx.builder.fact(owner, self.ctx.builder.relation(measure), q)
        restated = self.restated(about_verb, noun)
        if restated is not None and isinstance(named := self.nodes.node(restated), URIRef):
            self.quantity(named, "be", noun, value)  # "I ran 11 miles, my longest run yet": my longest run is 11 miles

    @staticmethod
    def restated(verb, noun):
        """'I ran 11 miles on Sunday, my longest run yet': an owned noun phrase set off by a comma after
        a count (in apposition to it or to its clause) names what the count also is. None otherwise."""
        for c in [*noun.children, *verb.children]:
            start = c.left_edge.i
            if c.dep_ in ("appos", "dep", "npadvmod") and c.pos_ == "NOUN" and c.i > noun.i and start > 0 \
                    and c.doc[start - 1].text == "," and any(g.dep_ == "poss" for g in c.children):
                return c
        return None

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
        if pron.lower_ not in lx.OBJECT_PRONOUNS:
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
        window = any(t.lower_ in lx.WINDOW_BEFORE for t in before) or (after is not None and after.lower_ in lx.WINDOW_AFTER)
        if after is not None and after.lower_ == "old":
            return  # "my dog is 2 years old": an age (copula_adjective), not a duration
        governor = unit.head.head if unit.dep_ == "conj" else unit.head  # 'in 2 hours and 15 minutes'
        took = governor.lower_ == "in" and verb.lemma_.lower() in lx.FINISH_VERBS and verb.tag_ in ("VBD", "VBN")
        if window or (unit.head.lower_ in lx.WHEN_PREPS and not took):
            return  # 'in 3 weeks' is when, unless a finished run or task took that long
        self.ctx.used.update({tok.i, unit.i})
        thing = self.changes.changed(unit, verb, tok)
        if thing is not None and isinstance(owner := self.nodes.node(thing), URIRef):
            self.quantity(owner, "be", unit, value, unit=lx.TIME_UNITS[unit.lemma_.lower()])
            return
        if self.nodes.owner(verb) is None:
            verb = self.nodes.previous_first_person(verb)  # "for sticking to my routine - it's been 3 weeks"
            if verb is None:
                return
        owner = self.nodes.owner(verb)
        if owner is None:
            return
        about = self.activity_object(verb)
        if took and about is None:  # "completed 30 miles in 2 hours": the 30 miles took the time
            about = next((c for c in verb.children if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN")), None)
        self.quantity(owner, verb.lemma_.lower(), unit, value, about, unit=lx.TIME_UNITS[unit.lemma_.lower()])

    def quantity(self, owner, lemma, noun, value, about=None, unit: str = "", kind: str = "", what: str = "") -> URIRef:
        """owner --verb--> Quantity(kind noun) amount value. Verbs that count the same thing share one
        node (word_lists.COUNT_VERBS), so a new count lands on the old count's functional amount. With
        no noun token (a count said by an adverb: 'twice'), `kind` and `what` name what is counted."""
        verb = lx.count_verb(lemma)
        if noun is None:
            return self.quantity_node(owner, verb, kind, "", what, self.nodes.top_class_of(kind), value, about, unit)
        kind = noun.lemma_.lower()
        named = " ".join(t.lemma_.lower() for t in self.nodes.modifiers(noun) if t.dep_ == "compound" or t.pos_ == "PROPN")
        what = (self.nodes.key(noun) or ("", noun.text))[1] if not unit else noun.text
        return self.quantity_node(owner, verb, kind, named, what, self.nodes.top_class(noun), value, about, unit)

    def quantity_node(self, owner, verb: str, kind: str, named: str, what: str, top, value, about, unit: str) -> URIRef:
        about_node = self.nodes.node(about) if about is not None else None
        about_key = self.nodes.local(about_node) if isinstance(about_node, URIRef) else ""
        if about is not None and isinstance(about_node, Literal):  # '30 miles' (a QUANTITY): the miles
            about_node, about_key = None, slug(about.lemma_.lower())
        owner_key = self.nodes.local(owner)
        tail = "duration" if unit else "count"
        q = entity(" ".join(w for w in (owner_key, verb, about_key, named, kind, tail) if w))
        about_label = (self.ctx.builder.label(about_node) if about_node is not None else about.text) if about_key else ""
        label = f"{what} ({verb}{' ' + about_label if about_label else ''})"
        self.ctx.builder.individual(q, label, DSM.Quantity)
        self.ctx.builder.fact(q, DSM.ofKind, self.ctx.builder.noun_class(kind, top))
        self.ctx.builder.fact(q, DSM.amount, Literal(value))
        if unit:
            self.ctx.builder.fact(q, DSM.unit, Literal(unit))
        self.ctx.builder.fact(owner, self.ctx.builder.relation(verb), q)
        return q

    def activity_object(self, verb):
        """What an activity is done to or at: its direct object, else its first prepositional object."""
        obj = next((c for c in verb.children if c.dep_ in ("dobj", "attr") and c.i not in self.ctx.used
                    and c.pos_ in ("NOUN", "PROPN", "PRON")), None)
        if obj is None:
            obj = next((p for prep in verb.children if prep.dep_ == "prep" for p in prep.children
                        if p.dep_ == "pobj" and p.i not in self.ctx.used and p.pos_ in ("NOUN", "PROPN", "PRON")
                        and (prep.lower_, p.lemma_.lower()) not in lx.DISCOURSE), None)
        if obj is not None and (ante := self.nodes.antecedent(obj)) is not None:
            obj = ante  # "my gym sessions, which I go to": the sessions
        return obj if obj is not None and self.nodes.key(obj) is not None else None

    def schedule(self, tok, verb, prop, value: Literal) -> None:
        """A time, day or frequency on the activity it belongs to: an event noun it modifies ('a class
        on Fridays'), the antecedent of 'which is at 6 pm', else the clause's activity."""
        head = tok.head.head if tok.head.dep_ == "prep" else tok.head
        if head.pos_ == "NOUN" and head.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(head, verb, prop, value)
            return
        subj = self.nodes.subject(verb)
        if subj is not None and subj.pos_ == "NOUN" and subj.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(subj, None, prop, value)  # "our weekly team meeting moved to 10:30 am"
            return
        ante = self.nodes.antecedent(subj) if subj is not None else None
        if ante is not None:  # "the gym, which is usually at 6 pm": the clause the gym is in
            if ante.lemma_.lower() in lx.EVENT_NOUNS:
                self.event_fact(ante, self.nodes.anchor(ante) or verb, prop, value)
                return
            verb = self.nodes.anchor(ante)
            if verb is None:
                return
        owner = self.nodes.owner(verb)
        if owner is None:
            return
        obj = self.activity_object(verb)
        if obj is not None and obj.lemma_.lower() in lx.EVENT_NOUNS:
            self.event_fact(obj, verb, prop, value)
            return
        act = self.activity(owner, verb, obj)
        self.ctx.builder.fact(act, prop, value)

    def event_fact(self, noun, verb, prop, value) -> None:
        event = self.nodes.node(noun)
        if not isinstance(event, URIRef):
            return
        owner = self.nodes.owner(verb) if verb is not None else None
        if owner is not None and owner != event:  # "our meeting moved to ...": the meeting does not do itself
            self.ctx.builder.fact(owner, DSM.does, event)
        self.ctx.builder.fact(event, prop, value)

    def activity(self, owner, verb, obj) -> URIRef:
        """The node of what the owner does ('see Dr. Smith', 'go to the gym', 'wake up')."""
        lemma = verb.lemma_.lower()
        particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
        obj_node = self.nodes.node(obj) if obj is not None else None
        has_obj = isinstance(obj_node, URIRef)
        prep = obj.head.lower_ + " " if has_obj and obj.dep_ == "pobj" else ""
        owner_key = self.nodes.local(owner)
        words = " ".join(w for w in (lemma, particle, self.nodes.local(obj_node) if has_obj else "") if w)
        label = " ".join(w for w in (lemma, particle, prep + self.ctx.builder.label(obj_node) if has_obj else "") if w)
        act = entity(f"{owner_key} {words} activity")
        self.ctx.builder.individual(act, label, DSM.Event)
        self.ctx.builder.fact(owner, DSM.does, act)
        return act
