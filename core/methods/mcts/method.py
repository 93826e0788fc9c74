"""`mcts`: answer with reasoning-aware commonsense knowledge (the paper's knowledge-grounded
response, section IV-F). Each reply: the reasoner infers from the latest turns, the two-phase
MCTS retrieves 5 knowledge sentences from the KB, and the LLM answers with them in the prompt.
The KB (GenericsKB by default, any file of that format via `MCTSConfig.kb.path`) is static, so
there is no dialogue memory to maintain; evidence and the search tree go with the reply."""

from __future__ import annotations

from dataclasses import dataclass

from core.dialogue import Dialogue, Evidence, Reply, Trace
from core.llm.prompts import render_prompt
from core.methods.render import chat_system
from core.methods.mcts.config import MCTSConfig
from core.methods.layout import layout_prompt, memory_message
from core.methods.method import Method, Stopwatch, prompt_record, recent_turns, turn_line


@dataclass
class KnowledgeTools:
    """The KB, its search and the reasoner, loaded once per method instance."""

    kb: object
    search: object
    reasoner: object | None


class MCTSMethod(Method):
    name = "mcts"
    label = "MCTS knowledge retrieval"
    description = ("Reasoning-aware commonsense retrieval (MCTS over GenericsKB: concept bridging, then retrieval "
                   "for the reasoner's inferences). The reasoner is the configured LLM standing in for COMET.")

    def __init__(self, tools, config: MCTSConfig | None = None) -> None:
        super().__init__(tools, config)
        self._parts: KnowledgeTools | None = None

    @classmethod
    def default_config(cls) -> MCTSConfig:
        return MCTSConfig()

    def parts(self) -> KnowledgeTools:
        if self._parts is None:
            from core.methods.mcts.prepare import shared_kb
            from core.methods.mcts.reasoner import Reasoner
            from core.methods.mcts.retriever import KnowledgeSearch

            cfg, embedder = self.config, self.tools.need_embedder()
            kb = shared_kb(cfg.kb.path, embedder, cfg.kb)
            reasoner = Reasoner(self.tools.llm, embedder, cfg.reasoner, cfg.kb.cache_dir or None) if cfg.use_reasoner else None
            self._parts = KnowledgeTools(kb, KnowledgeSearch(kb, embedder, cfg), reasoner)
        return self._parts

    def context_lines(self, dialogue: Dialogue, query: str) -> list[str]:
        return [turn_line(t) for t in recent_turns(dialogue, self.config.recent_turns)] + [f"User: {query}"]

    def search(self, dialogue: Dialogue, query: str, watch: Stopwatch | None = None):
        """The MCTSResult for the context ending with `query`."""
        watch = watch or Stopwatch()
        with watch("load_kb"):
            parts = self.parts()
        lines = self.context_lines(dialogue, query)
        if parts.reasoner is not None and self._watched():
            # Knowledge for the context alone (the "w/o reasoner" search, ~0.05 s on the 50k KB) is on
            # screen within a second; the reasoner's LLM calls take seconds, and their search replaces it.
            with watch("search_context"):
                early = parts.search.run(lines, None, self.config.top_k)
            self._show(self.trace(early, phase="context"))
        with watch("reason"):
            reasoning = parts.reasoner.infer(lines) if parts.reasoner else None
        if reasoning is not None:  # the inferences, on screen while the trees are searched
            self._show(self.reasoning_trace(reasoning))
        with watch("search"):
            return parts.search.run(lines, reasoning, self.config.top_k)

    def trace(self, result, prompt: tuple = (), phase: str = "searched") -> Trace:
        from core.methods.mcts.retriever import result_trace

        return result_trace(result, self.parts().kb, prompt, phase)

    def reasoning_trace(self, reasoning) -> Trace:
        """The partial trace of a reply whose reasoner has run and whose search has not."""
        from core.methods.mcts.retriever import MCTSResult, result_trace

        return result_trace(MCTSResult((), reasoning, (), (), 0, ()), self.parts().kb, phase="reasoned")

    def retrieve(self, dialogue: Dialogue, query: str, k: int) -> list[Evidence]:
        return list(self.search(dialogue, query).knowledge[:k])

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        gen = self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        result = self.search(dialogue, query, watch)
        self._show(self.trace(result))  # the knowledge and the trees, before the answer streams
        with watch("build_prompt"):
            # the paper's knowledge block, after the conversation (core.methods.layout): none when none was found
            knowledge = "\n".join(f"- {e.text}" for e in result.knowledge)
            messages = layout_prompt(chat_system(gen.reply_sentences), dialogue.turns(), query, gen.max_history_chars,
                                     memory_message(knowledge, header=render_prompt("mcts_response")))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        return self._reply(text, watch, calls0, messages, result.knowledge, self.trace(result, prompt_record(messages)))
