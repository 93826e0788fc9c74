"""Change statements for the clause rules: a value that a change verb sets ('raised my rent to
$1,950', 'my team has grown to 8 engineers', 'my streak hit 60 days') is the changed thing's value,
as if said 'my rent is $1,950', so the new value lands on the old one's slot; ages turned; and roles
held in a group ('elected president of my book club'), one value per holder and group, so a new
role replaces the old one.

A rule family above node_rules.py (which it calls); value_rules.py and clause_rules.py call it.
"""

from __future__ import annotations

from rdflib import Literal, URIRef

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.context import ParseContext
from core.methods.dsmart.literals import is_amount, parse_number
from core.methods.dsmart.node_rules import NodeRules
from core.methods.dsmart.vocab import DSM, entity


class ChangeRules:
    """What a change verb changes, and to what."""

    def __init__(self, ctx: ParseContext, nodes: NodeRules) -> None:
        self.ctx, self.nodes = ctx, nodes

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
            elif phrase.head.i != verb.i and not (phrase.head.lower_ in lx.DIRECTION_PARTICLES and phrase.head.head.i == verb.i):
                return None  # "bumped my salary up to $85,000": 'up' may take the number itself
        elif phrase.dep_ == "pobj" and phrase.head.lower_ in ("to", "at"):
            prep = phrase.head
            via = prep.head
            if via.i != verb.i and not (via.lower_ in ("up", "down") and via.head.i == verb.i):
                return None
            if lemma == "be" and not (prep.lower_ == "at" or via.lower_ in ("up", "down")):
                return None  # "is to ..." is no value
            if lemma != "be" and lemma not in lx.CHANGE_VERBS and lemma not in lx.TOTAL_VERBS:
                return None  # "the bill came to $95", "it amounted to $300": a total, the subject's value
        elif not (phrase.dep_ in ("dobj", "npadvmod") and lemma in lx.REACH_VERBS):
            return None
        target = next((c for c in verb.children if c.dep_ == "dobj" and c.i != phrase.i), None) \
            if lemma not in ("be", *lx.REACH_VERBS) else None
        thing = target if target is not None else self.nodes.subject(verb)
        if thing is None or thing.pos_ not in ("NOUN", "PROPN") or thing.i == phrase.i:
            return None
        return thing

    def changed_value(self, pobj, verb) -> bool:
        """'The landlord raised my rent to $1,950 a month': the rent's value is 1950, as in 'my rent is
        $1,950' (an amount after to / at of a change verb)."""
        thing = self.changed(pobj, verb, pobj if pobj.pos_ == "NUM" else None)
        value = self.nodes.node(pobj) if thing is not None else None
        node = self.nodes.node(thing) if thing is not None else None
        if not (is_amount(value) and isinstance(node, URIRef)):
            return False
        self.ctx.builder.fact(node, DSM.value, value)
        return True

    def age(self, subj, obj_tok) -> bool:
        """'I just turned 32 (last month)': the number a person turned is their age (the tagger may
        read '32 last month' as one date)."""
        value = parse_number(obj_tok) if obj_tok.pos_ == "NUM" else None
        if value is None or not 0 < value < 130 or not self.personal_subject(obj_tok.head):
            return False
        self.ctx.used.add(obj_tok.i)
        self.ctx.builder.fact(subj, DSM.age, Literal(value))
        return True

    def personal_subject(self, verb) -> bool:
        """A person, or someone's own ('my dog', 'my son'): what can turn an age."""
        subj = self.nodes.subject(verb)
        return subj is not None and (subj.lower_ in lx.FIRST | lx.SECOND or self.nodes.personal(subj)
                                     or (subj.pos_ == "NOUN" and any(c.dep_ == "poss" for c in subj.children)))

    def role(self, verb, subj_tok, negative: bool) -> bool:
        """A role the subject holds: a noun it is or becomes ('I'm the treasurer of my book club'),
        is elected / appointed / promoted to ('I was elected president of my book club', 'I got
        promoted to sous chef at the bistro'), or works / serves as ('I work as a line cook at a
        bistro'), with the group it is of / at / in. After 'be' / 'become' the group must be one
        (word_lists.GROUP_NOUNS or an organisation): 'a fan of jazz' holds no role. The role is the
        value of one node per holder and group ('user's role in book club'); the value is
        functional, so a new role in the same group replaces the old one."""
        if negative:
            return False
        lemma = verb.lemma_.lower()
        held = self.held_role(verb, lemma)
        if held is None:
            return False
        group, prep = self.role_group(held, verb)
        if lemma in ("be", "become") and (group is None or not (group.lemma_.lower() in lx.GROUP_NOUNS
                                                                 or group.ent_type_ in ("ORG", "FAC"))):
            return False
        holder = self.nodes.node(subj_tok)  # only now: naming a token declares its individual
        if not isinstance(holder, URIRef):
            return False
        group_node = self.nodes.node(group) if group is not None else None
        key, label = f"{self.nodes.local(holder)} role", f"{self.ctx.builder.label(holder)}'s role"
        if isinstance(group_node, URIRef):
            key, label = f"{key} {self.nodes.local(group_node)}", f"{label} {prep} {self.ctx.builder.label(group_node)}"
        node = self.ctx.builder.individual(entity(key), label, DSM.Thing)
        self.ctx.builder.fact(holder, DSM.has, node)
        self.ctx.builder.fact(node, DSM.value, Literal(self.nodes.span_text(held).lower()))
        return True

    @staticmethod
    def held_role(verb, lemma: str):
        """The role noun of a role statement (see `role`), or None."""
        if lemma in ("be", "become"):
            deps, preps = ("attr",), ()
        elif lemma in lx.ROLE_VERBS:
            deps, preps = ("oprd", "attr"), ("to",)
        elif lemma in lx.AS_ROLE_VERBS:
            deps, preps = (), ("as",)
        else:
            return None
        for c in verb.children:
            if c.dep_ in deps and c.pos_ == "NOUN":
                return c
            if c.dep_ == "prep" and c.lower_ in preps:
                return next((p for p in c.children if p.dep_ == "pobj" and p.pos_ == "NOUN"), None)
        return None

    @staticmethod
    def role_group(held, verb):
        """(group token, preposition) a role is held in: the first of / at / in ... object of the role
        noun, else of the verb; (None, '') when there is none."""
        for head in (held, verb):
            for prep in (c for c in head.children if c.dep_ == "prep" and c.lower_ in lx.ROLE_GROUP_PREPS):
                pobj = next((p for p in prep.children if p.dep_ == "pobj" and p.pos_ in ("NOUN", "PROPN")), None)
                if pobj is not None:
                    return pobj, prep.lower_
        return None, ""

