"""Entity linking against the graph's entity names (the paper used ReFinED, which needs Wikidata
and a download; this is the offline substitute).

1. Exact spans: every entity name and a few aliases (no leading article, no trailing
   parenthetical such as "(Science Fiction Film)", the title before a subtitle) are normalised
   (case-folded, accents and punctuation dropped) and matched at word boundaries by one
   Aho-Corasick automaton (pyahocorasick). Longest spans win; overlapping shorter ones are dropped.
2. Mention candidates from spaCy (named entities and proper-noun chunks) that no exact span
   covers are matched fuzzily against the same names with rapidfuzz (Levenshtein ratio), which
   catches misspellings such as "Sydney Lumet".
3. A name or alias shared by several entities goes to the one with the highest graph degree.

Chat text is full of words that are also entity names ("It", "Yes", "Up"), so a span made only of
stop words is never linked, and a single-word span needs evidence that it is a name: spaCy tags it
as a proper noun or inside a named entity, it is capitalised inside a sentence, or it is a year.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from core.methods.kgaug.graph import KnowledgeGraph

# spaCy's English stop words plus chat words that are also (rare) entity names
_CHAT_WORDS = {"know", "like", "tell", "yes", "no", "hi", "hello", "hey", "thanks", "thank", "ok", "okay", "good",
               "great", "sure", "love", "recommend", "recommendation", "recommendations", "watch", "read", "think",
               "movie", "movies", "film", "films", "book", "books", "author", "actor", "actress", "director",
               "wrote", "written", "directed", "starred", "star", "stars", "genre", "favorite", "favourite", "cool",
               "awesome", "nice", "interesting", "heard", "seen", "liked", "enjoy", "enjoyed", "also", "else", "one"}
MENTION_LABELS = {"PERSON", "ORG", "WORK_OF_ART", "GPE", "NORP", "EVENT", "PRODUCT", "FAC", "LOC", "LANGUAGE"}
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")


def stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS) | frozenset(_CHAT_WORDS)


def normalise(text: str) -> tuple[str, list[int]]:
    """Case-folded text with accents removed and every run of non-alphanumerics one space, plus
    the index in `text` of each kept character (to map spans back)."""
    out: list[str] = []
    origin: list[int] = []
    space = True
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKD", ch):
            if unicodedata.combining(c):
                continue
            c = c.casefold()
            if c.isalnum():
                out.append(c)
                origin.append(i)
                space = False
            elif not space:
                out.append(" ")
                origin.append(i)
                space = True
    if out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), origin


_NON_WORD = re.compile(r"[\W_]+")


def norm(text: str) -> str:
    """`normalise(text)[0]` without the offsets, fast enough for 100k names."""
    decomposed = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", decomposed.casefold()).strip()


def aliases(name: str) -> list[str]:
    """Normalised forms a user may type for `name` (the full name first)."""
    full = norm(name)
    forms = [full]
    base = re.sub(r"\s*\([^)]*\)\s*$", "", name).strip()  # "Star Trek (Science Fiction Film)"
    for cut in (base, re.split(r"\s*[:;]\s+", base)[0]):
        forms.append(norm(cut))
    for form in list(forms):
        for article in ("the ", "a ", "an "):
            if form.startswith(article) and len(form) > len(article) + 2:
                forms.append(form[len(article):])
    out = []
    for f in forms:
        if f and f not in out:
            out.append(f)
    return out


@dataclass(frozen=True)
class LinkedEntity:
    entity: int  # id in the graph
    name: str
    mention: str  # the text as written
    start: int  # character offsets in the query
    end: int
    method: str  # exact | alias | fuzzy
    score: float  # 100 for exact spans, the rapidfuzz ratio for fuzzy ones
    variants: tuple[int, ...] = ()  # other entities with the same normalised full name (duplicates)
    label: str = ""  # spaCy's entity label of the mention, where it has one (PERSON, WORK_OF_ART ...)

    @property
    def ids(self) -> tuple[int, ...]:
        return (self.entity, *self.variants)


@dataclass(frozen=True)
class LinkerSettings:
    fuzzy_cutoff: float = 90.0  # rapidfuzz ratio (0-100) a mention needs to link fuzzily
    min_alias_chars: int = 3  # shorter names/aliases are never matched
    only_connected: bool = True  # link only entities that have triples (others give no candidates)
    use_spacy: bool = True


class EntityLinker:
    def __init__(self, kg: KnowledgeGraph, settings: LinkerSettings = LinkerSettings(), nlp=None) -> None:
        import ahocorasick

        self.kg = kg
        self.settings = settings
        self.nlp = nlp if settings.use_spacy else None
        self.stop = stop_words()
        # normalised form -> (best entity, is the full name); the best has the highest degree,
        # full names beating aliases
        best: dict[str, tuple[int, bool]] = {}
        degree = kg.degree
        for eid, name in enumerate(kg.entities):
            if settings.only_connected and degree[eid] == 0:
                continue
            for k, form in enumerate(aliases(name)):
                if len(form) < settings.min_alias_chars:
                    continue
                full = k == 0
                old = best.get(form)
                if old is None or (full, degree[eid]) > (old[1], degree[old[0]]):
                    best[form] = (eid, full)
        self.forms = best
        # OpenDialKG has duplicate nodes ("J.K. Rowling" / "J. K. Rowling"): entities whose full
        # names normalise alike are linked together (the highest-degree one names the link)
        same: dict[str, list[int]] = {}
        for eid, name in enumerate(kg.entities):
            if not (settings.only_connected and degree[eid] == 0):
                same.setdefault(norm(name), []).append(eid)
        self.variants = {form: tuple(ids) for form, ids in same.items() if len(ids) > 1}
        self.automaton = ahocorasick.Automaton()
        for form, (eid, full) in best.items():
            self.automaton.add_word(f" {form} ", (form, eid, full))
        if best:
            self.automaton.make_automaton()
        self._choices = list(best)  # for rapidfuzz

    # -- the steps ---------------------------------------------------------------------------
    def link(self, text: str) -> list[LinkedEntity]:
        if not text.strip() or not self.forms:
            return []
        normed, origin = normalise(text)
        doc = self.nlp(text) if self.nlp is not None else None
        spans = self._exact(text, normed, origin, doc)
        spans += self._fuzzy(text, doc, [(s.start, s.end) for s in spans])
        seen: dict[int, LinkedEntity] = {}
        for s in sorted(spans, key=lambda s: s.start):
            seen.setdefault(s.entity, s)
        return list(seen.values())

    def _variants(self, eid: int) -> tuple[int, ...]:
        return tuple(i for i in self.variants.get(norm(self.kg.entities[eid]), ()) if i != eid)

    def _exact(self, text: str, normed: str, origin: list[int], doc) -> list[LinkedEntity]:
        haystack = f" {normed} "
        found = []
        for end, (form, eid, full) in self.automaton.iter(haystack):
            start = end - len(form)  # in haystack; minus the leading space gives normed offsets
            n0, n1 = start - 1, start - 1 + len(form)
            found.append((n0, n1, form, eid, full))
        found.sort(key=lambda f: (-(f[1] - f[0]), f[0]))
        taken: list[tuple[int, int]] = []
        out = []
        for n0, n1, form, eid, full in found:
            if any(n0 < b and a < n1 for a, b in taken):
                continue
            o0, o1 = origin[n0], origin[n1 - 1] + 1
            if not self._plausible(form, text[o0:o1], o0, o1, doc):
                continue
            taken.append((n0, n1))
            out.append(LinkedEntity(eid, self.kg.entities[eid], text[o0:o1], o0, o1, "exact" if full else "alias", 100.0,
                                    self._variants(eid), _label(doc, o0, o1)))
        return out

    def _plausible(self, form: str, surface: str, start: int, end: int, doc) -> bool:
        words = form.split()
        if all(w in self.stop for w in words):
            return False
        if len(words) > 1:
            return True
        if _YEAR.match(form):
            return True
        if doc is None:  # no parser: a capitalised word not at the start of the text
            return surface[:1].isupper() and start > 0
        tokens = [t for t in doc if t.idx < end and t.idx + len(t.text) > start]
        if any(t.pos_ == "PROPN" or t.ent_type_ in MENTION_LABELS for t in tokens):
            return True
        # capitalised inside a sentence ("a Drama") reads as a name; at a sentence start it may not
        return bool(tokens) and surface[:1].isupper() and not tokens[0].is_sent_start

    def _fuzzy(self, text: str, doc, covered: list[tuple[int, int]]) -> list[LinkedEntity]:
        if doc is None or not self._choices:
            return []
        from rapidfuzz import fuzz, process

        mentions = [(e.start_char, e.end_char) for e in doc.ents if e.label_ in MENTION_LABELS]
        mentions += [(c.start_char, c.end_char) for c in doc.noun_chunks if any(t.pos_ == "PROPN" for t in c)]
        out = []
        for start, end in dict.fromkeys(mentions):
            if any(start < b and a < end for a, b in covered):
                continue
            query = norm(text[start:end])
            for article in ("the ", "a ", "an "):
                if query.startswith(article):
                    query = query[len(article):]
            if len(query) < self.settings.min_alias_chars or all(w in self.stop for w in query.split()):
                continue
            hits = process.extract(query, self._choices, scorer=fuzz.ratio, score_cutoff=self.settings.fuzzy_cutoff, limit=5)
            if not hits:
                continue
            top = max(h[1] for h in hits)
            form = max((h for h in hits if h[1] == top), key=lambda h: self.kg.degree[self.forms[h[0]][0]])[0]
            eid = self.forms[form][0]
            out.append(LinkedEntity(eid, self.kg.entities[eid], text[start:end], start, end, "fuzzy", float(top),
                                    self._variants(eid), _label(doc, start, end)))
            covered.append((start, end))
        return out


def _label(doc, start: int, end: int) -> str:
    if doc is None:
        return ""
    return next((e.label_ for e in doc.ents if e.start_char < end and start < e.end_char), "")


def entity_kinds(kg: KnowledgeGraph, person_roles: dict[str, str]) -> np.ndarray:
    """Per entity: 1 = a person (tail of a person relation such as written_by), 2 = a thing that has
    such a relation (a work), 0 = unknown. Used by the symbolic pronoun rewrite."""
    kinds = np.zeros(len(kg.entities), dtype=np.int8)
    rel_ids = {r: i for i, r in enumerate(kg.relations)}
    for relation, role in person_roles.items():
        rid = rel_ids.get(relation)
        if rid is None:
            continue
        mask = kg.rels == rid
        people = kg.tails[mask] if role == "tail" else kg.heads[mask]
        works = kg.heads[mask] if role == "tail" else kg.tails[mask]
        kinds[works] = np.where(kinds[works] == 1, 1, 2)
        kinds[people] = 1
    return kinds
