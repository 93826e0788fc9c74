"""Conflict detection between G_{t-1} and a new fragment G'_t, in two stages.

Stage (a), symbolic: a functional property (vocab.FUNCTIONAL) that gets a second value; a new
number for the same subject and minted relation (a measurement has one current value); opposite
relations between the same pair (likes / dislikes, rel:x / rel:not_x); and OWL-RL closure (owlrl)
errors such as an individual typed by two disjoint classes. Stage (b): the paper's Appendix E
prompt over the Turtle of both graphs (strong LLMs), or, for a weak local model, a yes/no choice
scored by likelihood for each same-subject same-predicate pair. Every detector returns the triples
of G_{t-1} to prune, each with the reason, never touching the graphs it reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import owlrl
from rdflib import OWL, RDF, RDFS, Graph, URIRef

from core.llm.base import LLM, LLMOutputError, Message, ScoringUnsupported
from core.llm.prompts import render_prompt
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.literals import is_amount
from core.methods.dsmart.vocab import FUNCTIONAL, OPPOSITES, RELATION_BASE, bind_prefixes, label_of, ontology, parse_rdf

Triple = tuple


@dataclass(frozen=True)
class Conflict:
    triple: Triple  # the triple of G_{t-1} to prune
    reason: str
    rule: str  # "functional" | "opposite" | "disjoint" | "llm"


def describe(graph: Graph, triple: Triple) -> str:
    s, p, o = triple
    return f"{label_of(graph, s)} {label_of(graph, p)} {label_of(graph, o)}"


# -- stage (a): symbolic ---------------------------------------------------------------------------
def functional_conflicts(old: Graph, fragment: Graph) -> list[Conflict]:
    """(s, p, o') in G_{t-1} with p functional and (s, p, o) in G'_t, o != o'."""
    out = []
    for s, p, o in fragment:
        if p not in FUNCTIONAL:
            continue
        for stale in old.objects(s, p):
            if stale != o and (s, p, stale) not in fragment:
                why = f"{label_of(old, p)} is functional: new value {o} replaces {stale}"
                out.append(Conflict((s, p, stale), why, "functional"))
    return out


def numeric_update_conflicts(old: Graph, fragment: Graph) -> list[Conflict]:
    """A minted relation with a number ("pre-approved for $350,000", "read to page 200") reads as a
    measurement with one current value: a new number for the same subject and relation supersedes
    the old one. (Fixed properties declare their own cardinality and are left to the functional rule.)"""
    out = []
    for s, p, o in fragment:
        if not (is_amount(o) and str(p).startswith(RELATION_BASE)):
            continue
        for stale in old.objects(s, p):
            if is_amount(stale) and stale != o and (s, p, stale) not in fragment:
                out.append(Conflict((s, p, stale), f"{label_of(old, p)}: the new number {o} supersedes {stale}", "numeric"))
    return out


def opposite(predicate: URIRef) -> URIRef | None:
    for a, b in OPPOSITES:
        if predicate == a:
            return b
        if predicate == b:
            return a
    text = str(predicate)
    if text.startswith(RELATION_BASE):
        local = text[len(RELATION_BASE) :]
        return URIRef(RELATION_BASE + (local[4:] if local.startswith("not_") else "not_" + local))
    return None


def opposite_conflicts(old: Graph, fragment: Graph) -> list[Conflict]:
    """'I like coffee' then 'I don't like coffee': the old, opposite relation goes."""
    out = []
    for s, p, o in fragment:
        q = opposite(p)
        if q is not None and (s, q, o) in old:
            out.append(Conflict((s, q, o), f"contradicted by the new {label_of(fragment, p)}", "opposite"))
    return out


_DISJOINT = re.compile(r"Disjoint classes (\S+) and (\S+) have a common individual (\S+)")


def neighbourhood(old: Graph, fragment: Graph) -> Graph:
    """The part of G_{t-1} a fragment can clash with: everything about the fragment's nodes, plus
    the class hierarchy. Closure over this stays fast while the whole graph grows."""
    nodes = {t for triple in fragment for t in (triple[0], triple[2]) if isinstance(t, URIRef)}
    local = Graph()
    for n in nodes:
        for p, o in old.predicate_objects(n):
            local.add((n, p, o))
    for triple in old.triples((None, RDFS.subClassOf, None)):
        local.add(triple)
    return local


def reasoner_errors(graph: Graph) -> list[str]:
    """owlrl's OWL-RL inconsistency messages for `graph` plus the DSM axioms it touches (graph
    untouched). Only the relevant part of the TBox goes in: the closure's cost grows with every
    triple it holds, and axioms about classes and properties the graph never uses cannot fire."""
    work = Graph()
    for triple in graph:
        work.add(triple)
    for triple in relevant_axioms(graph):
        work.add(triple)
    closure = owlrl.OWLRL.OWLRL_Semantics(work, False, False, rdfs=False)
    closure.closure()
    return list(closure.error_messages)


def relevant_axioms(graph: Graph) -> list[Triple]:
    """Ontology triples about the classes (with their superclasses) and properties `graph` uses."""
    schema = ontology()
    terms: set = set(graph.predicates())
    for cls in set(graph.objects(None, RDF.type)):
        terms |= superclasses(graph, cls)
    return [t for t in schema if t[0] in terms]


def disjoint_conflicts(old: Graph, fragment: Graph, pruned: Iterable[Triple]) -> tuple[list[Conflict], list[str]]:
    """Closure over (neighbourhood \\ pruned) U G'_t; for each 'disjoint classes share an
    individual' error, prune the individual's old class assertions that the new types clash with."""
    local = neighbourhood(old, fragment)
    for triple in pruned:
        local.remove(triple)
    merged = local + fragment
    errors = reasoner_errors(merged)
    out = []
    for message in errors:
        m = _DISJOINT.search(message)
        if not m:
            continue
        x = URIRef(m.group(3))
        clash = {URIRef(m.group(1)), URIRef(m.group(2))}
        for cls in list(old.objects(x, RDF.type)):
            if (x, RDF.type, cls) in fragment or cls == OWL.NamedIndividual:
                continue
            if superclasses(merged, cls) & clash and not superclasses(merged, cls) >= clash:
                out.append(Conflict((x, RDF.type, cls), f"disjoint with the new type ({message})", "disjoint"))
    return out, errors


def superclasses(graph: Graph, cls: URIRef) -> set:
    seen, todo = set(), [cls]
    schema = ontology()
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        todo += list(graph.objects(c, RDFS.subClassOf)) + list(schema.objects(c, RDFS.subClassOf))
    return seen


# -- stage (b): LLM --------------------------------------------------------------------------------
_TURTLE_BLOCK = re.compile(r"```(?:turtle|ttl)?\s*(.*?)```", re.DOTALL)


def turtle(graph: Graph) -> str:
    return bind_prefixes(graph).serialize(format="turtle")


def llm_conflicts_prompted(llm: LLM, old: Graph, fragment: Graph, temperature: float) -> list[Conflict]:
    """The paper's conflict-resolution prompt; returned triples are validated (must be in G_{t-1}).
    Raises LLMOutputError when the reply has no parsable Turtle block."""
    origin = neighbourhood(old, fragment)
    if not any(is_fact(t) for t in fragment) or not any(is_fact(t) for t in origin):
        return []  # no new fact, or no old fact about the new one's nodes: nothing the model could prune
    prompt = render_prompt("dsmart_conflicts", origin_rdf=turtle(origin), new_rdf=turtle(fragment))
    text = llm.chat([Message("user", prompt)], temperature=temperature, max_tokens=600).text
    blocks = _TURTLE_BLOCK.findall(text)
    if not blocks:
        raise LLMOutputError(f"no ```turtle block in the conflict reply: {text[:160]!r}")
    body = blocks[0].strip()
    if not body:
        return []
    prefixes = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in bind_prefixes(Graph()).namespaces() if p)
    try:
        returned = parse_rdf(prefixes + body, "turtle")
    except ValueError as err:
        raise LLMOutputError(f"conflict reply is not valid Turtle: {err}") from err
    return [Conflict(t, "the LLM judged it contradicted by the new fragment", "llm") for t in returned if t in old]


def llm_conflicts_scored(llm: LLM, old: Graph, fragment: Graph, known: Iterable[Triple] = ()) -> list[Conflict]:
    """Weak models: for each old fact sharing subject and (non-functional) predicate with a new fact,
    score 'yes'/'no' to 'can both facts be true at the same time?'.

    Only questions whose answer can change the result are asked: none about an old fact already
    pruned (`known`, stage (a)), none twice, and once an old fact is judged replaced its other pairs
    are not asked. Each pass asks the next pair of every old fact still standing, as one batch."""
    known = set(known)
    pending: dict[Triple, list[str]] = {}  # old fact -> its questions, in order
    for s, p, o in fragment:
        if p in FUNCTIONAL or not is_fact((s, p, o)) or p == RDF.type:
            continue
        for stale in old.objects(s, p):
            triple = (s, p, stale)
            if stale == o or triple in fragment or triple in known:
                continue
            question = (f"Old fact: {describe(old, triple)}.\nNew fact: {describe(fragment, (s, p, o))}.\n"
                        "Can both facts be true at the same time? Answer yes or no.")
            if question not in pending.setdefault(triple, []):
                pending[triple].append(question)
    out = []
    while pending:
        # sorted: requests that follow each other share their longest prefix (the backend's prompt cache)
        batch = sorted(((triple, questions.pop(0)) for triple, questions in pending.items()), key=lambda b: b[1])
        try:
            scores = llm.score_batch([([Message("user", q)], ["yes", "no"]) for _, q in batch])
        except ScoringUnsupported:
            return out
        for (triple, _), (yes, no) in zip(batch, scores):
            if no / len("no") > yes / len("yes"):  # as `LLM.choose`: mean log-likelihood per character
                out.append(Conflict(triple, "the LLM scored the two facts as incompatible", "llm"))
                del pending[triple]
            elif not pending[triple]:
                del pending[triple]
    return out
