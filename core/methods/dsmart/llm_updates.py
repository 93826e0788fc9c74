"""The LLM on candidate updates only (issue 29, item 3): where the symbolic path suspects an update it
could not type, one call asks the model which known fact the message changes and to what value.

A round is a candidate when, after the symbolic stages found no conflict in it:
- a slot pair is unmatched: an old and a new count (or habit) of the same owner and kind with
  another value, whose descriptions the slot stage did not find to be one slot ('my commute is 25
  minutes' / 'my bike commute takes 40 minutes');
- a change verb is untyped: the user's clause has a change, total or replacement verb
  (word_lists.CHANGE_VERBS, TOTAL_VERBS, REPLACE_VERBS) and no value or replacement came of it;
- a number is untyped: the user states a number that no literal of the fragment carries ('he told
  me he has earned 5 merit badges now', with 'he' unresolved).
The model sees at most MAX_FACTS old facts: the unmatched pair's old values, else the facts whose
labels share a word with the user's sentence. Its answer is kept only when the value is in the
user's words (a 0.5B model copies numbers from the facts it is shown). The old fact is pruned (rule
"llm-update", kept in the history) and the new value asserted on the same subject and relation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef

from core.llm.base import LLM, Message
from core.llm.prompts import render_prompt
from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.slots import SlotMatcher, candidate_pairs
from core.methods.dsmart.vocab import DSM, RELATION_BASE, entity, label_of
from core.text import NUMBER_WORDS, singular, split_sentences

MAX_FACTS = 8
MAX_SENTENCE_CHARS = 400
SCHEMA = {"type": "object", "required": ["fact", "value"],
          "properties": {"fact": {"type": "integer"}, "value": {"type": ["string", "number"]}}}
_NUMBER = re.compile(r"(?<![\w:.-])\$?(\d[\d,]*(?:\.\d+)?)(?![\w:]|-\w)")
_WORD = re.compile(r"[a-z][a-z'-]+")
_YEAR = re.compile(r"^(19|20)\d\d$")
_STOP = frozenset("the and but with for from that this have has had was were are is been being just now about "
                  "what which when where how your you my our their them they she her his him its it's i'm i've "
                  "so far some any very really also".split())
CHANGE_LEMMAS = lx.CHANGE_VERBS | lx.TOTAL_VERBS | frozenset(lx.REPLACE_VERBS)


@dataclass(frozen=True)
class Suspect:
    why: str  # "slot pair" | "change verb" | "untyped number"
    sentence: str
    facts: tuple  # old triples the message may give a new value for


def numbers(text: str) -> set[float]:
    """Numbers a text states: digits (not clock times, years or parts of names like '5K') and number words."""
    out = {float(m.group(1).replace(",", "")) for m in _NUMBER.finditer(text) if not _YEAR.match(m.group(1))}
    return out | {float(NUMBER_WORDS[w]) for w in _WORD.findall(text.lower()) if w in NUMBER_WORDS}


def words(text: str) -> set[str]:
    return {singular(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def fact_words(graph: Graph, triple) -> set[str]:
    s, p, o = triple
    out = words(label_of(graph, s)) | words(re.sub(r"([a-z])([A-Z])", r"\1 \2", label_of(graph, p)))
    kind = graph.value(s, DSM.ofKind)
    return out | (words(label_of(graph, kind)) if kind is not None else set()) | \
        (words(label_of(graph, o)) if isinstance(o, URIRef) else set())


def value_facts(old: Graph) -> list:
    """Old facts that carry a value a message could change: literals (amounts, values, times, ages)
    and the speaker's relations to named things."""
    return [t for t in old if is_fact(t) and t[1] != RDF.type and (isinstance(t[2], Literal) or
            (str(t[1]).startswith(RELATION_BASE) or t[1] in (DSM.worksFor, DSM.livesIn, DSM.storedAt)))]


def related(old: Graph, sentence: str, numeric: bool = False) -> tuple:
    """The old facts whose labels share most words with the sentence (at most MAX_FACTS); with
    `numeric`, only facts with a number (an untyped number can only update one)."""
    wanted = words(sentence)
    facts = [t for t in value_facts(old) if not numeric or isinstance(t[2], Literal) and isinstance(t[2].toPython(), (int, float))]
    scored = [(len(fact_words(old, t) & wanted), t) for t in facts]
    scored = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], str(x[1])))
    return tuple(t for _, t in scored[:MAX_FACTS])


def suspects(old: Graph, fragment: Graph, user_text: str, matcher: SlotMatcher, found: list) -> list[Suspect]:
    """The round's candidate updates (see the module docstring); none when the symbolic path
    already found an update, or the user said nothing."""
    if found or not user_text.strip() or len(old) == 0:
        return []
    text = user_text[:2000]
    out = []
    for pair, prop, stale in candidate_pairs(old, fragment, matcher):
        if not pair.matched:
            facts = tuple((pair.old, prop, v) for v in stale)[:MAX_FACTS]
            return [Suspect("slot pair", text[:MAX_SENTENCE_CHARS], facts)]
    for sentence in split_sentences(text):
        typed = {float(o.toPython()) for o in fragment.objects() if isinstance(o, Literal)
                 and isinstance(o.toPython(), (int, float))}
        lemmas = {label_of(fragment, p).split()[0] for _, p, _ in fragment if str(p).startswith(RELATION_BASE)}
        if numbers(sentence) - typed:
            why = "untyped number"
        elif lemmas & CHANGE_LEMMAS:
            why = "change verb"
        else:
            continue
        facts = related(old, sentence, numeric=why == "untyped number")
        if facts:
            out.append(Suspect(why, sentence[:MAX_SENTENCE_CHARS], facts))
    return out[:1]  # one call a round at most


def describe(graph: Graph, triple) -> str:
    s, p, o = triple
    unit = graph.value(s, DSM.ofKind)
    tail = f" ({label_of(graph, unit)})" if p == DSM.amount and unit is not None else ""
    return f"{label_of(graph, s)} | {label_of(graph, p)} | {label_of(graph, o)}{tail}"


def ask(llm: LLM, old: Graph, suspect: Suspect) -> tuple[int, str]:
    listing = "\n".join(f"{i}. {describe(old, t)}" for i, t in enumerate(suspect.facts, 1))
    prompt = render_prompt("dsmart_update", facts=listing, sentence=suspect.sentence)
    reply = llm.json([Message("user", prompt)], SCHEMA, temperature=0.0, max_tokens=40, retries=0)
    return int(reply["fact"]), str(reply["value"]).strip()


def new_object(old_object, value: str, sentence: str):
    """The new value as the old object's kind, or None when the sentence does not state it."""
    if isinstance(old_object, Literal) and isinstance(old_object.toPython(), (int, float)):
        stated = numbers(value) & numbers(sentence)
        if not stated:
            return None
        number = next(iter(stated))
        return Literal(int(number) if number.is_integer() else number)
    if not value or value.lower() not in sentence.lower():
        return None
    return Literal(value) if isinstance(old_object, Literal) else entity(value)


def llm_updates(llm: LLM, suspect: Suspect, old: Graph) -> tuple[list, list]:
    """(conflicts, added): the old fact the model says the message changes, pruned, and the new one.
    LLMOutputError / LLMError propagate (the caller keeps the symbolic result)."""
    from core.methods.dsmart.conflicts import Conflict

    index, value = ask(llm, old, suspect)
    if not 1 <= index <= len(suspect.facts):
        return [], []
    s, p, o = suspect.facts[index - 1]
    new = new_object(o, value, suspect.sentence)
    if new is None or new == o:
        return [], []
    added = [(s, p, new)]
    if isinstance(new, URIRef):
        added += [(new, RDF.type, OWL.NamedIndividual), (new, RDFS.label, Literal(value))]
    why = f"the LLM read '{value}' in \"{suspect.sentence[:80]}\" as the new value ({suspect.why})"
    return [Conflict((s, p, o), why, "llm-update")], added


__all__ = ["Suspect", "llm_updates", "numbers", "related", "suspects"]
