"""mem0's LLM and embedder interfaces over the workbench's models (see `library`'s docstring).
Importing it runs `load_mem0` first (telemetry off), then registers both adapters with mem0's
factories (`LlmFactory.register_provider`; the embedder factory has no such call: its table)."""

from __future__ import annotations

import json

import numpy as np

from core.llm.base import LLM, LLMOutputError, Message
from core.methods.mem0.offline import PROVIDER, CallLog, CallRecord, load_mem0, mem0_shape_problem

load_mem0()  # noqa: E402 - before mem0's modules are imported below

from mem0.configs.llms.base import BaseLlmConfig  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402
from mem0.llms.base import LLMBase  # noqa: E402
from mem0.utils.factory import EmbedderFactory, LlmFactory  # noqa: E402


class WorkbenchLlmConfig(BaseLlmConfig):
    """mem0's LLM config, carrying the project's LLM and the log of what mem0 asked of it."""

    def __init__(self, llm: LLM, log: CallLog, temperature: float = 0.1, max_tokens: int = 600, **_) -> None:
        super().__init__(model=llm.name, temperature=temperature, max_tokens=max_tokens)
        self.llm, self.log = llm, log


class WorkbenchLLM(LLMBase):
    """mem0's `generate_response` through the project's LLM protocol (cost meters, cancel, one model)."""

    def generate_response(self, messages, response_format=None, tools=None, tool_choice="auto", **kwargs):
        cfg = self.config
        llm: LLM = cfg.llm
        msgs = [Message(m["role"], m["content"]) for m in messages]
        wants_json = isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema")
        record = CallRecord("json" if wants_json else "text")
        cfg.log.calls.append(record)
        window = int(getattr(getattr(llm, "options", None), "n_ctx", 0) or 0)
        if window:  # a prompt cut to the window would lose the new messages: say so instead of sending it
            record.prompt_tokens = llm.count_prompt_tokens(msgs)
            if record.prompt_tokens + cfg.max_tokens + 8 > window:
                record.too_long = True
                record.invalid = (f"mem0's prompt is {record.prompt_tokens} tokens; with {cfg.max_tokens} to write it "
                                  f"does not fit the model's {window}-token window (not sent)")
                return ""
        with cfg.log.unlocked():
            if not wants_json:
                return llm.chat(msgs, temperature=cfg.temperature, max_tokens=cfg.max_tokens).text
            try:
                value = llm.json(msgs, {"type": "object"}, temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                                 retries=0)
            except LLMOutputError as err:
                record.invalid = str(err)[:300]
                return ""
        problem = mem0_shape_problem(value)
        if problem:
            record.invalid = problem
            return ""
        return json.dumps(value)


class WorkbenchEmbedding(EmbeddingBase):
    """mem0's embedder interface over the project's sentence embedder (`config.model`)."""

    def embed(self, text, memory_action=None):
        return self.embed_batch([text], memory_action)[0]

    def embed_batch(self, texts, memory_action="add"):
        return np.asarray(self.config.model.encode(list(texts)), dtype=np.float32).tolist()


LlmFactory.register_provider(PROVIDER, f"{__name__}.WorkbenchLLM", WorkbenchLlmConfig)
EmbedderFactory.provider_to_class[PROVIDER] = f"{__name__}.WorkbenchEmbedding"
