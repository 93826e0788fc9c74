"""`mem0`: the mem0 memory library (`mem0ai`, pinned) as one more chat method.

Each round (a user turn and the reply to it) goes to mem0's `Memory.add`, which asks the LLM for
the facts worth keeping (one JSON extraction call; mem0 2.x's pipeline is add-only, so its events
are ADD, duplicates being skipped by hash) and stores them with their embeddings. A reply searches
mem0 (`Memory.search`, its threshold and scoring) and answers from the memories found plus the
latest turns. Rounds are added in a background worker, as D-SMART maintains its graph: a reply
reads what is added so far and says so while mem0 is still adding. The memory (mem0's Qdrant
points and SQLite history) is saved with the conversation (`save_state`).

What each round cost is kept (`records`): LLM calls, prompt and completion tokens, seconds, and the
extraction replies that were not mem0's JSON (counted, shown in the trace, never a crash).
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from core.dialogue import EVIDENCE_MEMORY, TRACE_STEPS, USER, Dialogue, Evidence, Reply, Trace, TraceNode, Turn
from core.llm import cost
from core.methods.layout import layout_prompt, memory_message
from core.methods.mem0.config import Mem0Config
from core.methods.mem0.library import export_state, import_state, new_memory
from core.methods.mem0.offline import CallLog, load_mem0
from core.methods.method import Method, Progress, Stopwatch, prompt_record, turn_line
from core.methods.render import chat_system
from core.timeref import anchor_dated

STATE_VERSION = 1
USER_ID = "user"  # each conversation has its own mem0 store; the id scopes mem0's queries inside it


@dataclass(frozen=True)
class RoundRecord:
    """One `Memory.add` of a round: mem0's events and what the call cost."""

    index: int
    turn_ids: tuple[str, ...]
    events: tuple[dict, ...] = ()  # mem0's results: {"event": "ADD", "memory": ..., "id": ...}
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    processed_tokens: int = 0  # prompt tokens the server computed (the rest came from its prompt cache)
    seconds: float = 0.0
    invalid_json: int = 0  # extraction replies that were not mem0's JSON
    too_long: int = 0  # prompts that did not fit the model's window (not sent)
    problems: tuple[str, ...] = ()  # what the invalid replies / errors were
    error: str = ""  # mem0 raised (its LLMError, VectorStoreError ...): the round added nothing


@dataclass
class _Pending:
    rounds: dict[int, list[Turn]] = field(default_factory=dict)  # submitted, not yet stored
    futures: list[Future] = field(default_factory=list)


class Mem0Method(Method):
    name = "mem0"
    label = "mem0 (the memory library, v2.2.1)"
    description = ("mem0's own pipeline (mem0ai 2.2.1): an LLM extracts facts from each round into memories "
                   "(add-only), a reply searches them by embedding; run offline on this workbench's LLM and embedder. "
                   "Its extraction prompt is ~8,000 tokens (the embedded model's default 12,288-token window holds it; "
                   "a smaller WORKBENCH_LLM_N_CTX / --n-ctx refuses each round, counted in the trace); on 2 CPU cores "
                   "a round takes seconds to a minute to add, in the background.")

    def __init__(self, tools, config: Mem0Config | None = None) -> None:
        super().__init__(tools, config)
        self.log = CallLog()
        self.records: list[RoundRecord] = []
        self.search_seconds: list[float] = []
        self._memory = None
        self._creating = threading.Lock()
        self._lock = threading.Lock()  # mem0's stores: one writer or reader at a time (not held during LLM calls)
        self._pending = _Pending()
        self._pending_user: Turn | None = None
        self._rounds = 0
        self._shown = 0  # records already shown in a reply's trace
        self._executor: ThreadPoolExecutor | None = None

    @classmethod
    def default_config(cls) -> Mem0Config:
        return Mem0Config()

    @property
    def memory(self):
        with self._creating:  # the worker's first round and a reply may both be first
            if self._memory is None:
                load_mem0()
                cfg = self.config
                self._memory = new_memory(self.tools.llm, self.tools.need_embedder(), self.log,
                                          cfg.extraction_temperature, cfg.extraction_max_tokens)
                self.log.lock = self._lock
        return self._memory

    # -- adding rounds ---------------------------------------------------------------------------
    def observe(self, turn: Turn) -> None:
        """A user turn waits for its reply; the pair goes to mem0 as one `add`."""
        self.observed += 1
        if turn.role == USER:
            if self._pending_user is not None:  # two user turns in a row: the first had no reply
                self._submit([self._pending_user])
            self._pending_user = turn
            return
        turns = [self._pending_user, turn] if self._pending_user is not None else [turn]
        self._pending_user = None
        self._submit(turns)

    def flush(self) -> None:
        """Add a trailing user turn that never got a reply (the end of a benchmark dialogue)."""
        if self._pending_user is not None:
            turn, self._pending_user = self._pending_user, None
            self._submit([turn])

    def _submit(self, turns: list[Turn]) -> None:
        index = self._rounds
        self._rounds += 1
        self._pending.rounds[index] = turns
        if not self.config.background:
            self._add_round(index, turns)
            return
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem0")
        context = contextvars.copy_context()  # the caller's cost meters count the round's LLM calls
        self._pending.futures.append(self._executor.submit(context.run, self._add_round, index, turns))

    def _add_round(self, index: int, turns: list[Turn]) -> RoundRecord:
        memory = self.memory  # loads mem0 (telemetry off) before anything of it is imported
        from mem0.exceptions import MemoryError as Mem0Error

        messages = [{"role": t.role if t.role in ("user", "assistant") else "user", "content": turn_line(t)} for t in turns]
        metadata = {"turn_ids": [t.turn_id for t in turns], "date": turns[-1].date}
        t0 = time.perf_counter()
        error = ""
        with cost.measure() as meter, cost.stage("mem0_add"), self._lock:
            self.log.holder = threading.get_ident()
            self.log.take()
            try:
                result = memory.add(messages, user_id=USER_ID, metadata=metadata)
            except Mem0Error as err:  # counted in the round's record and the method's stats, not hidden
                result, error = {"results": []}, f"{type(err).__name__}: {err}"[:300]
            calls = self.log.take()
            self.log.holder = 0
            del self._pending.rounds[index]
        used, work = meter.total(), cost.totals(meter.as_dict())
        record = RoundRecord(
            index=index, turn_ids=tuple(t.turn_id for t in turns),
            events=tuple({"event": r.get("event", ""), "memory": r.get("memory", ""), "id": r.get("id", "")}
                         for r in result.get("results", [])),
            llm_calls=used.llm_calls, prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens,
            processed_tokens=int(work.get("processed_tokens", 0)), seconds=round(time.perf_counter() - t0, 4),
            invalid_json=sum(1 for c in calls if c.invalid and not c.too_long),
            too_long=sum(1 for c in calls if c.too_long),
            problems=tuple(c.invalid for c in calls if c.invalid) + ((error,) if error else ()),
            error=error)
        self.records.append(record)
        return record

    def adding(self) -> int:
        """Rounds submitted and not yet stored."""
        return len(self._pending.rounds)

    def wait(self) -> None:
        pending, self._pending.futures = self._pending.futures, []
        for future in pending:
            future.result()

    # -- searching ---------------------------------------------------------------------------------
    def search(self, query: str, k: int) -> list[Evidence]:
        if k <= 0 or not query.strip():
            return []
        memory = self.memory
        t0 = time.perf_counter()
        with self._lock:
            found = memory.search(query, top_k=k, filters={"user_id": USER_ID}, threshold=self.config.threshold)
        self.search_seconds.append(time.perf_counter() - t0)
        out = []
        for r in found.get("results", []):
            meta = r.get("metadata") or {}
            out.append(Evidence(text=r["memory"], score=float(r.get("score") or 0.0), source=str(r["id"]), kind=EVIDENCE_MEMORY,
                                meta={"date": meta.get("date", ""), "turn_ids": tuple(meta.get("turn_ids", ())),
                                      "created_at": r.get("created_at", "")}))
        return out

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        self.sync(dialogue)
        return self.search(query, k)

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        cfg, gen = self.config, self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        for turn in dialogue.turns()[self.observed:]:  # turns not seen yet (no waiting for them)
            self.observe(turn)
        if self.adding():
            self._progress(Progress("memory", f"mem0 is still adding {self.adding()} round(s); answering from "
                                              f"the {self._count()} memories added so far"))
        with watch("retrieve"):
            evidence = self.search(query, cfg.top_k)
        with watch("build_prompt"):
            # the chat prompt every method shares (core.methods.layout): the memories after the conversation
            listed = "\n".join(f"- {self._memory_line(e)}" for e in evidence)
            messages = layout_prompt(chat_system(gen.reply_sentences), dialogue.turns(), query, gen.max_history_chars,
                                     memory_message(listed))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        trace = Trace(TRACE_STEPS, nodes=self.trace_nodes(evidence), prompt=prompt_record(messages))
        return self._reply(text, watch, calls0, messages, evidence, trace)

    def _memory_line(self, e: Evidence) -> str:
        """A memory as the reply's prompt shows it: relative times resolved against its round's day."""
        return anchor_dated(e.text, e.meta.get("date", "")) if self.config.anchor_time else e.text

    def _count(self) -> int:
        with self._lock:
            return int(self.memory.vector_store.client.count(self.memory.vector_store.collection_name).count)

    def trace_nodes(self, evidence: list[Evidence]) -> tuple[TraceNode, ...]:
        """mem0's events of the rounds added since the last reply (ADD / UPDATE / DELETE / NONE with
        the texts, invalid extraction replies), the rounds still being added, and the search's hits."""
        records, self._shown = self.records[self._shown:], len(self.records)
        nodes: list[TraceNode] = []
        for rec in records:
            rid = f"round{rec.index}"
            label = f"round {rec.index + 1}: " + (", ".join(f"{e['event']} {n}" for e, n in _event_counts(rec)) or "nothing added")
            nodes.append(TraceNode(rid, label, None, None, 0, False, {
                "turn_ids": list(rec.turn_ids), "llm_calls": rec.llm_calls, "prompt_tokens": rec.prompt_tokens,
                "seconds": rec.seconds, "invalid_json": rec.invalid_json, "too_long": rec.too_long, "error": rec.error}))
            for j, e in enumerate(rec.events):
                nodes.append(TraceNode(f"{rid}.{j}", f"{e['event']}: {e['memory']}", rid, None, 1, e["event"] != "NONE",
                                       {"event": e["event"], "memory": e["memory"], "id": e["id"]}))
            for j, problem in enumerate(rec.problems):
                nodes.append(TraceNode(f"{rid}.p{j}", f"extraction failed: {problem}", rid, None, 1, False,
                                       {"event": "INVALID", "problem": problem}))
        if self.adding():
            nodes.append(TraceNode("adding", f"still adding {self.adding()} round(s)", None, None, 0, False,
                                   {"rounds": sorted(self._pending.rounds)}))
        nodes.append(TraceNode("search", f"search: {len(evidence)} memories", None, None, 0, True, {}))
        for j, e in enumerate(evidence):
            nodes.append(TraceNode(f"hit{j}", e.text, "search", e.score, 1, True, {"id": e.source, **e.meta}))
        return tuple(nodes)

    # -- persistence -------------------------------------------------------------------------------
    def save_state(self) -> bytes | None:
        """mem0's stores plus the rounds not yet stored (added again after a load)."""
        memory = self.memory
        with self._lock:
            state = {"version": STATE_VERSION, "store": export_state(memory), "rounds": self._rounds,
                     "pending_user": _turn_dict(self._pending_user) if self._pending_user else None,
                     "queued": [[_turn_dict(t) for t in turns] for _, turns in sorted(self._pending.rounds.items())],
                     "records": [asdict(r) for r in self.records]}
        return json.dumps(state).encode("utf-8")

    def load_state(self, data: bytes, observed: int) -> None:
        state = json.loads(data.decode("utf-8"))
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"mem0 state version {state.get('version')!r}; this build reads {STATE_VERSION}")
        self.wait()
        self._memory = None
        memory = self.memory
        with self._lock:
            import_state(memory, state["store"])
        self.records = [_record(r) for r in state.get("records", [])]
        self._shown = len(self.records)
        self._pending = _Pending()
        self._rounds = len(self.records)
        pending = state.get("pending_user")
        self._pending_user = Turn(**pending) if pending else None
        self.observed = observed
        for turns in state.get("queued", []):
            self._submit([Turn(**t) for t in turns])

    # -- figures -----------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Per added round: LLM calls, prompt tokens, seconds; invalid extraction replies; search times."""
        return summarise(self.records, self.search_seconds)


def summarise(records: list[RoundRecord], search_seconds: list[float]) -> dict:
    """The cost table's figures over `records` (added rounds) and `search_seconds`."""
    from statistics import mean

    out = {"rounds": len(records), "memories_added": sum(1 for r in records for e in r.events if e["event"] == "ADD"),
           "invalid_json": sum(r.invalid_json for r in records), "prompt_too_long": sum(r.too_long for r in records),
           "errors": sum(1 for r in records if r.error), "searches": len(search_seconds)}
    if records:
        out.update({"llm_calls_per_round": round(mean(r.llm_calls for r in records), 3),
                    "prompt_tokens_per_round": round(mean(r.prompt_tokens for r in records), 1),
                    "completion_tokens_per_round": round(mean(r.completion_tokens for r in records), 1),
                    "processed_tokens_per_round": round(mean(r.processed_tokens for r in records), 1),
                    "seconds_per_round": round(mean(r.seconds for r in records), 3),
                    "seconds_per_round_p95": round(_quantile([r.seconds for r in records], 0.95), 3)})
    if search_seconds:
        out.update({"search_p50_s": round(_quantile(search_seconds, 0.5), 4),
                    "search_p95_s": round(_quantile(search_seconds, 0.95), 4)})
    return out


def _event_counts(rec: RoundRecord):
    counts: dict[str, int] = {}
    for e in rec.events:
        counts[e["event"]] = counts.get(e["event"], 0) + 1
    return [({"event": k}, n) for k, n in counts.items()]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _turn_dict(turn: Turn) -> dict:
    return asdict(turn)


def _record(data: dict) -> RoundRecord:
    return RoundRecord(**{**data, "turn_ids": tuple(data["turn_ids"]), "events": tuple(data["events"]),
                          "problems": tuple(data["problems"])})
