"""Answers about the user held to what the user told (issue 52): asked "What's my wife's name?" by
someone who never said it, a small model answers with a name anyway: the user's own, another
relative's, one it made up. The chat opening asks it to say it wasn't told; the 1.5B does so
rarely (docs/replies.md). This is the reply check's test for such an answer. Pure functions over
text; no model.

A message is a **fact question** when its last question asks what, which, where, who, whose,
when, how many, how old, how long or how much, not with a modal after it ("What should I cook?"
asks for advice, not a fact) nor for the assistant's view ("what do you think"), and it is about
the user's world: a first-person word ("my", "I", "we") or a name from the user's earlier
messages ("What does Sindre do?").

A sentence of the reply **claims** an answer when it does not decline (core.metrics.abstention)
and either shares a word with the question, or opens with a pronoun or the question's name, or is
a few words with a name or number in them ("In Bergen.", not "Noted."), or a few words alone
("Yanis.", "A dog.": the first word counts as a name when capitalised and no function word; an
acknowledgement such as "Noted." or "Oh, lovely!" answers nothing). Its **value** is what it adds to
the question: its names and numbers (capitalised words after the first, digits) if it has any,
else its other content words; a claim that only says no ("You don't have a cat.") has the value NOT,
told only by an earlier message that says no about the question's topic ("We never had pets").

The claim is **told** when an earlier user message holds a word of its value. Where the question
names a relation ("wife" in "What is my wife's name?"), one sentence of it must hold the relation
too, or a sentence that opens with a pronoun and the sentence before it ("My sister Leyla lives in
Rotterdam. She's a dentist."): "My name is Samuel. I farm the land my father farmed." does not tell
a father called Samuel, nor "Our mother is planning a dinner. I'm to keep Itziar off drones." a
mother called Itziar. So is a name asked of a thing the user wrote of ("What's our cat called?"),
and not when the sentence gives the name to something else ("a beagle called Biscuit and a young
collie" names no collie);
where the value is a name and the question's words are all things the user never wrote of
("born", "cat", "favourite film"), the message must also hold another word of the claim ("You're a
vegetarian since sixteen" is told by "I'm a vegetarian since I was sixteen"), or it is not told: "Your wife's name is Efua."
after "My granddaughter Efua studies medicine" and "My wife and I have been married for forty-one
years" is not told, and neither is a birthplace when the user never spoke of being born. Words
that only name the kind of answer (job, city, age, ...) need not be there: "What's my job?" is
answered by "I'm an electrician". Words are compared as crude stems
(core.metrics.reply_defects.stem), a word of the same family alike (the first seven letters:
"dentistry" answers what "dentist" told); a paraphrase with no word in common ("nurse" for "I work on a
ward") reads as untold, so the test is loose on purpose: one shared word of the value is enough.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.metrics.abstention import declines
from core.metrics.reply_defects import FIRST_PERSON, PERSON_NOUNS, STOPWORDS, stem
from core.text import split_sentences, words

DECLINE = "You haven't told me that."

_WH = ("what", "what's", "whats", "which", "where", "where's", "who", "who's", "whose", "when")
_HOW = frozenset({"many", "old", "long", "much"})  # "how many", "how old", ...: "how do I" asks for a way
_MODALS = frozenset({"should", "could", "would", "can", "might", "shall", "may", "must", "ought"})
_OPINION = frozenset({"think", "recommend", "suggest", "reckon", "mean", "like", "prefer", "advise"})
# the asking, not the fact asked for: "what's my daughter's name again, do you remember?"
_ASKING = frozenset(stem(w) for w in """name named call called remember recall again tell told know knew quick check
    forget before mention mentioned said say exactly please anything something thing sure question ask wonder remind
    curious""".split()) | frozenset(_WH)
# the kind of answer asked for, not a fact of its own: the user need not have written the word
_SLOTS = frozenset(stem(w) for w in """job work living profession occupation career city town country place live
    home part area age old year kind type sort day time colour color""".split())
_RELATIONS = frozenset(stem(w) for w in PERSON_NOUNS)
_SUBJECTS = frozenset("""you your you're you've you'll he his she her they their we our i my
    he's she's they're""".split()) | FIRST_PERSON  # "I'm forty-one." answers as the user too
_LEAD_IN = 6  # words before the question word: "Quick check before I forget: what ..."
_RECALL_WORDS = 30  # a longer message is talk or a request for help, not a recall question
_SHORT = 4  # words: "It was Anna." / "In Bergen." answer with a name whatever they share with the question
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NEGATIONS = frozenset({"no", "not", "never", "none", "nobody", "nothing", "neither", "nor"})
# a short reply of these words acknowledges or exclaims: it gives no value ("Noted.", "Oh, lovely!")
_ACKNOWLEDGED = STOPWORDS | frozenset("""noted note sure ok okay alright right yes yeah yep got it understood thanks thank
    great good nice lovely wonderful cool interesting wow oh ah hmm indeed absolutely certainly course fine perfect
    thing sounds exciting fun amazing awesome glad hello hi hey welcome""".split())
_NO_NAMES = STOPWORDS | _SUBJECTS  # a short reply's capitalised first word that is no name ("The", "You")
NOT = "<not>"  # the value of a claim that only says no, and a key of every user message that says no


def question_of(message: str) -> str:
    """The message's last sentence that ends in a question mark ("" when it asks nothing)."""
    asked = [s for s in split_sentences(message) if s.rstrip().endswith("?")]
    return asked[-1] if asked else ""


def asked_part(question: str) -> list[str]:
    """The words of `question` from its question word on, when that word opens it or a short
    lead-in ("Quick check before I forget: what ...", "And what's ...", "Tell me, where ..."), and
    is not followed by a modal ("What should I cook?" asks for advice) nor asks the assistant's view
    ("What do you think ..."); [] otherwise."""
    tokens = words(question.replace("\u2019", "'"))
    for i, token in enumerate(tokens[:_LEAD_IN + 1]):
        if token in _WH or (token == "how" and i + 1 < len(tokens) and tokens[i + 1] in _HOW):
            asked = tokens[i:]
            if any(t in _MODALS for t in asked[1:4]):
                return []
            if any(a == "you" and b in _OPINION for a, b in zip(asked, asked[1:])):
                return []
            return asked
    return []


def user_names(user_messages: Sequence[str]) -> frozenset[str]:
    """Stems of the capitalised words the user wrote after a sentence's first word."""
    found = set()
    for message in user_messages:
        for sentence in split_sentences(message):
            tokens = _TOKEN.findall(sentence)
            found |= {_key(_bare(t)) for t in tokens[1:] if t[0].isupper() and t != "I"}
    return frozenset(found)


def fact_question(message: str, earlier_user: Sequence[str]) -> str:
    """The question of `message` when it asks for a fact of the user's world, else "". A recall
    question is short; a paragraph that asks for help ("... what are the most likely problems?")
    is not one, however it is worded."""
    if len(words(message)) > _RECALL_WORDS:
        return ""
    question = question_of(message)
    asked = asked_part(question) if question else []
    if not asked:
        return ""
    if any(t in FIRST_PERSON or t in ("me", "us") for t in asked):
        return question
    return question if {_key(_bare(t)) for t in asked} & user_names(earlier_user) else ""


_NUMBERS = {w: str(i) for i, w in enumerate("""zero one two three four five six seven eight nine ten eleven twelve
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen""".split())} | {
    w: str(10 * i) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}


def _bare(token: str) -> str:
    """A word without its possessive: "daughter's" is "daughter", "what's" is "what"."""
    return token[:-2] if token.endswith("'s") else token


def _key(token: str) -> str:
    """A word's stem, a number word as its digits ("two" and "2" are one value)."""
    return _NUMBERS.get(token.lower(), stem(token))


def _stems(text: str) -> frozenset[str]:
    """The content words of `text` as keys (core.metrics.saying_back.content_stems, numbers as digits)."""
    tokens = (_bare(t) for t in words(text.replace("\u2019", "'").replace("_", " ")))
    return frozenset(_key(t) for t in tokens if t and t not in STOPWORDS)


def _names(sentence: str, first: int = 1) -> frozenset[str]:
    """Stems of the capitalised words from the `first`-th on (after the sentence's first word, whose
    capital says nothing), and the numbers (words or digits)."""
    tokens = _TOKEN.findall(sentence.replace("\u2019", "'"))
    return frozenset(_key(_bare(t)) for i, t in enumerate(tokens)
                     if any(c.isdigit() for c in t) or t.lower() in _NUMBERS or (i >= first and t[0].isupper() and t != "I"))


def negates(text: str) -> bool:
    """Whether `text` says no, not, never or n't."""
    return any(t in _NEGATIONS or t.endswith("n't") for t in words(text.replace("\u2019", "'")))


def _asked_keys(question: str) -> frozenset[str]:
    """The question's words as keys, function words too: what a claim adds is what is not here."""
    return _stems(question) | {_key(_bare(t)) for t in words(question)}


def _lead_name(sentence: str, asked: frozenset[str]) -> frozenset[str]:
    """The sentence's first word as a name, when it is capitalised, no function word or subject
    ("The", "You") and not a word of the question (`asked`, `_asked_keys`); else empty."""
    first = _TOKEN.findall(sentence.replace("\u2019", "'"))[:1]
    if first and first[0][0].isupper() and first[0].lower() not in _NO_NAMES:
        return frozenset({_key(_bare(first[0]))}) - asked
    return frozenset()


def claim_value(sentence: str, question: str, lead_name: bool = False) -> tuple[frozenset[str], bool]:
    """What `sentence` says beyond `question` (stems), and whether that is names and numbers (else
    content words); empty when it makes no claim that answers the question. A short reply is an
    answer by its words alone ("Yanis.", "A dog."): its first word counts as a name when it is
    capitalised and no function word. A claim that only says no ("You don't have a cat.") is
    NOT: the user must have said no about it too."""
    if sentence.rstrip().endswith("?") or declines(sentence):
        return frozenset(), False
    asked = _asked_keys(question)
    mine = _stems(sentence) - _ASKING
    tokens = words(sentence.replace("\u2019", "'"))
    names = _names(sentence, first=0 if lead_name else 1) - asked  # `lead_name`: its first word is read as a name too
    short = len(tokens) <= _SHORT and not set(tokens) <= _ACKNOWLEDGED  # "Noted.", "Sure thing!" answer nothing
    if short and not names:
        names = _lead_name(sentence, asked)
    answers = bool(mine & asked) or (tokens and tokens[0] in _SUBJECTS) or (tokens and _key(tokens[0]) in asked) \
        or (short and bool(names or mine - asked))
    if not answers:
        return frozenset(), False
    if names:
        return names, True
    if mine - asked:
        return mine - asked, False
    return (frozenset({NOT}), False) if negates(sentence) else (frozenset(), False)


TOLD, UNTOLD, NO_CLAIM = "told", "untold", "no claim"


_ASKS_NAME = frozenset(stem(w) for w in "name named call called who whose".split())  # the answer is a name
# the question says "name" or "called": a person, a pet, a firm, a boat is named in the answer. "who"
# is not among them: "Who did I go with?" is answered by "your sister"
_NAME_WORDS = frozenset(stem(w) for w in "name named names call called".split())


def asks_for_name(question: str) -> bool:
    """Whether `question` asks for a name in so many words ("What's my flatmate's name?", "What's
    our cat called?"): an answer that gives none ("It's a drone start-up.", "The other guy is a
    physics student.") has not answered it."""
    return bool(_NAME_WORDS & {_key(_bare(t)) for t in words(question.replace("\u2019", "'"))})


_FAMILY = 7  # letters two words share at their start to be one word's family ("dentist", "dentistry")


def _holds(value: frozenset[str], words_of: frozenset[str]) -> bool:
    """Whether a message's words hold a word of `value`, or of its family: the crude stems keep
    "dentistry" and "dentist" apart, "carpentry" and "carpenter" too, and the one answers what the
    other told."""
    if value & words_of:
        return True
    return any(len(v) >= _FAMILY and len(w) >= _FAMILY and v[:_FAMILY] == w[:_FAMILY] for v in value for w in words_of)


# a sentence opening with one of these speaks of someone the sentence before named
_REFERRING = frozenset("he she his her they their them he's she's they're it its it's".split())


@dataclass(frozen=True)
class SaidWords:
    """The user's earlier messages as the keys an answer is looked up in (content words, names and
    numbers, NOT when it says no): each message whole, and each sentence (joined to the one before
    when it opens with a pronoun), where a relation's fact must be told. Made once per reply."""

    messages: tuple[frozenset[str], ...]
    sentences: tuple[frozenset[str], ...]
    naming: tuple[dict[str, str], ...]  # per sentence, the names it gives to things, {name: thing}


def _keys(text: str) -> frozenset[str]:
    return _stems(text) | _names(text) | ({NOT} if negates(text) else frozenset())


_NAMING = re.compile(r"\b([a-z]+) (?:called|named) ([A-Z][\w'-]*)")  # "a beagle called Biscuit"


def _sentence_units(message: str) -> list[tuple[frozenset[str], dict[str, str]]]:
    """Per sentence of `message`: its keys, and the names it gives to things ({name: thing}, as
    keys). A sentence opening with a pronoun ("She's a dentist.") carries the keys of the sentence
    before it, whom the pronoun names."""
    out: list[tuple[frozenset[str], dict[str, str]]] = []
    for i, sentence in enumerate(split_sentences(message)):
        text = sentence.replace("\u2019", "'")
        keys = _keys(sentence)
        first = words(text)[:1]
        if i and first and first[0] in _REFERRING:
            keys |= out[-1][0]
        out.append((keys, {_key(_bare(name)): _key(thing) for thing, name in _NAMING.findall(text)}))
    return out


def _named_for_other(value: frozenset[str], naming: dict[str, str], things: frozenset[str]) -> bool:
    """Whether a sentence gives a name of `value` to something other than `things`: "a grumpy old
    beagle called Biscuit and a young collie" names no collie Biscuit."""
    return any(v in naming and naming[v] not in things for v in value)


def said_words(earlier_user: Sequence[str]) -> SaidWords:
    units = [unit for m in earlier_user for unit in _sentence_units(m)]
    return SaidWords(tuple(_keys(m) for m in earlier_user), tuple(k for k, _ in units), tuple(n for _, n in units))


def answer_kind(sentence: str, question: str, said_by_user: SaidWords, lead_name: bool = False) -> str:
    """TOLD, UNTOLD, or NO_CLAIM (the sentence answers nothing: a remark, a question back, a
    decline); `said_by_user` is `said_words` of the user's earlier messages; `lead_name`: the
    sentence's capitalised first word is a name of the claim too."""
    value, named = claim_value(sentence, question, lead_name)
    if not value:
        return NO_CLAIM
    said = said_by_user.messages
    topic = _stems(question) - _ASKING - _SLOTS
    if value == {NOT}:  # "You don't have a cat.": told only by a message that says no about the same thing
        told = any(NOT in words_of and (not topic or topic & words_of) for words_of in said)
    elif named and topic and not topic & frozenset().union(*said):
        # asked about a thing never spoken of (a birthplace, a cat): a name the user wrote is told
        # only with more of the claim beside it ("a vegetarian since sixteen"), not alone ("born in
        # Bergen"); words naming the kind of answer are no more of it ("forty-one years old" to "When
        # is my birthday?"). A claim in other words is left to stand: "Your car is blue." to "What
        # colour is my car?" after "I drive a blue Toyota" is told in words the question does not use
        context = _stems(sentence) - value - _stems(question) - _ASKING - _SLOTS
        told = any(_holds(value, words_of) and context & words_of for words_of in said)
    else:
        # a relation's fact must be told with the relation, in one sentence; so must a name asked of
        # a thing the user wrote of ("What's our cat called?")
        bound = topic & _RELATIONS
        if named and _ASKS_NAME & _stems(question):
            bound = bound | (topic & frozenset().union(*said))
        units = said_by_user.sentences if bound else said
        if bound:
            told = any(_holds(value, words_of) and bound & words_of and not _named_for_other(value, naming, bound)
                       for words_of, naming in zip(units, said_by_user.naming))
        else:
            told = any(_holds(value, words_of) for words_of in units)
        if not told and named and not _ASKS_NAME & _stems(question):
            # a name beside the answer ("Sofia plays the violin in Glasgow's orchestra." to "What
            # instrument does my wife play?"): the answer is its other words, told with the relation
            rest = _stems(sentence) - _ASKING - _stems(question) - value
            told = bool(rest) and any(_holds(rest, words_of) and (not bound or bound & words_of)
                                      for words_of in units)
    return TOLD if told else UNTOLD


def gives_told_name(sentence: str, question: str, said_by_user: SaidWords) -> bool:
    """Whether `sentence` answers a name question with a name the user told: a told claim whose
    value is a name, or whose first word is one ("Biscuit is your beagle's name.": a claim's names
    are read after its first word, where a capital means nothing else)."""
    if claim_value(sentence, question)[1]:
        return answer_kind(sentence, question, said_by_user) == TOLD
    # the first word as the name, held to what a name must be told with ("Jonah is your older
    # brother." is no answer when Jonah was never told as the brother)
    return bool(_lead_name(sentence, _asked_keys(question))) \
        and answer_kind(sentence, question, said_by_user, lead_name=True) == TOLD


def gives_no_name(sentences: Sequence[str], question: str, said_by_user: SaidWords) -> bool:
    """A reply to a name question with no name told by the user in it, no decline and no question
    back: it talks around the name it does not have ("It's a drone start-up." is told, and is no
    name), and "You haven't told me that." is what it should say."""
    for sentence in sentences:
        if sentence.rstrip().endswith("?") or declines(sentence):
            return False
        if gives_told_name(sentence, question, said_by_user):
            return False
    return True
