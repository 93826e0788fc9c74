"""`base`: the plain LLM, answering from the dialogue history alone (the papers' baseline)."""

from __future__ import annotations

from core.config import BaseConfig
from core.dialogue import Dialogue, Reply, Trace
from core.llm.base import Message
from core.llm.prompts import render_prompt
from core.methods.method import Method, Stopwatch, history_messages


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
            messages = [Message("system", render_prompt("chat_system"))]
            messages += history_messages(dialogue.turns(), gen.max_history_chars)
            messages.append(Message("user", query))
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        return Reply(
            text=text,
            method=self.name,
            model=self.tools.llm.name,
            trace=Trace("prompt", prompt=tuple({"role": m.role, "content": m.content} for m in messages)),
            timings=watch.timings,
            llm_calls=self.tools.llm.calls - calls0,
        )
