"""Concept nodes: the nouns and noun phrases that link knowledge sentences (section III-C).

A sentence's concepts are its spaCy noun chunks, lemmatised and lower-cased without determiners
and pronouns ("Isolated organs" -> "isolated organ"), plus each chunk's head noun ("organ") so
that sentences meet through shared heads, plus the GenericsKB term column when there is one.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

_SKIP_POS = {"DET", "PRON", "PUNCT", "NUM", "SYM", "X", "SPACE", "CCONJ", "ADP", "PART"}


def _clean(lemma: str) -> str:
    return " ".join(lemma.lower().replace("-", " ").split())


def _ok(concept: str, stop: set[str]) -> bool:
    return len(concept) > 1 and not concept.isdigit() and concept not in stop and any(c.isalpha() for c in concept)


def doc_concepts(doc, max_words: int = 4, extra: Iterable[str] = ()) -> list[str]:
    """Concepts of one parsed spaCy doc, in order of appearance, without repeats."""
    from spacy.lang.en.stop_words import STOP_WORDS

    out: dict[str, None] = {}
    for term in extra:
        term = _clean(term)
        if _ok(term, STOP_WORDS):
            out.setdefault(term, None)
    for chunk in doc.noun_chunks:
        tokens = [t for t in chunk if t.pos_ not in _SKIP_POS and not t.is_punct]
        phrase = _clean(" ".join(t.lemma_ for t in tokens))
        if phrase and len(phrase.split()) <= max_words and _ok(phrase, STOP_WORDS):
            out.setdefault(phrase, None)
        head = chunk.root
        if head.pos_ in ("NOUN", "PROPN"):
            lemma = _clean(head.lemma_)
            if _ok(lemma, STOP_WORDS):
                out.setdefault(lemma, None)
    return list(out)


def extract_concepts(nlp, texts: Sequence[str], terms: Sequence[str] | None = None, max_words: int = 4,
                     batch_size: int = 256, progress: Callable[[float], None] | None = None,
                     n_process: int = 1) -> list[list[str]]:
    """Concepts of each text (parsed in batches, NER off: only tags, parse and lemmas are used).
    `progress(fraction)` after each batch: the parse is a third of a KB build's time. `n_process`
    > 1: spaCy's own multiprocessing parses the batches in that many processes (docs in order)."""
    disable = [p for p in ("ner",) if p in nlp.pipe_names]
    docs = nlp.pipe(list(texts), batch_size=batch_size, disable=disable, n_process=max(1, n_process))
    out = []
    for i, doc in enumerate(docs):
        out.append(doc_concepts(doc, max_words, [terms[i]] if terms else ()))
        if progress and (i + 1) % batch_size == 0:
            progress((i + 1) / len(texts))
    if progress:
        progress(1.0)
    return out
