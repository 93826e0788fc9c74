"""`base`: the plain LLM, answering from the dialogue history alone (the papers' baseline)."""

from __future__ import annotations

from core.config import BaseConfig
from core.dialogue import Dialogue, Reply
from core.methods.layout import layout_prompt
from core.methods.method import Method, Stopwatch
from core.methods.render import chat_system


class PlainMethod(Method):
    name = "base"
    label = "Plain LLM"
    description = "The model sees the recent dialogue history and nothing else."

    @classmethod
    def default_config(cls) -> BaseConfig:
        return BaseConfig()

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        gen = self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        with watch("build_prompt"):
            messages = layout_prompt(chat_system(gen.reply_sentences), dialogue.turns(), query, gen.max_history_chars)
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        return self._reply(text, watch, calls0, messages)
