"""`sgmem`: the SGMem chat method. Each observed turn is split into sentences, embedded and linked
into the sentence graph (incrementally); a reply retrieves the top-K chunks through the graph
(plus generated memories when configured) and answers with the paper's response prompt (B.1).

The memory is cheap to rebuild (embeddings are cached on disk, generated memories too), so it is
not persisted: after a reload `sync` replays the stored turns.
"""

from __future__ import annotations

from dataclasses import replace

from core.dialogue import EVIDENCE_SESSION, TRACE_STEPS, Dialogue, Evidence, Reply, Trace, TraceNode, Turn
from core.methods.layout import asks_what_was_told, in_order_said, layout_prompt, memory_message, outside_window, shown_turn_ids
from core.methods.method import Method, Stopwatch, prompt_record
from core.methods.render import chat_system, memory_notes
from core.methods.sgmem.config import LONGMEMEVAL_DEFAULTS, SGMemConfig
from core.methods.sgmem.memory import MemoryGenerator
from core.methods.sgmem.retriever import SGMemHits, SGMemRetriever


class SGMemMethod(Method):
    name = "sgmem"
    label = "SGMem (sentence graph memory)"
    description = ("Sentences of every turn in a KNN graph; the query's nearest sentences, expanded by graph hops, "
                   "rank turns/rounds/sessions by mean similarity (SGMem, LongMemEval defaults).")

    def __init__(self, tools, config: SGMemConfig | None = None) -> None:
        super().__init__(tools, config)
        provider = MemoryGenerator(tools.llm, self.config.memory_generation) if self.config.memory else None
        self.retriever = SGMemRetriever(tools.need_embedder(), self.config, provider)
        self._memory_stale = True

    @classmethod
    def default_config(cls) -> SGMemConfig:
        return LONGMEMEVAL_DEFAULTS  # chats are user-assistant dialogues, like LongMemEval's

    def observe(self, turn: Turn) -> None:
        self.retriever.add_turns([turn])
        self.observed += 1
        self._memory_stale = True

    def search(self, dialogue: Dialogue, query: str, k: int | None = None) -> SGMemHits:
        self.sync(dialogue)
        if self.config.memory and self._memory_stale:
            self.retriever.refresh_memory(dialogue)  # one LLM call per changed session (disk-cached)
            self._memory_stale = False
        return self.retriever.search(query, k)

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        hits = self.search(dialogue, query, k)
        return list(hits.chunks) + list(hits.memories)

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        cfg, gen = self.config, self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        turns = dialogue.turns()
        told = asks_what_was_told(turns, query)
        shown = set() if told else shown_turn_ids(turns, gen.max_history_chars)
        with watch("retrieve"):  # the turns the conversation window shows are in the prompt already (but to a question of what was told)
            hits = self.search(dialogue, query, cfg.top_k + len(shown))
        chunks = outside_window(hits.chunks, shown)[:cfg.top_k]
        if told:
            chunks = in_order_said(chunks, turns)
        evidence = chunks + list(hits.memories)
        with watch("build_prompt"):
            # the chat prompt every method shares (core.methods.layout); the paper's B.1 response
            # prompt ("multiple paragraphs ... in markdown") stays the benchmarks' reader
            messages = layout_prompt(chat_system(gen.reply_sentences), turns, query, gen.max_history_chars,
                                     memory_message(memory_notes(evidence)))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        trace = Trace(TRACE_STEPS, nodes=trace_nodes(self.retriever, hits), prompt=prompt_record(messages))
        return self._reply(text, watch, calls0, messages, evidence, trace)


class SGMemHybridMethod(SGMemMethod):
    """`sgmem-h`: the same chat method over the hybrid sentence graph (`sgmem-*+h`): sentence seeds
    from BM25 and the embedder fused, chunks scored by their best reached sentence mixed with BM25
    over whole chunks. Not in the paper; on held-out LoCoMo (categories 1-4, 491 questions) it
    reached recall@5 .532 / .600 / .833 (turn / round / session) against the paper's .389 / .414 /
    .590 (docs/retrieval.md). Turn chunks, as `sgmem`; settings calibrated for the embedder."""

    name = "sgmem-h"
    label = "SGMem hybrid (BM25 + dense seeds; not in the paper)"
    description = ("SGMem's sentence graph seeded by BM25 and dense similarity fused (not in the paper: our variant, "
                   "which retrieves better than the paper's on held-out LoCoMo); turns ranked by their best reached sentence.")

    def __init__(self, tools, config: SGMemConfig | None = None) -> None:
        if config is None:  # the hybrid settings chosen for this embedder (core.methods.sgmem.calibration)
            from core.methods.sgmem.calibration import hybrid_settings

            chat = self.default_config()
            config = replace(hybrid_settings(getattr(tools.need_embedder(), "name", ""), "turn"), generation=chat.generation)
        super().__init__(tools, config)


def context_text(evidence: list[Evidence]) -> str:
    """The relevant context C = K* + M* + F* + I*, one block per kind, dated where known."""
    if not evidence:
        return "(no memory yet)"
    blocks: dict[str, list[str]] = {}
    for e in evidence:
        date = e.meta.get("date", "")
        blocks.setdefault(e.kind, []).append(f"- [{date}] {e.text}" if date and e.kind != EVIDENCE_SESSION else f"- {e.text}")
    return "\n\n".join(f"{kind.capitalize()}s:\n" + "\n".join(lines) for kind, lines in blocks.items())


def trace_nodes(retriever: SGMemRetriever, hits: SGMemHits) -> tuple[TraceNode, ...]:
    """Seed sentences, their graph neighbours, and the ranked chunks, as a two-level tree."""
    nodes = [TraceNode("query", "query")]
    for i in hits.seeds:
        nodes.append(TraceNode(f"s{i}", retriever.graph.nodes[i].text, "query", hits.sentence_scores[i], 1, True,
                               {"turn_id": retriever.graph.nodes[i].turn_id, "role": "seed"}))
    for i in hits.expanded:
        nodes.append(TraceNode(f"s{i}", retriever.graph.nodes[i].text, "query", hits.sentence_scores[i], 1, False,
                               {"turn_id": retriever.graph.nodes[i].turn_id, "role": "hop"}))
    kept = {e.source for e in hits.chunks}
    for cid, score in hits.chunk_scores:
        nodes.append(TraceNode(f"chunk:{cid}", cid, "query", score, 2, cid in kept, {"role": "chunk"}))
    return tuple(nodes)
