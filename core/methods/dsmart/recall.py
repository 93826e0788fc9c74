"""Facts with the words they came from, for the reader (issue 40).

The DSM records which round asserted each triple (`TurnRecord.added`, one named graph per turn in
`DynamicStructuredMemory.dataset`). Here a fact is joined to the sentence of that round that holds
it (the user's turn, the reply sentences the extractor read, or the LLM's statement), with the
turn's date and who said it. The answer prompts of `dsm` and `dsmart` show these sentences, not
triples: a triple whose object the extractor dropped ('user | quality | proud') still brings "I'm
proud of my daughter's architecture degree", and no relation name or URI reaches the model.

Sentences are ranked by relevance to the question (embedding similarity of the sentence and of its
facts, plus the reasoning tree's value of the facts where a tree ran) and kept within a token
budget, most relevant first.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from rdflib import RDF, Graph, Literal

from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.statement import STATEMENT_PREFIX
from core.methods.dsmart.vocab import label_of
from core.person import second_person, without_greeting
from core.text import approx_tokens, split_sentences, words

Triple = tuple
USER, ASSISTANT, NARRATOR, IMPORTED = "user", "assistant", "narrator", "import"
_PARTICIPANTS = frozenset({"user", "assistant"})
_STEM = 5  # words match on their first five letters: 'teaches' ~ 'teach', 'cycling' ~ 'cycle'
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class SourcedFact:
    """A fact of the graph with where it came from."""

    triple: Triple
    fact: str  # 'subject | relation | object' with labels: for pages and traces, never for the model
    sentence: str  # the words of the source turn that hold the fact; a sentence from the labels when none
    speaker: str  # user | assistant | narrator (an LLM statement about the user) | import
    turn_index: int | None  # the round that asserted it (None: not asserted by a recorded round)
    date: str = ""  # ISO date of that turn, "" when unknown
    verbatim: bool = True  # False: `sentence` was written from the labels (no source sentence held it)
    superseded: bool = False  # a later round pruned another fact of the same sentence (a value since changed)
    replaced: tuple["Said", ...] = ()  # what this sentence's round changed: the sentences of the values it pruned


@dataclass(frozen=True)
class Said:
    """An earlier sentence a change replaced, with who said it and when (for the history of a value)."""

    sentence: str
    speaker: str
    date: str = ""


@dataclass(frozen=True)
class Recalled:
    """One line of the answer prompt: a source sentence and the facts it carries, with its score."""

    text: str  # the rendered line, second person for the user, with the date
    sentence: SourcedFact  # the first of its facts (the sentence, speaker, date are shared)
    facts: tuple[Triple, ...]
    score: float


# -- provenance ------------------------------------------------------------------------------------
def source_index(history: Sequence) -> dict[Triple, object]:
    """Each fact triple -> the latest TurnRecord that asserted it, a round where the user stated it
    before one where only the assistant did (the assistant repeating a user's fact)."""
    index: dict[Triple, object] = {}
    users: set[Triple] = set()
    for record in history:
        theirs = set(getattr(record, "assistant_only", ()))
        for triple in record.added:
            if not is_fact(triple):
                continue
            if triple not in theirs:
                users.add(triple)
                index[triple] = record
            elif triple not in users:
                index[triple] = record
    return index


def _stems(text: str) -> set[str]:
    return {w[:_STEM] for w in words(text) if w not in _PARTICIPANTS and len(w) > 1}


def _term_words(graph: Graph, term) -> str:
    return _CAMEL.sub(" ", label_of(graph, term)).replace("_", " ")


def _candidates(record) -> list[tuple[str, str]]:
    """(speaker, sentence) of the round, in the order they were said."""
    if getattr(record, "source", "dialogue") == "import":
        return []
    statement = record.statement or ""
    if statement and not statement.startswith(("User:", "Assistant:")):  # the LLM's statement s_t
        return [(NARRATOR, s) for s in split_sentences(statement)]
    out = [(USER, s) for s in split_sentences(record.question or "")]
    lines = statement.splitlines()
    reply = next((line.removeprefix("Assistant:").strip() for line in lines if line.startswith("Assistant:")), "")
    out += [(ASSISTANT, s) for s in split_sentences(reply)]
    if lines and lines[-1].startswith(STATEMENT_PREFIX):  # DSMConfig.statements == "fallback"
        out += [(NARRATOR, s) for s in split_sentences(lines[-1].removeprefix(STATEMENT_PREFIX))]
    return out


def source_sentence(graph: Graph, record, triple: Triple) -> tuple[str, str] | None:
    """(speaker, sentence) of `record` that holds `triple`: the one sharing most words with the
    subject and object labels (the relation's words count half), the user's first on ties, of the
    speaker who stated it (`TurnRecord.assistant_only`; the reply's sentences for a user's fact
    only when none of the user's shares a word); None when no sentence shares a word."""
    s, p, o = triple
    names = _stems(_term_words(graph, s)) | _stems(_term_words(graph, o))
    relation = set() if p == RDF.type else _stems(_term_words(graph, p))
    candidates = _candidates(record)
    if triple in getattr(record, "assistant_only", ()):  # only the reply stated it: one of its sentences
        groups = [[c for c in candidates if c[0] == ASSISTANT]]
    else:  # the user's turn (or the LLM's statement) stated it: its sentences first
        groups = [[c for c in candidates if c[0] != ASSISTANT], candidates]
    for group in groups:
        best, best_score = None, 0.0
        for speaker, sentence in group:
            have = _stems(sentence)
            score = len(names & have) + 0.5 * len(relation & have)
            if score > best_score:
                best, best_score = (speaker, sentence), score
        if best is not None:
            return best
    return None


def fact_sentence(graph: Graph, triple: Triple) -> str:
    """A plain sentence from the labels, for a fact no recorded sentence holds (an import): 'you'
    for the user, relation words split ('livesIn' -> 'lives in'), never a URI."""
    s, p, o = triple
    subject = _term_words(graph, s)
    relation = "is a" if p == RDF.type else _term_words(graph, p).lower()
    obj = str(o) if isinstance(o, Literal) else _term_words(graph, o)
    if subject.lower() == "user":
        subject = "you"
        first, _, rest = relation.partition(" ")
        plain = first[:-1] if first.endswith("s") and not first.endswith("ss") else first
        first = {"is": "are", "was": "were", "has": "have", "does": "do"}.get(first, plain)
        relation = f"{first} {rest}".strip()
    elif subject.lower() == "assistant":
        subject = "I"
    return f"{subject[:1].upper()}{subject[1:]} {relation} {obj}."


def _value_changes(history: Sequence, index: Mapping[Triple, object]):
    """(pruning round, old triple, the earlier round that asserted it) for every value a later round
    changed, in the order of the rounds. A class dropped as disjoint is no changed value (the
    schema changed), and a triple asserted again later is its latest round's."""
    for record in history:
        for pruned in getattr(record, "pruned", ()):
            if pruned.triple[1] == RDF.type:
                continue
            source = index.get(pruned.triple)
            if source is not None and source.turn_index < record.turn_index:
                yield record, pruned.triple, source


def superseded_sentences(graph: Graph, history: Sequence, index: Mapping[Triple, object]) -> set[tuple]:
    """(turn index, sentence) of every source sentence one of whose facts a later round pruned:
    'My dog is Rex.' after 'Actually my dog is called Max.' still holds 'user | has | dog', but its
    name has changed since."""
    out = set()
    for _, old, source in _value_changes(history, index):
        found = source_sentence(graph, source, old)
        if found is not None:
            out.add((source.turn_index, found[1]))
    return out


def _replacing(graph: Graph, record, old: Triple) -> tuple[str, str] | None:
    """(speaker, sentence) of `record` that states the new value of the pruned `old`: the source of
    the round's fact on the same subject and relation, else on the same subject, else the round's
    sentence sharing most words with the old fact (`source_sentence`)."""
    s, p, _ = old
    for same in ((lambda t: t[0] == s and t[1] == p), (lambda t: t[0] == s)):
        for triple in record.added:
            if is_fact(triple) and triple[1] != RDF.type and same(triple):
                found = source_sentence(graph, record, triple)
                if found is not None:
                    return found
    return source_sentence(graph, record, old)


def change_history(graph: Graph, history: Sequence, index: Mapping[Triple, object]) -> dict[tuple, tuple[Said, ...]]:
    """(turn index, sentence) of every sentence whose round changed a value -> the earlier sentences
    that held the old value, oldest first: 'Actually my dog is called Max.' -> ('My dog is Rex.',).
    The conflict step prunes the old value from the graph and keeps it in the round's record; the
    reader sees the current value with what it replaced."""
    out: dict[tuple, list[Said]] = {}
    for record, old, source in _value_changes(history, index):
        before, now = source_sentence(graph, source, old), _replacing(graph, record, old)
        if before is None or now is None:
            continue
        said = Said(before[1], before[0], getattr(source, "date", "") or "")
        olds = out.setdefault((record.turn_index, now[1]), [])
        for earlier in (*out.get((source.turn_index, before[1]), ()), said):  # the old value's own history first
            if earlier not in olds:
                olds.append(earlier)
    return {key: tuple(olds) for key, olds in out.items()}


def sourced_facts(graph: Graph, history: Sequence, triples: Iterable[Triple]) -> list[SourcedFact]:
    """Each triple with its source sentence, speaker, turn and date, and the earlier sentences whose
    values its round changed. A type triple no sentence holds ('user | is a | Speaker') is left out:
    the schema's words, not something said."""
    index = source_index(history)
    changed = superseded_sentences(graph, history, index)
    histories = change_history(graph, history, index)
    out = []
    for triple in triples:
        line = " | ".join("is a" if (k == 1 and t == RDF.type) else label_of(graph, t) for k, t in enumerate(triple))
        record = index.get(triple)
        found = source_sentence(graph, record, triple) if record is not None else None
        if found is None and triple[1] == RDF.type and record is not None:
            continue
        if found is None:
            speaker = IMPORTED if record is None or getattr(record, "source", "") == "import" else USER
            out.append(SourcedFact(triple, line, fact_sentence(graph, triple), speaker,
                                   None if record is None else record.turn_index, getattr(record, "date", "") or "",
                                   verbatim=False))
        else:
            out.append(SourcedFact(triple, line, found[1], found[0], record.turn_index, getattr(record, "date", "") or "",
                                   superseded=(record.turn_index, found[1]) in changed,
                                   replaced=histories.get((record.turn_index, found[1]), ())))
    return out


def plain_text(texts: Sequence[str]) -> str:
    """`texts` with their whitespace collapsed, one per line (so no sentence matches across two),
    for `shown_already`: made once per reply, not once per fact."""
    return "\n".join(" ".join(text.split()) for text in texts)


def shown_already(fact: SourcedFact, shown: str) -> bool:
    """The prompt already holds the fact's sentence word for word (`shown`: `plain_text` of the
    recent turns it shows as they were said), and its line would add nothing: not a value's
    history, not a statement. Such a line is left out, so the prompt says each thing once."""
    if not shown or not fact.verbatim or fact.replaced or fact.turn_index is None or fact.speaker == NARRATOR:
        return False
    sentence = " ".join(fact.sentence.split())
    return bool(sentence) and sentence in shown


def said_by_fact(memory, graph: Graph | None = None) -> dict[Triple, str]:
    """Every fact of `graph` (default: the memory's graph now) -> the sentence it came from, as the
    answer prompt renders it ("You told me on 3 May 2025: ..."); the Memory graph page's column."""
    graph = memory.graph if graph is None else graph
    return {f.triple: render(f) for f in sourced_facts(graph, memory.history, (t for t in graph if is_fact(t)))}


# -- rendering -------------------------------------------------------------------------------------
# The user's "you" is the assistant: said back to the user, it is "I" where it is a subject (after
# the start of a clause, a conjunction or an auxiliary: "what you suggested" -> "what I
# suggested"), else "me"; "thank you" stays. The first person is `core.person.second_person`'s.
_SECOND = re.compile(r"\b(you're|you've|you'd|you'll|yourself|yours|your|you)\b", re.I)
_SECOND_SWAP = {"you're": "I'm", "you've": "I've", "you'd": "I'd", "you'll": "I'll", "yourself": "myself",
                "yours": "mine", "your": "my", "you": "me"}
_SUBJECT_BEFORE = re.compile(r"(^|[,;:]|\b(?:and|but|or|that|if|when|as|because|so|what|how|where|whether|can|could|"
                             r"would|will|should|do|did|have|had|are|were))\s*$", re.I)
_THANK = re.compile(r"\bthank\s*$", re.I)


def turned_around(sentence: str) -> str:
    """The user's own sentence addressed back to them, both ways: 'I'm Tomasz and my wife teaches'
    -> "You're Tomasz and your wife teaches" (`core.person.second_person`, an opening greeting left
    out), and the user's 'you' (the assistant) becomes 'I'/'me'."""
    text = without_greeting(sentence)
    out, at = [], 0
    for m in _SECOND.finditer(text):  # the assistant, addressed by the user
        word = m.group(0).lower()
        swap = _SECOND_SWAP[word]
        if word == "you" and _THANK.search(text[: m.start()]):
            swap = m.group(0)  # 'thank you' stays
        elif word == "you" and _SUBJECT_BEFORE.search(text[: m.start()]):
            swap = "I"
        # the words between two 'you's are the user's own: each stretch in the second person (a
        # stretch ends at a word boundary, so no first-person word is cut)
        out += [second_person(text[at : m.start()]), swap]
        at = m.end()
    out.append(second_person(text[at:]))
    result = "".join(out)
    return result[:1].upper() + result[1:]


def when(date: str) -> str:
    try:
        day = datetime.date.fromisoformat(date[:10])
    except ValueError:
        return ""
    return f"{day.day} {day:%B %Y}"


def render(fact: SourcedFact) -> str:
    """The line the answer prompt shows, in the words of `core.methods.render.said_line` (the memory
    lines of `rag` and `sgmem`): the user's sentence in the second person ("You work as a
    pharmacist."), a question or the assistant's words quoted as theirs, then when it was said and
    whether a value in it changed since: "Your dog is Rex. (12 May 2026; since changed)". Never a
    frame the model could take for a reply ("You told me on ...:" was copied into replies)."""
    marks = [m for m in (when(fact.date) if fact.date else "", "since changed" if fact.superseded else "") if m]
    marks += [_before(said) for said in fact.replaced]
    line = _words(fact)
    return f"{line} ({'; '.join(marks)})" if marks else line


def _before(said: Said) -> str:
    """An earlier value in the history of a changed one: 'before: your dog is Rex, 12 May 2026'."""
    words = _words(SourcedFact((), "", said.sentence, said.speaker, None, said.date)).rstrip(".!")
    first = words.split(" ", 1)[0]
    if first.lower() in ("you", "your", "you're", "you've", "you'd", "you'll"):  # not a name: 'Pavel fixes clocks'
        words = words[:1].lower() + words[1:]
    day = when(said.date) if said.date else ""
    return f"before: {words}, {day}" if day else f"before: {words}"


def _words(fact: SourcedFact) -> str:
    sentence = fact.sentence.strip()
    if not fact.verbatim:
        return sentence
    if fact.speaker == USER:
        return f'You asked: "{sentence}"' if sentence.endswith("?") else turned_around(sentence)
    if fact.speaker == ASSISTANT:
        return f'I replied: "{sentence}"'
    text = re.sub(r"\bthe user's\b", "your", sentence, flags=re.I)
    text = re.sub(r"\bthe user\b", "you", text, flags=re.I)
    return f"{text[:1].upper()}{text[1:]}"


# -- ranking ---------------------------------------------------------------------------------------
class SentenceRanker:
    """Ranks source sentences against a question. With an embedder: cosine of the question with the
    sentence (weight 0.7) and with its best fact written out (0.3); without one, the share of the
    question's content words the sentence holds. Vectors are cached by text across replies."""

    SENTENCE_WEIGHT = 0.7
    # a changed value's old sentence ranks just below a current one as relevant; small, so that a
    # false prune does not bury a sentence that holds the answer
    SUPERSEDED_PENALTY = 0.05
    # the assistant's own words rank just below the user's as relevant: a reply's sentence ('I
    # replied: "You are a firefighter ..."', an echo gone wrong) is what the assistant said, not
    # what the user stated (issue 57); small, so that a fact only a reply kept still comes
    ASSISTANT_PENALTY = 0.05

    def __init__(self, embedder=None) -> None:
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}

    def similarities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        if self.embedder is None:
            q = _stems(query) - _QUESTION_WORDS
            return np.array([len(q & _stems(t)) / max(len(q), 1) for t in texts], dtype=float)
        self._embed([query, *texts])
        q = self._vectors[query]
        return np.array([float(self._vectors[t] @ q) for t in texts])

    def _embed(self, texts: Sequence[str]) -> None:
        """Embeds the texts not embedded yet, in one batch (a call per text costs ~a batch's time)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing and self.embedder is not None:
            for text, vec in zip(missing, self.embedder.encode(missing)):
                self._vectors[text] = np.asarray(vec, dtype=float)

    def rank(self, query: str, facts: Sequence[SourcedFact], graph: Graph, budget_tokens: int,
             priors: Mapping[Triple, float] | None = None, prior_weight: float = 0.0) -> list[Recalled]:
        """One line per source sentence, most relevant first, as many as fit `budget_tokens` (the
        best one always). A fact of a recorded round that no sentence of the round holds is left out
        (its words are the parser's, not the speaker's); an imported fact is written from its labels."""
        groups: dict[tuple, list[SourcedFact]] = {}
        for fact in facts:
            if not fact.verbatim and fact.speaker != IMPORTED:
                continue  # no sentence of its own round holds it ('be | frequency | every day'): a parse artifact
            groups.setdefault((fact.turn_index, fact.speaker, fact.sentence), []).append(fact)
        if not groups:
            return []
        keys = list(groups)
        # a changed value's line is at least as relevant as the earlier sentences it replaced: 'How
        # many pets do I have?' matches 'I have two cats.' better than 'Now the cats are four.'
        replaced = [[r.sentence for r in groups[k][0].replaced] for k in keys]
        written = [[fact_sentence(graph, f.triple) for f in groups[k]] for k in keys]
        self._embed([query, *(k[2] for k in keys), *(t for ts in replaced for t in ts), *(w for ws in written for w in ws)])
        sentence_sim = self.similarities(query, [k[2] for k in keys])
        flat_replaced = self.similarities(query, [t for ts in replaced for t in ts])
        inherited, at = np.zeros(len(keys)), 0
        for n, texts in enumerate(replaced):
            inherited[n] = float(flat_replaced[at : at + len(texts)].max()) if texts else 0.0
            at += len(texts)
        flat = self.similarities(query, [w for ws in written for w in ws])
        scored, at = [], 0
        for n, key in enumerate(keys):
            fact_sim = float(flat[at : at + len(written[n])].max())
            at += len(written[n])
            prior = max((priors or {}).get(f.triple, 0.0) for f in groups[key])
            score = max(self.SENTENCE_WEIGHT * float(sentence_sim[n]) + (1 - self.SENTENCE_WEIGHT) * fact_sim,
                        float(inherited[n])) + prior_weight * prior
            first = groups[key][0]
            if first.superseded:
                score -= self.SUPERSEDED_PENALTY
            if first.speaker == ASSISTANT:
                score -= self.ASSISTANT_PENALTY
            scored.append(Recalled(render(first), first, tuple(f.triple for f in groups[key]), score))
        scored.sort(key=lambda r: (-r.score, -(r.sentence.turn_index or 0)))
        out, used = [], 0
        for item in scored:
            cost = approx_tokens(item.text)
            if out and used + cost > budget_tokens:
                continue
            out.append(item)
            used += cost
        return out


_QUESTION_WORDS = {w[:_STEM] for w in "what which who whom whose where when why how do does did is are was were the a an of to "
                                      "in "
                                      "my your me you i".split()}


def memory_text(lines: Sequence[Recalled]) -> str:
    return "\n".join(f"- {line.text}" for line in lines)


__all__ = ["Recalled", "Said", "SentenceRanker", "SourcedFact", "change_history", "fact_sentence", "said_by_fact", "memory_text", "render",
           "source_index", "source_sentence", "sourced_facts", "turned_around", "when"]
