"""`rag`: chunk RAG over earlier turns. Each observed turn is embedded into a vector index; a
reply shows the conversation window every chat method shows (core.methods.layout) and, as memory,
the top-K turns most similar to the query among those the window no longer shows."""

from __future__ import annotations

from core.config import RAGConfig
from core.dialogue import EVIDENCE_TURN, Dialogue, Evidence, Reply, Turn
from core.methods.layout import asks_what_was_told, in_order_said, layout_prompt, memory_message, outside_window, shown_turn_ids
from core.methods.method import Method, Stopwatch, turn_line
from core.methods.render import chat_system, memory_notes
from core.timeref import anchor_dated
from core.vectors import VectorIndex


class RagMethod(Method):
    name = "rag"
    label = "Chunk RAG (turns)"
    description = "The conversation so far, plus the top-K older turns by embedding similarity that it no longer shows."

    def __init__(self, tools, config: RAGConfig | None = None) -> None:
        super().__init__(tools, config)
        self.index: VectorIndex | None = None

    @classmethod
    def default_config(cls) -> RAGConfig:
        return RAGConfig()

    def observe(self, turn: Turn) -> None:
        embedder = self.tools.need_embedder()
        if self.index is None:
            self.index = VectorIndex(embedder.dim)
        item = {"turn_id": turn.turn_id, "role": turn.role, "speaker": turn.speaker, "text": turn.text, "session": turn.session,
                "date": turn.date}
        self.index.add(embedder.encode([turn_line(turn)]), [item])
        self.observed += 1

    def retrieve(self, dialogue: Dialogue, query: str, k: int, exclude_last: int = 0) -> list[Evidence]:
        """Top-k earlier turns; `exclude_last` leaves out the newest turns (already in the prompt)."""
        self.sync(dialogue)
        if self.index is None or k <= 0:
            return []
        searchable = len(self.index) - exclude_last
        if searchable <= 0:
            return []
        hits = self.index.search(self.tools.need_embedder().encode([query]), len(self.index))[0]
        hits = [h for h in hits if h.id < searchable][:k]
        return [
            Evidence(
                text=f"{h.item['speaker'] or h.item['role'].capitalize()}: {self._shown(h.item)}",
                score=h.score,
                source=h.item["turn_id"],
                kind=EVIDENCE_TURN,
                meta={"session": h.item["session"]},
            )
            for h in hits
        ]

    def _shown(self, item: dict) -> str:
        """The turn's words, with relative times resolved against its day when `anchor_time`."""
        if not self.config.anchor_time:
            return item["text"]
        return anchor_dated(item["text"], item.get("date", ""))

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        cfg, gen = self.config, self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        turns = dialogue.turns()
        with watch("retrieve"):  # top-K of the turns the conversation window no longer shows (all, to a question of what was told)
            told = asks_what_was_told(turns, query)
            shown = set() if told else shown_turn_ids(turns, gen.max_history_chars)
            evidence = outside_window(self.retrieve(dialogue, query, cfg.top_k + len(shown)), shown)[:cfg.top_k]
            if told:
                evidence = in_order_said(evidence, turns)
        with watch("build_prompt"):
            messages = layout_prompt(chat_system(gen.reply_sentences), turns, query, gen.max_history_chars,
                                     memory_message(memory_notes(evidence)))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        return self._reply(text, watch, calls0, messages, evidence)
