"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio.

Batches run as concurrent requests. Scoring uses the legacy completions endpoint with
`echo=True, logprobs` (vLLM and llama.cpp serve it; OpenAI's chat models do not): when the
endpoint refuses, scoring is marked unsupported and callers take their fall-back path.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from core.config import LLMSettings
from core.llm.base import LLM, Completion, LLMError, Message, ScoringUnsupported


def _flat_prompt(messages: list[Message]) -> str:
    lines = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n".join(lines) + "\nAssistant:"


class OpenAICompatibleLLM(LLM):
    def __init__(self, settings: LLMSettings, max_concurrency: int = 8) -> None:
        super().__init__()
        import openai

        if not settings.model:
            raise LLMError("an OpenAI-compatible backend needs a model name")
        self.settings = settings
        self.name = settings.model
        self.supports_scoring = True  # until the endpoint says otherwise
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=settings.base_url or None,
            # Local servers (Ollama, vLLM) accept any key; the client insists on a non-empty one.
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )
        self._pool = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="llm")

    def _where(self) -> str:
        return self.settings.base_url or "the OpenAI API"

    def _redact(self, text: str) -> str:
        """Servers echo request details in errors; the key never reaches a message, page or log."""
        key = self.settings.api_key
        return text.replace(key, "***") if key else text

    def _wrap(self, err: Exception) -> LLMError:
        return LLMError(self._redact(self._describe(err)))

    def _describe(self, err: Exception) -> str:
        o = self._openai
        if isinstance(err, o.APITimeoutError):
            return (f"{self._where()} did not answer within {self.settings.timeout_s:g} s "
                    f"(the timeout is a backend setting on the home page)")
        if isinstance(err, o.APIConnectionError):
            return f"cannot reach {self._where()}: is the server running and the URL right?"
        if isinstance(err, o.AuthenticationError):
            return f"{self._where()} refused the API key (401)"
        if isinstance(err, o.NotFoundError):
            return f"{self._where()} has no model '{self.settings.model}' (404)"
        if isinstance(err, o.RateLimitError):
            return f"{self._where()} is rate-limiting requests (429): wait a moment and try again"
        if isinstance(err, o.InternalServerError):
            return f"{self._where()} had a server error (HTTP {err.status_code}): try again, or check the server's log"
        if isinstance(err, o.APIStatusError):
            return f"{self._where()} answered HTTP {err.status_code}: {str(err.message)[:200]}"
        if isinstance(err, (ValueError, AttributeError, TypeError, IndexError)):  # the body was not the API's JSON
            return f"{self._where()} sent a malformed response ({type(err).__name__}: {str(err)[:120]})"
        return f"{self._where()}: {type(err).__name__}: {err}"

    def _one(self, messages: list[Message], temperature: float, max_tokens: int, stop) -> Completion:
        t0 = time.perf_counter()
        try:
            resp = self._client.chat.completions.create(
                model=self.settings.model,
                messages=[{"role": m.role, "content": m.content} for m in messages],
                temperature=temperature,
                max_tokens=max_tokens,
                stop=list(stop) if stop else None,
            )
        except (self._openai.OpenAIError, ValueError) as err:  # ValueError: a body that is not JSON
            raise self._wrap(err) from err
        try:
            if not resp.choices:
                raise LLMError(f"{self._where()} returned no choices")
            text = resp.choices[0].message.content or ""
            usage = resp.usage
        except (AttributeError, TypeError, IndexError) as err:  # JSON, but not a chat completion
            raise self._wrap(err) from err
        return Completion(
            text=self._redact(text if isinstance(text, str) else str(text)),  # a server that echoes the key
            model=getattr(resp, "model", None) or self.settings.model,
            seconds=time.perf_counter() - t0,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )

    def _stream(self, messages, *, temperature: float = 0.8, max_tokens: int = 200, stop=None, cancel=None):
        """Server-sent chunks of the reply; `cancel` (or closing the generator) closes the stream."""
        from core.llm.base import as_messages

        self._count(1)
        try:
            chunks = self._client.chat.completions.create(
                model=self.settings.model,
                messages=[{"role": m.role, "content": m.content} for m in as_messages(messages)],
                temperature=temperature, max_tokens=max_tokens, stop=list(stop) if stop else None, stream=True)
            try:
                yield from self._redacted(self._pieces(chunks, cancel))
            finally:
                chunks.close()
        except (self._openai.OpenAIError, ValueError) as err:  # ValueError: a chunk that is not JSON
            raise self._wrap(err) from err

    def _pieces(self, chunks, cancel):
        seen = 0
        for chunk in chunks:
            seen += 1
            if cancel is not None and cancel.is_set():
                return
            if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
        if not seen:  # not even an empty chunk: the server did not speak the streaming protocol
            raise LLMError(f"{self._where()} streamed no reply (is it an OpenAI-compatible server?)")

    def _redacted(self, pieces):
        """The pieces with the API key replaced, even when a server echoes it split over pieces:
        the last len(key) - 1 characters wait for the next piece."""
        key = self.settings.api_key
        if not key:
            yield from pieces
            return
        held = ""
        for piece in pieces:
            held = (held + piece).replace(key, "***")
            cut = max(0, len(held) - (len(key) - 1))
            if cut:
                yield held[:cut]
                held = held[cut:]
        if held:
            yield held.replace(key, "***")

    def _complete(self, batch, temperature, max_tokens, stop) -> list[Completion]:
        if len(batch) == 1:
            return [self._one(batch[0], temperature, max_tokens, stop)]
        futures = [self._pool.submit(self._one, m, temperature, max_tokens, stop) for m in batch]
        return [f.result() for f in futures]

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        if not self.supports_scoring:
            raise ScoringUnsupported(f"{self._where()} does not return prompt log-probabilities")
        prompt = _flat_prompt(messages) + " "
        return list(self._pool.map(lambda c: self._score_one(prompt, c), candidates))

    def _score_one(self, prompt: str, candidate: str) -> float:
        try:
            resp = self._client.completions.create(
                model=self.settings.model, prompt=prompt + candidate, echo=True, logprobs=1, max_tokens=0
            )
            lp = resp.choices[0].logprobs
            offsets, values = lp.text_offset, lp.token_logprobs
        except (self._openai.BadRequestError, self._openai.NotFoundError, AttributeError, TypeError, IndexError) as err:
            self.supports_scoring = False
            raise ScoringUnsupported(f"{self._where()} cannot score continuations: {err}") from err
        except (self._openai.OpenAIError, ValueError) as err:
            raise self._wrap(err) from err
        if not offsets or not values:
            self.supports_scoring = False
            raise ScoringUnsupported(f"{self._where()} returned no prompt log-probabilities")
        start = len(prompt)
        return float(sum(v for o, v in zip(offsets, values) if o >= start and v is not None))
