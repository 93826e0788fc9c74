"""The extractor's word lists (its lexicon): the small, explicit substitute for Framester's
supersenses, the function words its rules read, and the table of (verb, preposition) pairs that
paraphrases meet on. Words only: the RDF terms they map to (the `DSM` namespace, the ontology) are
in vocab.py.

`RELATIONS` maps (verb lemma, preposition) to a fixed DSM property, so "live in", "moved to",
"relocated to" and "settled in" all give `dsm:livesIn` (functional: a second value is a conflict).
`COUNT_VERBS` puts verbs that count the same thing in one class ("completed 4 projects" / "finished
my 5th project"), so the two counts land on one Quantity node and its functional amount.
"""

from __future__ import annotations

from core.methods.dsmart.vocab import DSM
from core.text import NUMBER_WORDS, ORDINAL_WORDS, WEEKDAYS  # noqa: F401  (the package's one table, read here as lx.*)

PERSON_NOUNS = frozenset(
    "person man woman boy girl friend sister brother mother father mom dad parent son daughter wife husband "
    "partner boyfriend girlfriend spouse colleague coworker boss manager teacher doctor child kid baby aunt "
    "uncle cousin grandmother grandfather grandma grandpa neighbor neighbour roommate coach student therapist "
    "tutor mentor instructor trainer niece nephew granddaughter grandson fiance fiancee".split()
)
# he / she stand for the one person noun of their gender the utterance names before them (node_rules.py)
FEMALE_NOUNS = frozenset("woman girl sister mother mom mum wife girlfriend daughter aunt niece grandmother grandma "
                         "granddaughter stepmother stepdaughter".split())
MALE_NOUNS = frozenset("man boy brother father dad husband boyfriend son uncle nephew grandfather grandpa grandson "
                       "stepfather stepson".split())
THIRD_PERSON = {**dict.fromkeys("she her hers herself".split(), "female"),
                **dict.fromkeys("he him his himself".split(), "male")}
PLACE_NOUNS = frozenset(
    "city town country village place home house apartment flat room office park restaurant cafe shop store "
    "street road beach lake mountain island state region neighborhood neighbourhood closet kitchen garage "
    "bedroom basement school university gym studio harbor harbour shelf drawer cabinet rack bed desk".split()
)
EVENT_NOUNS = frozenset("trip party meeting class lesson course event concert game match wedding vacation holiday "
                        "tournament race workshop conference session appointment practice rehearsal training "
                        "league club".split())
TIME_NOUNS = frozenset("day week month year hour minute second morning evening night weekend time".split())

FIRST = frozenset("i me my mine myself we us our ours ourselves".split())
SECOND = frozenset("you your yours yourself yourselves".split())
RELATIVE = frozenset("who which that whom".split())
# aux verbs that make a clause hypothetical or advisory: it asserts nothing about the world
HYPOTHETICAL = frozenset("would could should might may must".split())
# words that ask: a clause they open asks for a value, it states none ('what my mother's name is');
# not 'when' ('remember when I got pre-approved ...' recalls an event, it is no question)
WH_WORDS = frozenset("what who whom whose which where why how".split())
# verbs whose wh-clause is an indirect question ("I don't know what your mother's name is"); after
# another verb it is a statement ("that's what my smartwatch shows", "I see what you mean")
ASKING_VERBS = frozenset("know wonder ask tell remember forget recall guess sure unsure idea check find".split())
# a sentence opened by one of these, its subject after it, asks ('Is my dog called Rex', no '?'; spaCy splits "isn't")
QUESTION_AUX = frozenset("do does did is are am was were can could would will should shall may might have has had".split())

# units: a number of these measures an amount or a duration, it does not count things
TIME_UNITS = {"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week",
              "month": "month", "year": "year", "weekend": "weekend"}
MEASURE_UNITS = frozenset("pound kilogram kg lb mile kilometer km meter foot inch ounce gram liter cup tablespoon "
                          "dollar euro percent calorie step".split())
# what a person who *is* N of these units measures: "I'm at 210 pounds" is what I weigh, my weight
# (the verb that measures it, the noun it is)
MEASURE_OF = {**dict.fromkeys("pound kilogram kg lb kilo stone".split(), ("weigh", "weight")),
              **dict.fromkeys("centimeter cm".split(), ("measure", "height"))}
# "weekly" / "daily": the frequency words that stand alone
FREQUENCY_ADVERBS = {"daily": "every day", "weekly": "every week", "monthly": "every month", "yearly": "every year",
                     "annually": "every year", "nightly": "every night", "biweekly": "every other week"}
# nouns that name a count of their compound: "my total species count", "my follower count"
COUNT_NOUNS = frozenset("count total number tally".split())

# -- the closed relation vocabulary -------------------------------------------------------------------
# (verb lemma, preposition or "" for a direct object) -> fixed property. A preposition of None
# matches any. Object constraints (place, organisation) are checked by the extractor.
RELATIONS: dict[tuple[str, str | None], object] = {}


def _add(prop, verbs: str, preps: str | None) -> None:
    for verb in verbs.split():
        for prep in (preps.split() if preps else [None]):
            RELATIONS[(verb, prep)] = prop


_add(DSM.livesIn, "live reside relocate move settle base", "in to at")
_add(DSM.worksFor, "work", "at for")
_add(DSM.worksFor, "join employ hire", "")  # "I joined Google", "Google hired me" (passive: "hired by")
_add(DSM.hasSpouse, "marry", "to")
_add(DSM.likes, "like love enjoy adore prefer", "")
_add(DSM.dislikes, "dislike hate detest", "")
_add(DSM.has, "have own possess", "")

# "finished a 5K in 35 minutes": after these verbs in the past, 'in N minutes' is the time it took
FINISH_VERBS = frozenset("finish complete run swim ride cycle bike walk hike row solve beat do".split())
STORE_VERBS = frozenset("keep store put leave hang place move stash display".split())
LOCATIVE_PREPS = frozenset("in under on at inside behind near above below beside next by over".split())
NAME_VERBS = frozenset("call name".split())
# verbs that set a thing to a new value: "raised my rent to $1,950", "my team has grown to 8 engineers",
# "my streak just hit 60 days"; the value is the thing's, as in "my rent is $1,950"
CHANGE_VERBS = frozenset("raise increase bump boost up cut reduce lower decrease drop grow rise climb jump fall shrink "
                         "go hit reach change move shift adjust bring push double halve".split())
# verbs of totalling: "the bill came to $95", "the repairs amounted to $300" state their subject's value
TOTAL_VERBS = frozenset("come amount total".split())
# verbs that say only that a value changed, nothing of the slot: "my goal is 8,000 steps" and "I've cut
# down to 1 cup of coffee a day" name their slots by what they count, not by the verb
VALUE_VERBS = frozenset("be raise increase bump boost cut reduce lower decrease grow rise climb jump fall shrink "
                        "change adjust".split())
# groups whose members are their owner's: "my vinyl collection is up to 120 records" counts my records
AGGREGATE_NOUNS = frozenset("collection library team staff crew squad fleet stash".split())
# nouns whose 'at X' names an employer: "my new job at Spotify", "an internship with NASA"
JOB_NOUNS = frozenset("job position role internship post career".split())
# verbs that hold such a job ("I want a job at Google", "applying for a role at X" hold none)
JOB_VERBS = frozenset("start begin get land take accept have love like enjoy hate".split())
DISCOURSE = frozenset({("by", "way"), ("for", "while"), ("in", "fact"), ("of", "course"), ("speak", "of")})


def relation_for(verb: str, prep: str) -> object | None:
    """The fixed property a verb (+ preposition) normalises to, or None (a minted relation)."""
    return RELATIONS.get((verb, prep), RELATIONS.get((verb, None)))


# verbs that count the same thing, by class ("I completed 4 projects", "I finished my 5th project")
_COUNT_CLASSES = {
    "finish": "finish complete wrap",
    "have": "have own get",
    "add": "add collect acquire buy purchase gather",
    "watch": "watch view",
    "read": "read",
    "attend": "attend",
    "lose": "lose shed drop",
    "spend": "spend put invest",
    "make": "make cook bake brew prepare try",
    "visit": "visit",
    "reach": "reach hit",
    "write": "write",
}
COUNT_VERBS = {v: canon for canon, verbs in _COUNT_CLASSES.items() for v in verbs.split()}


def count_verb(lemma: str) -> str:
    return COUNT_VERBS.get(lemma, lemma)


# -- function words the clause rules read (core/methods/dsmart/node_rules.py, value_rules.py, clause_rules.py) --
INCREMENT = frozenset("more another additional extra".split())  # "8 more postcards": an increment, not the count
OCCASIONS = {"once": 1, "twice": 2, "thrice": 3}  # 'met up twice': a count of times, said by an adverb
WINDOW_BEFORE = frozenset("last past next previous".split())  # "in the past 3 weeks", "the last 2 years": a window
WINDOW_AFTER = frozenset("ago before earlier".split())  # "3 months ago": a window, no duration
WHEN_PREPS = frozenset("in within by per a".split())  # "in 3 weeks", "3 times a week": when or how often, no duration
YEAR_PREPS = frozenset("in since by until from of during before after".split())  # "in 2020": a year, no count
SET_ASIDE = ("instead of", "rather than")  # "120 stars, rather than 300": the number set aside
DEMONSTRATIVES = frozenset("that this it".split())  # "that's 15 books": the count of the clause before
OBJECT_PRONOUNS = frozenset("it them".split())  # "... that I've worn them": the object of the same verb before
DAY_PREPS = frozenset("on every".split())  # "on Mondays", "every Sunday"
INTENSIFIERS = frozenset("very really so quite".split())  # no part of a thing's name
FACILITY_PREPS = frozenset("on at in".split())  # "the music shop on Main St": placed by a facility name
CONDITIONAL_MARKS = frozenset("if unless whether".split())  # "if I ...": asserts nothing
SAVE_VERBS = frozenset("save".split())  # "saved $1,200 for our honeymoon": the value of the honeymoon fund
FUND_NOUN = "fund"
PURPOSE_PREPS = frozenset("on for".split())  # "$75 on groceries": what an amount was for
EMPLOYER_PREPS = frozenset("at with".split())  # "my job at Spotify", "an internship with NASA"
PUT_VERBS = frozenset("move put place".split())  # "moved my passport to the drawer": 'to' places it too
CAUSATIVE_VERBS = frozenset("get have".split())  # "where I got my guitar serviced": the caused event is there too
REACH_VERBS = frozenset("hit reach".split())  # "my streak hit 60 days": the subject's value
DIRECTION_PARTICLES = frozenset("up down".split())  # "bumped my rent up to $2,250": 'to N' hangs on the particle

# -- roles and replacements (issue 29: general treatments of the written batches' misses) --------------
# verbs that give their subject a role: 'elected president of', 'appointed treasurer', 'promoted to sous chef'
ROLE_VERBS = frozenset("elect appoint name make promote vote choose select".split())
# verbs whose 'as' object is the subject's role: 'I work as a line cook', 'I serve as secretary'
AS_ROLE_VERBS = frozenset("work serve act volunteer".split())
# groups a role is held in, when the verb is only 'be' / 'become' ('the treasurer of my book club');
# 'a fan of jazz' names no group
GROUP_NOUNS = frozenset("club association society committee board council team company band church school league "
                        "union group organization organisation firm agency department chapter guild troop choir "
                        "orchestra crew staff lab".split())
ROLE_GROUP_PREPS = frozenset("of at in for with on".split())
# replacement verbs: (preposition of the old thing or '' for the object, preposition of the new thing);
# 'switched to Y' names only the new thing
REPLACE_VERBS = {"switch": ("from", "to"), "trade": ("in", "for"), "replace": ("", "with"), "swap": ("", "for"),
                 "exchange": ("", "for"), "upgrade": ("from", "to")}
# the fixed properties a replaced thing hands on to its replacement (minted relations are handed on too)
REPLACED_PROPERTIES = frozenset({DSM.has, DSM.worksFor, DSM.likes})
