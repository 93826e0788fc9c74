"""The knowledge-update answer check, in one place and frozen (issue 29).

Every helper that decides whether an answer is in a D-SMART graph, or stated in a text, lives here:
`dsm-updates` (the graph), `dsm-updates --explain` (the miss causes) and `dsm-update-answers` (the
replies) import it; it imports none of them. It changes only in commits of its own, each re-running
the figures it moves, so an extractor change is always measured by an unchanged check.

What the check reads (see core/benchmarks/dsm_updates.py for the figures built on it):
- the answer: a number (`answer_number`: '25', 'five', '3 months', the value a sentence answer
  goes to), a clock time or a time taken (`answer_time`), else its content words;
- the question: its content words and lemmas (`question_words`); the facts it is about are those
  whose subject (with a Quantity's kind, owner and the edges that reach it) or relation shares one
  (`question_triples`);
- the stale value: the earlier evidence turn's number closest to the question (`stale_number`);
- the answer kind: 'latest', 'earlier' (the answer is stated only in the earliest evidence turn) or
  'unchecked' (yes/no, a sentence, a score).
"""

from __future__ import annotations

import re

from core.text import NUMBER_WORDS
from core.text import singular as stem  # plural-insensitive key: 'postcards' ~ 'postcard'

STOPWORDS = frozenset(
    "a an the i my me we our you your he she it they them is are was were be been being have has had do does did "
    "how many much what which who whom where when why since before after to of in on at for with from by and or "
    "that this these those currently current now new recently last first ever so far total again time times "
    "did get got just about up down every dr mr mrs ms".split()  # 'every week' ~ 'week'; 'Dr. Kim' ~ 'Kim'
)
# what a question word asks for, in the graph's words: 'how old' asks for an age
QUESTION_SENSES = {"old": "age"}
TIMES_WORDS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}  # 'we've met up twice': a count of times
# a number standing alone: not the 80 of a model name '80D' nor the 70 of a lens '70-200mm'
_NUM = re.compile(r"(?<![A-Za-z\d-])\$?\d[\d,]*(?:\.\d+)?(?![A-Za-z\d]|-\d)")
_WORD = re.compile(r"[a-z0-9]+")
_FREQUENCY = re.compile(r"\b(?:a|an|per|each|every)\s+(?:other\s+)?(?:day|night|week|weekend|month|year)\b", re.I)


# --- words and numbers of a text ---

def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and not w.isdigit()}


def question_words(question: str, nlp) -> set[str]:
    """Content words of the question, surface forms and lemmas ('lost' also as 'lose'): relation
    and kind labels in the graph are lemmas."""
    lemmas = " ".join(t.lemma_ for t in nlp(question))
    words = content_words(question) | content_words(lemmas)
    return words | {QUESTION_SENSES[w] for w in words if w in QUESTION_SENSES}


def numbers(text: str) -> list[float]:
    out = [float(m.group().lstrip("$").replace(",", "")) for m in _NUM.finditer(text)]
    words = _WORD.findall(text.lower())
    out += [float(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS]
    out += [TIMES_WORDS[w] for w in words if w in TIMES_WORDS]
    return out


# --- what the answer states ---

def answer_number(answer: str) -> float | None:
    """The number an answer states: a short answer ('25', 'five', '3 months', '$400,000'); in a
    sentence, the value a change goes to ('You increased the limit (from one cup to two cups)') or
    the only number it has ("We've met up twice."). None for clock times and durations (see
    answer_time) and for answers with several numbers and no 'from ... to'."""
    if ":" in answer or _FREQUENCY.search(answer):
        return None  # 'three times a week' is a frequency phrase, checked as words
    found = numbers(answer)
    if len(answer.split()) > 3:
        change = re.search(r"\bfrom\b(.+?)\bto\b(.+)", answer)
        if change and numbers(change.group(1)) and len(numbers(change.group(2))) == 1:
            return numbers(change.group(2))[0]
    return found[0] if len(found) == 1 else None


def answer_time(answer: str):
    """The typed literal a time answer states: xsd:time for a clock time ('6:00 pm'), a duration for
    a time taken ('25 minutes and 50 seconds (or 25:50)'); None otherwise."""
    from core.methods.dsmart.literals import duration_literal, time_literal

    text = re.sub(r"\(.*?\)", "", answer).strip().rstrip(".")
    return time_literal(text) or duration_literal(text)


def checkable(answer: str) -> bool:
    """The answer is a value the check can look for: a number, a time, or at most four content
    words other than yes/no."""
    words = content_words(answer)
    if answer_number(answer) is not None or answer_time(answer) is not None:
        return True
    return bool(words) and len(words) <= 4 and not words <= {"yes", "no"}


def states(text: str, answer: str) -> bool:
    """The text states the answer: its number, every number of a time, or all its content words."""
    latest = answer_number(answer)
    if latest is not None:
        return latest in numbers(text)
    if answer_time(answer) is not None:  # '27 minutes and 45 seconds': all its numbers
        return set(numbers(answer)) <= set(numbers(text))
    wanted = content_words(answer)
    return bool(wanted) and wanted <= content_words(text)


# --- the evidence turns: the stale value, questions asking for the earlier one ---

def evidence_turns(instance):
    turns = {t.turn_id: t for t in instance.dialogue.turns()}
    ev = [turns[i] for i in instance.evidence_turn_ids if i in turns]
    return sorted(ev, key=lambda t: t.session)


def stale_sentence(instance) -> str:
    """The earliest evidence turn's sentence closest to the question ("" without two dated evidence
    sessions)."""
    from core.text import split_sentences

    turns = {t.turn_id: t for t in instance.dialogue.turns()}
    evidence = [turns[i] for i in instance.evidence_turn_ids if i in turns]
    sessions = {t.session for t in evidence}
    if len(sessions) < 2:
        return ""
    first = min(evidence, key=lambda t: t.session)
    question = content_words(instance.question)
    return max(split_sentences(first.text), key=lambda s: (len(content_words(s) & question), -len(s)), default="")


def stale_number(instance, latest: float) -> float | None:
    """The pre-update number, from the earliest evidence turn's sentence closest to the question:
    the first number other than the latest, preferring one counted in the answer's unit ('6 ounces'
    over '1 tablespoon' when the answer says '5 ounces')."""
    sentence = stale_sentence(instance)
    candidates = [n for n in numbers(sentence) if n != latest]
    unit = unit_after(str(instance.answer), latest)
    same_unit = [n for n in candidates if unit and unit_after(sentence, n) == unit]
    return (same_unit or candidates or [None])[0]


def unit_after(text: str, value: float) -> str:
    """The stemmed word right after the first digit-written occurrence of the value ('5 ounces' ->
    'ounce'); '' when there is none."""
    for m in re.finditer(r"\$?\d[\d,]*(?:\.\d+)?\s+([A-Za-z]+)", text):
        number = float(m.group().split()[0].lstrip("$").replace(",", ""))
        if number == value:
            return stem(m.group(1).lower())
    return ""


def asks_earlier(instance) -> bool:
    """The answer is stated in the earliest evidence turn and not in the latest one: the question
    asks for the value before the update."""
    evidence = evidence_turns(instance)
    if len({t.session for t in evidence}) < 2:
        return False
    first = " ".join(t.text for t in evidence if t.session == evidence[0].session)
    last = " ".join(t.text for t in evidence if t.session == evidence[-1].session)
    return states(first, instance.answer) and not states(last, instance.answer)


def answer_kind(instance) -> str:
    """What the gold answer is, read from the data alone: 'latest' (a value the check can look for
    in the graph), 'earlier' (the question asks for the value before the update: a memory that
    prunes it keeps it in its history, not in the graph) or 'unchecked' (yes/no, a sentence, a score
    such as '5-2')."""
    if not checkable(instance.answer):
        return "unchecked"
    return "earlier" if asks_earlier(instance) else "latest"


# --- the graph: which facts a question is about, which carry a value ---

def words_of(graph, term) -> set[str]:
    """Content words of a node's or relation's label ('postcards (add)' -> postcard, add); the fixed
    vocabulary's camel-case names split ('livesIn' -> live), names of individuals do not ('TechCorp')."""
    from core.methods.dsmart.vocab import BASE, label_of

    label = label_of(graph, term)
    if str(term).startswith(BASE):
        label = re.sub(r"([a-z])([A-Z])", r"\1 \2", label)
    return content_words(label)


def subject_words(graph, s) -> set[str]:
    """What a fact's subject is about: its label; for a Quantity also its counted kind and the edges
    that reach it ('user's commute --be--> minutes', 'user --weigh--> pounds'): a count is about
    whose it is and what was done."""
    from rdflib import RDF

    from core.methods.dsmart.vocab import DSM

    words = words_of(graph, s)
    kind = graph.value(s, DSM.ofKind)
    if kind is not None:
        words |= words_of(graph, kind)
    if (s, RDF.type, DSM.Quantity) in graph:
        for owner, p in graph.subject_predicates(s):
            words |= words_of(graph, owner) | words_of(graph, p)
    return words


def question_triples(graph, question: set[str]) -> list:
    """Facts the question is about: subject (see subject_words) or relation shares a content word
    with the question."""
    from core.methods.dsmart.fragment import is_fact

    return [(s, p, o) for s, p, o in graph
            if is_fact((s, p, o)) and (subject_words(graph, s) | words_of(graph, p)) & question]


def is_number(term, value: float) -> bool:
    from rdflib import Literal

    return isinstance(term, Literal) and isinstance(term.toPython(), (int, float)) and float(term.toPython()) == value


def number_on(triples, value: float) -> bool:
    return any(is_number(o, value) for _, _, o in triples)


def same_value(term, literal) -> bool:
    from rdflib import Literal

    return isinstance(term, Literal) and term.datatype == literal.datatype and term.toPython() == literal.toPython()


def text_on(graph, triples, answer: str) -> bool:
    wanted = content_words(answer)
    seen: set[str] = set()
    for _, _, o in triples:
        seen |= words_of(graph, o)
    return bool(wanted) and wanted <= seen


def carries(graph, term, answer: str) -> bool:
    """The term states the answer: the number, the clock time, or all its content words."""
    latest = answer_number(answer)
    if latest is not None:
        return is_number(term, latest)
    clock = answer_time(answer)
    if clock is not None:
        return same_value(term, clock)
    words = content_words(answer)
    return bool(words) and words <= words_of(graph, term)


def pruned_number(memory, question: set[str], value: float) -> bool:
    """A triple pruned in the history carried the value, on a fact the question is about."""
    g = memory.graph  # labels and kinds stay when a value is pruned
    for record in memory.history:
        for p in record.pruned:
            s, pred, o = p.triple
            if not is_number(o, value):
                continue
            if (subject_words(g, s) | words_of(g, pred)) & question:
                return True
    return False


def in_history(memory, answer: str) -> bool:
    """A triple pruned in some turn carried the answer (number, clock time or all its words)."""
    return any(carries(memory.graph, p.triple[2], answer) for r in memory.history for p in r.pruned)


# --- the verdicts ---

def evaluate(instance, memory, nlp) -> dict:
    """One question's verdict on the memory's final graph (see core/benchmarks/dsm_updates.py)."""
    graph = memory.graph
    question = question_words(instance.question, nlp)
    triples = question_triples(graph, question)
    latest = answer_number(instance.answer)
    if latest is not None:
        kept = number_on(triples, latest)
        stale = stale_number(instance, latest)
    elif (clock := answer_time(instance.answer)) is not None:
        kept, stale = any(same_value(o, clock) for _, _, o in triples), None
    else:
        kept, stale = text_on(graph, triples, instance.answer), None
    removed = stale is not None and not number_on(triples, stale)
    pruned = stale is not None and pruned_number(memory, question, stale)
    maintenance = [r.timings.get("maintenance", 0.0) for r in memory.history]
    kind = answer_kind(instance)
    return {
        "question_id": instance.question_id, "question": instance.question, "answer": instance.answer,
        "latest": latest if latest is not None else instance.answer, "stale": stale, "answer_kind": kind,
        "latest_kept": bool(kept), "stale_removed": bool(removed), "stale_pruned": bool(pruned),
        "earlier_in_history": kind == "earlier" and in_history(memory, instance.answer),
        "answer_pruned": kind == "latest" and not kept and in_history(memory, instance.answer),
        "rounds": len(memory.history), "facts": sum(1 for _ in memory.facts()),
        "pruned_triples": sum(len(r.pruned) for r in memory.history), "question_facts": len(triples),
        "maintenance_s_mean": sum(maintenance) / max(1, len(maintenance)),
    }


def judge(reply: str, instance, kind: str = "latest") -> dict:
    """Whether a reply states the gold answer, and for a numeric current value (`kind` "latest")
    whether it states only the stale number (for an 'earlier' question the gold answer is itself
    the old value, so there is no stale one to flag)."""
    correct = states(reply, instance.answer)
    latest = answer_number(instance.answer) if kind == "latest" else None
    stale = stale_number(instance, latest) if latest is not None else None
    stale_only = stale is not None and not correct and stale in numbers(reply)
    return {"correct": bool(correct), "stale": stale, "stale_only": bool(stale_only)}
