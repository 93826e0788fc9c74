"""The local extractor's clause rules: one utterance's spaCy parse -> triples in a FragmentBuilder.

Two passes per sentence. `ValueRules.sentence` (value_rules.py) first finds the typed values (counts,
durations, clock times, days of the week, frequencies) and hangs each on the slot it belongs to: a
Quantity of what its owner counted, or the activity (a habit, a class) that happens at that time or
that often. Then `ClauseRules.clause` (this file) reads subject-verb-object, copula, naming, birth and
prepositional patterns over the tokens the first pass left, normalising relations through the closed
vocabulary (word_lists.RELATIONS).

The rules come in families, each a small class given the parse context (context.py: the builder,
the speaker, the tokens used) and the lower families it calls, never a higher one:

    NodeRules (node_rules.py)  <-  ChangeRules (change_rules.py)  <-  ValueRules (value_rules.py)
        <-  ClauseRules (this file)

`read` composes them for one utterance. Every rule is listed, with an example and its test, in
core/methods/dsmart/rules.py (`python -m core dsm-rules --markdown`, docs/dsm-updates.md).

What a clause asserts (`ParseContext.asserted`): statements, including first-person subordinate
clauses of a question ("considering I wake up at 7:30 on Saturdays?"); not the question itself, not
hypothetical or conditional clauses ("I could", "if I"), not the assistant's advice.
"""

from __future__ import annotations

from rdflib import Literal, URIRef

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.change_rules import ChangeRules
from core.methods.dsmart.context import ParseContext, is_question
from core.methods.dsmart.fragment import FragmentBuilder
from core.methods.dsmart.literals import is_amount, parse_number
from core.methods.dsmart.node_rules import CLAUSE, NodeRules
from core.methods.dsmart.value_rules import ValueRules
from core.methods.dsmart.vocab import DSM, entity


def read(doc, builder: FragmentBuilder, speaker: str) -> None:
    """The triples one utterance's parse asserts, said by `speaker`, into `builder`."""
    ctx = ParseContext(builder, speaker)
    nodes = NodeRules(ctx)
    changes = ChangeRules(ctx, nodes)
    ClauseRules(ctx, nodes, changes, ValueRules(ctx, nodes, changes)).sentences(doc)


class ClauseRules:
    """Pass 2: what each asserted clause of a parse says, after pass 1 (`ValueRules`) per sentence."""

    def __init__(self, ctx: ParseContext, nodes: NodeRules, changes: ChangeRules, values: ValueRules) -> None:
        self.ctx, self.nodes, self.changes, self.values = ctx, nodes, changes, values

    def sentences(self, doc) -> None:
        for sent in doc.sents:
            question = is_question(sent)
            self.values.sentence(sent, question)
            for tok in sent:
                if tok.pos_ in CLAUSE and tok.dep_ not in ("aux", "auxpass") and self.ctx.asserted(tok, question):
                    self.clause(tok)

    def clause(self, verb) -> None:
        subj_tok = self.nodes.subject(verb)
        if subj_tok is None:
            return
        negative = any(c.dep_ == "neg" for c in verb.children)
        lemma = verb.lemma_.lower()
        if self.former(verb):
            # "I used to drive a Fiat": a past habit or state, not a current fact; its relation says so
            # ('used to drive'), so it neither stands for the current value nor takes a current one's slot
            negative = negative or any(c.dep_ == "neg" for c in verb.head.children)  # "didn't use to"
            self.action(verb, subj_tok, f"used to {lemma}", negative)
            return
        self.changes.role(verb, subj_tok, negative)  # a role held in a group, besides what the clause says
        if lemma == "be":
            self.copula(verb, subj_tok, negative)
        elif lemma in lx.NAME_VERBS and any(c.dep_ == "oprd" for c in verb.children):
            self.naming(verb, subj_tok)
        elif lemma == "bear" and subj_tok.dep_ == "nsubjpass":
            self.birth(verb, subj_tok)
        else:
            self.action(verb, subj_tok, lemma, negative)

    @staticmethod
    def former(verb) -> bool:
        """Whether the verb is governed by 'used to' ('I used to drive', "we didn't use to keep"): the
        xcomp of a past 'use' that has no object ('I used the knife to cut' is a purpose)."""
        head = verb.head
        if verb.dep_ != "xcomp" or head.i == verb.i or head.lemma_.lower() != "use":
            return False
        if not any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):
            return False
        past = head.tag_ == "VBD" or any(c.dep_ == "aux" and c.lemma_.lower() == "do" for c in head.children)
        return past and not any(c.dep_ in ("dobj", "dative") for c in head.children)

    def objects(self, verb) -> list:
        direct = [c for c in verb.children if c.dep_ in ("dobj", "attr", "oprd") and c.i not in self.ctx.used]
        # conjoined objects of the same kind only: "pizza and pasta", not "pizza and I ..."
        return direct + [c for d in direct for c in d.conjuncts if c.pos_ == d.pos_ and c.i not in self.ctx.used]

    def preps(self, verb) -> list[tuple[str, object]]:
        out = []
        if (place := self.where(verb)) is not None:
            out.append(("at", place))
        # 'bumped our rent up to $2,250', "I'm down to 198 pounds": the 'to' of 'up to' / 'down to' hangs
        # on the particle, and is the verb's
        heads = [verb, *(c for c in verb.children if c.lower_ in lx.DIRECTION_PARTICLES and c.dep_ in ("prep", "advmod", "prt"))]
        for prep in (c for h in heads for c in h.children if c.dep_ in ("prep", "dative", "agent")
                     and (h.i == verb.i or c.lower_ in ("to", "at"))):
            for pobj in (c for c in prep.children if c.dep_ == "pobj" and c.i not in self.ctx.used):
                if (prep.lower_, pobj.lemma_.lower()) in lx.DISCOURSE:
                    continue  # "by the way" says nothing about the world
                out += [(prep.lemma_.lower(), p) for p in [pobj, *pobj.conjuncts] if p.i not in self.ctx.used]
        return out

    @staticmethod
    def where(verb):
        """The noun a 'where' relative clause places its verb at ('the cafe where I met Anna': met at
        the cafe). In a causative clause ('the shop where I got my guitar serviced') the place is
        also the place of the caused event (the guitar was serviced there)."""
        clause = verb
        if verb.dep_ in ("ccomp", "xcomp") and verb.tag_ in ("VBN", "VBD") and verb.head.lemma_.lower() in lx.CAUSATIVE_VERBS:
            # the participle is often tagged as a past tense here ('got my guitar serviced, they're ...')
            clause = verb.head
        if clause.dep_ == "relcl" and clause.head.pos_ in ("NOUN", "PROPN") \
                and any(c.lower_ == "where" and c.dep_ == "advmod" for c in clause.children):
            return clause.head
        return None

    def copula(self, verb, subj_tok, negative: bool) -> None:
        owner = next((c for c in subj_tok.children if c.dep_ == "poss"), None)
        if owner is not None and subj_tok.lemma_.lower() in ("name", "age"):
            subj = self.nodes.node(owner)  # "my name is Alice" is about me, not about an individual "my name"
            subj_tok = owner
        else:
            subj = self.nodes.node(subj_tok)
        if subj is None or isinstance(subj, Literal):
            return
        for c in verb.children:
            if c.dep_ == "attr" and c.i not in self.ctx.used:
                self.copula_attr(subj, subj_tok, c, negative)
            elif c.dep_ == "acomp" and not negative:
                self.copula_adjective(subj, c)
        if negative:
            return
        for prep, pobj in self.preps(verb):  # "Rachel, who's currently at TechCorp": her employer
            if self.changes.changed_value(pobj, verb):  # "my Japan trip fund is now at $3,500"
                continue
            obj = self.nodes.node(pobj)
            if prep in lx.EMPLOYER_PREPS and pobj.ent_type_ == "ORG" and isinstance(obj, URIRef):
                self.ctx.builder.fact(subj, DSM.worksFor, obj)
            elif prep in ("in", "from") and pobj.ent_type_ in ("GPE", "LOC") and isinstance(obj, URIRef) and subj_tok.lower_ in lx.FIRST:
                self.ctx.builder.individual(obj, "", DSM.Place)
                self.ctx.builder.fact(subj, DSM.livesIn if prep == "in" else DSM.birthPlace, obj)

    def copula_attr(self, subj: URIRef, subj_tok, attr, negative: bool) -> None:
        if negative or attr.lower_ in lx.WH_WORDS:
            return  # "X is not Y" says what X is not, "what X is" asks: nothing to assert
        about_owner = subj_tok.head.lemma_.lower() if subj_tok.dep_ == "poss" else ""
        if about_owner == "name":
            self.ctx.builder.fact(subj, DSM.name, Literal(self.nodes.span_text(attr)))  # "my name is Alice"
        elif about_owner == "age" and parse_number(attr) is not None:
            self.ctx.builder.fact(subj, DSM.age, Literal(parse_number(attr)))
        elif attr.pos_ == "PROPN" and subj_tok.pos_ == "NOUN":
            self.ctx.builder.fact(subj, DSM.name, Literal(self.nodes.span_text(attr)))  # "my dog is Rex"
        elif attr.pos_ == "NOUN" and subj_tok.pos_ == "NOUN" and subj_tok.lemma_.lower() != "user":
            self.ctx.builder.fact(subj, DSM.value, Literal(self.nodes.span_text(attr)))  # "my favourite food is pizza"
        elif attr.pos_ == "NOUN":
            # "Paris is the capital of France", "I am a teacher": a type, plus the attr's of-relations
            self.ctx.builder.individual(subj, "", self.ctx.builder.noun_class(attr.lemma_.lower(), self.nodes.top_class(attr)))
            for prep, pobj in self.preps(attr):
                obj = self.nodes.node(pobj)
                if obj is not None:
                    relation = self.ctx.builder.relation(f"{attr.lemma_} {prep}", datatype=isinstance(obj, Literal))
                    self.ctx.builder.fact(subj, relation, obj)
        elif attr.pos_ == "NUM" and (value := parse_number(attr)) is not None:
            # "my niece Lily is 6": a person's bare number is their age
            prop = DSM.age if self.nodes.personal(subj_tok) and 0 < value < 130 else DSM.value
            self.ctx.builder.fact(subj, prop, Literal(value))

    def copula_adjective(self, subj: URIRef, adj) -> None:
        if adj.lemma_.lower() == "old":  # "I'm 30 years old"
            for t in adj.subtree:
                if t.pos_ == "NUM" and (value := parse_number(t)) is not None:
                    self.ctx.builder.fact(subj, DSM.age, Literal(value))
                    return
        if adj.pos_ == "ADJ":
            self.ctx.builder.fact(subj, DSM.quality, Literal(adj.lemma_.lower()))

    def naming(self, verb, subj_tok) -> None:
        """'my dog is called Max' (passive) or 'I named my dog Max' (active)."""
        name = next(c for c in verb.children if c.dep_ == "oprd")
        target_tok = next((c for c in verb.children if c.dep_ == "dobj"), None)
        target_tok = target_tok if target_tok is not None else subj_tok
        target = self.nodes.node(target_tok)
        if isinstance(target, URIRef):
            self.ctx.builder.fact(target, DSM.name, Literal(self.nodes.span_text(name)))

    def birth(self, verb, subj_tok) -> None:
        subj = self.nodes.node(subj_tok)
        if not isinstance(subj, URIRef):
            return
        for _, pobj in self.preps(verb):
            obj = self.nodes.node(pobj)
            if isinstance(obj, Literal):
                self.ctx.builder.fact(subj, DSM.birthDate, obj)
            elif isinstance(obj, URIRef):
                self.ctx.builder.individual(obj, "", DSM.Place)
                self.ctx.builder.fact(subj, DSM.birthPlace, obj)

    def action(self, verb, subj_tok, lemma: str, negative: bool) -> None:
        subj = self.nodes.node(subj_tok)
        if not isinstance(subj, URIRef):
            return
        objects = self.objects(verb)
        if lemma == "turn" and not negative:
            objects = [o for o in objects if not self.changes.age(subj, o)]
        preps = self.preps(verb)
        if (lemma in lx.CHANGE_VERBS or lemma in lx.TOTAL_VERBS) and not negative:
            preps = [(prep, pobj) for prep, pobj in preps if not self.changes.changed_value(pobj, verb)]
        for obj_tok in objects:
            self.direct(subj, verb, lemma, obj_tok, negative, preps)
        for prep, pobj in preps:
            self.prepositional(subj, lemma, prep, pobj, negative, objects)

    def direct(self, subj, verb, lemma, obj_tok, negative, preps) -> None:
        obj = self.nodes.node(obj_tok)
        if obj is None:
            return
        fixed = self.fixed(lemma, "", obj_tok, obj)
        if fixed in (DSM.likes, DSM.dislikes):
            liked = (fixed == DSM.likes) != negative
            self.ctx.builder.fact(subj, DSM.likes if liked else DSM.dislikes, obj)
        elif fixed is not None and not negative:
            self.ctx.builder.fact(subj, fixed, obj)
        else:
            target = subj
            purpose = self.purpose(preps + self.preps(obj_tok)) if is_amount(obj) and not negative else None
            if purpose is not None and lemma in lx.SAVE_VERBS and self.fund(subj, purpose, obj):
                return  # "$1,200 saved for our honeymoon": the honeymoon fund's value
            if purpose is not None:  # "$75 on groceries", "$250 for a food bank": the amount of that spending
                target = self.values.activity(subj, verb, purpose)
            relation = self.ctx.builder.relation(lemma, datatype=isinstance(obj, Literal), negative=negative)
            self.ctx.builder.fact(target, relation, obj)
        if obj_tok.lemma_.lower() in lx.JOB_NOUNS and lemma in lx.JOB_VERBS and not negative:
            self.employer(subj, obj_tok)
        if lemma in lx.STORE_VERBS and isinstance(obj, URIRef) and not negative:
            # "I keep my sneakers under my bed": where the sneakers are now (the place may hang on the object)
            spots = preps + self.preps(obj_tok)
            goal = lemma in lx.PUT_VERBS and any(prep in ("to", "into") for prep, _ in spots)
            for prep, pobj in sorted(spots, key=lambda s: goal and s[0] not in ("to", "into")):
                if prep in lx.LOCATIVE_PREPS or (prep in ("to", "into") and lemma in lx.PUT_VERBS):
                    # "moved the key to a lockbox by the back door": the goal, placed by the verb's locative
                    around = next((p for q, p in preps if goal and q in lx.LOCATIVE_PREPS and p.i > pobj.i), None)
                    place = self.nodes.place(pobj, around)
                    if isinstance(place, URIRef):
                        self.ctx.builder.fact(obj, DSM.storedAt, place)
                        break  # the first place; 'in my bedroom closet' after 'the safe' is the safe's place

    def employer(self, subj, job) -> None:
        """'I just started my new job at Spotify', 'I love my internship with NASA': the name after
        'at' / 'with' a job noun is the employer (spaCy may type a company a place: any name that
        is not a person's)."""
        preps = [*job.children, *(c for c in job.head.children if job.dep_ == "dobj")]  # 'at' may hang on the verb
        for prep in (c for c in preps if c.dep_ == "prep" and c.lower_ in lx.EMPLOYER_PREPS):
            for pobj in (c for c in prep.children if c.dep_ == "pobj" and c.pos_ == "PROPN" and c.ent_type_ != "PERSON"):
                org = self.nodes.node(pobj)
                if isinstance(org, URIRef):
                    self.ctx.builder.fact(subj, DSM.worksFor, org)

    def fund(self, saver, purpose, amount) -> bool:
        """"I've saved $1,200 for our honeymoon": money saved for a purpose is the value of the
        purpose's fund ('our honeymoon fund is at $2,000'), one slot whichever way it is said."""
        key = self.nodes.key(purpose)
        if key is None or purpose.lemma_.lower() == lx.FUND_NOUN:
            return False
        fund = self.ctx.builder.individual(entity(f"{key[0]} {lx.FUND_NOUN}"), f"{key[1]} {lx.FUND_NOUN}",
                                 self.ctx.builder.noun_class(lx.FUND_NOUN, DSM.Thing))
        self.ctx.builder.fact(saver, DSM.has, fund)
        self.ctx.builder.fact(fund, DSM.value, amount)
        return True

    def purpose(self, preps):
        """What an amount was for: the first 'on' / 'for' object that names a thing ('spent $75 on
        groceries', 'raised $250 for a local food bank'). Two amounts for different things are two
        facts, not an update of one (a new amount for the same thing still is)."""
        return next((pobj for prep, pobj in preps
                     if prep in lx.PURPOSE_PREPS and isinstance(self.nodes.node(pobj), URIRef)), None)

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
        obj = self.nodes.node(pobj)
        if obj is None:
            return
        fixed = self.fixed(lemma, prep, pobj, obj)
        if pobj.lemma_.lower() in lx.JOB_NOUNS and lx.REPLACE_VERBS.get(lemma, ("", ""))[1] == prep and not negative:
            self.employer(subj, pobj)  # "I switched to a clinic job at Kaiser": a job one switches to is held
        if lemma in lx.STORE_VERBS and objects:
            return  # handled as storedAt of the object
        if fixed == DSM.livesIn and not negative:
            self.ctx.builder.individual(obj, "", DSM.Place)
            self.ctx.builder.fact(subj, DSM.livesIn, obj)
        elif fixed in (DSM.likes, DSM.dislikes):
            self.ctx.builder.fact(subj, fixed if not negative else DSM.dislikes, obj)
        elif fixed is not None and not negative:
            self.ctx.builder.fact(subj, fixed, obj)
        else:
            relation = self.ctx.builder.relation(f"{lemma} {prep}", datatype=isinstance(obj, Literal), negative=negative)
            self.ctx.builder.fact(subj, relation, obj)

