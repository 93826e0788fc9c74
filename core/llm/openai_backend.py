"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio.

Batches run as concurrent requests. Scoring takes the best route the server offers, detected once
(`scoring_route`, core.llm.scoring_routes): prompt log-probabilities from /v1/completions with
`echo` + `logprobs` (vLLM), llama.cpp's native /completion with `n_probs` (token-trie scoring, as
the embedded backend does), or none: then `score` raises ScoringUnsupported and callers take their
fall-back path.

A base URL may name several servers of one model, comma-separated (core.llm.endpoint_pool): each
request goes to the server the fair queue chose for it, or, outside the queue, the least busy;
a server that refuses is skipped and the request asked of the next.
"""

from __future__ import annotations

import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Sequence

from core.config import LLMSettings
from core.llm import cancel as stopping
from core.llm.base import LLM, Completion, LLMError, Message, ScoringUnsupported
from core.llm.endpoint_pool import ServerUnreachable, pool_for, preferred_server, split_urls
from core.llm.scoring_routes import ECHO, LLAMACPP, NONE, ROUTE_NOTES, LlamaCppHttp, RouteMissing


def _flat_prompt(messages: list[Message]) -> str:
    lines = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n".join(lines) + "\nAssistant:"


_HTTP = None
_HTTP_LOCK = threading.Lock()


def shared_http_client():
    """One HTTP connection pool per process for every endpoint client. Building one costs ~30 ms of
    CPU (its TLS context loads the CA bundle), which every new chat session paid on its first
    message; an httpx client is thread-safe, and each request carries its own key and timeout, so
    sessions share connections, never credentials."""
    global _HTTP
    with _HTTP_LOCK:
        if _HTTP is None:
            import openai

            _HTTP = openai.DefaultHttpxClient()  # the client openai builds by default, made once
        return _HTTP


class OpenAICompatibleLLM(LLM):
    def __init__(self, settings: LLMSettings, max_concurrency: int = 8) -> None:
        super().__init__()
        import openai

        if not settings.model:
            raise LLMError("an OpenAI-compatible backend needs a model name")
        self.settings = settings
        self.name = settings.model
        self._route: str | None = None  # detected on first use
        self._route_lock = threading.Lock()
        self._native: LlamaCppHttp | None = None
        self._openai = openai
        self._urls = split_urls(settings.base_url)
        # a pool tries the next server instead of the client's retries (each waits 0.5-8 s)
        self._servers = pool_for(self._urls) if len(self._urls) > 1 else None
        self._clients = [openai.OpenAI(
            base_url=url or None,
            # Local servers (Ollama, vLLM) accept any key; the client insists on a non-empty one.
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0 if self._servers else settings.max_retries,
            http_client=shared_http_client(),
        ) for url in self._urls]
        self._pool = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="llm")

    def _where(self, k: int | None = None) -> str:
        if k is not None and self._servers is not None:
            return self._urls[k]
        return self.settings.base_url or "the OpenAI API"

    def _on_a_server(self, call):
        """`call(k)` on server k: the preferred one, or the next when one does not take it."""
        if self._servers is None:
            return call(0)
        last: ServerUnreachable | None = None
        for k in self._servers.order(preferred_server()):
            with self._servers.serving(k):
                try:
                    return call(k)
                except ServerUnreachable as err:
                    self._servers.mark_down(k)
                    last = err
        raise last

    def _redact(self, text: str) -> str:
        """Servers echo request details in errors; the key never reaches a message, page or log."""
        key = self.settings.api_key
        return text.replace(key, "***") if key else text

    def _wrap(self, err: Exception, k: int | None = None) -> LLMError:
        o = self._openai
        unreachable = ((isinstance(err, o.APIConnectionError) and not isinstance(err, o.APITimeoutError))
                       or (isinstance(err, o.InternalServerError) and err.status_code in (502, 503)))
        return (ServerUnreachable if unreachable else LLMError)(self._redact(self._describe(err, self._where(k))))

    def _describe(self, err: Exception, where: str) -> str:
        o = self._openai
        if isinstance(err, o.APITimeoutError):
            return (f"{where} did not answer within {self.settings.timeout_s:g} s "
                    f"(the timeout is a backend setting on the home page)")
        if isinstance(err, o.APIConnectionError):
            # no "?" at the end: pages append a full stop after the reason ("...right?." read wrong)
            return f"cannot reach {where}: check that the server is running and the URL is right"
        if isinstance(err, o.AuthenticationError):
            return f"{where} refused the API key (401)"
        if isinstance(err, o.NotFoundError):
            return f"{where} has no model '{self.settings.model}' (404)"
        if isinstance(err, o.RateLimitError):
            return f"{where} is rate-limiting requests (429): wait a moment and try again"
        if isinstance(err, o.InternalServerError):
            return f"{where} had a server error (HTTP {err.status_code}): try again, or check the server's log"
        if isinstance(err, o.APIStatusError):
            return f"{where} answered HTTP {err.status_code}: {str(err.message)[:200]}"
        if isinstance(err, (ValueError, AttributeError, TypeError, IndexError)):  # the body was not the API's JSON
            return f"{where} sent a malformed response ({type(err).__name__}: {str(err)[:120]})"
        return f"{where}: {type(err).__name__}: {err}"

    def models(self) -> list[str]:
        """The model ids the server lists at /v1/models (LLMError when it cannot be asked)."""
        return self._on_a_server(self._models_on)

    def _models_on(self, k: int) -> list[str]:
        try:
            return [str(m.id) for m in self._clients[k].models.list()]
        except self._openai.NotFoundError as err:
            raise LLMError(f"{self._where(k)} has no model list (/models answered 404)") from err
        except (self._openai.OpenAIError, ValueError, AttributeError, TypeError) as err:
            raise self._wrap(err, k) from err

    def _one(self, messages: list[Message], temperature: float, max_tokens: int, stop) -> Completion:
        return self._on_a_server(lambda k: self._one_on(k, messages, temperature, max_tokens, stop))

    def _one_on(self, k: int, messages: list[Message], temperature: float, max_tokens: int, stop) -> Completion:
        t0 = time.perf_counter()
        try:
            resp = self._clients[k].chat.completions.create(
                model=self.settings.model,
                messages=[{"role": m.role, "content": m.content} for m in messages],
                temperature=temperature,
                max_tokens=max_tokens,
                stop=list(stop) if stop else None,
            )
        except (self._openai.OpenAIError, ValueError) as err:  # ValueError: a body that is not JSON
            raise self._wrap(err, k) from err
        try:
            if not resp.choices:
                raise LLMError(f"{self._where(k)} returned no choices")
            text = resp.choices[0].message.content or ""
            usage = resp.usage
        except (AttributeError, TypeError, IndexError) as err:  # JSON, but not a chat completion
            raise self._wrap(err, k) from err
        return Completion(
            text=self._redact(text if isinstance(text, str) else str(text)),  # a server that echoes the key
            model=getattr(resp, "model", None) or self.settings.model,
            seconds=time.perf_counter() - t0,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )

    def _stream(self, messages, *, temperature: float = 0.8, max_tokens: int = 200, stop=None, cancel=None):
        """Server-sent chunks of the reply; `cancel` (or closing the generator) closes the stream.
        In a pool, a server that does not take the request is skipped; once text came, an error
        is the reply's."""
        from core.llm.base import as_messages

        self._count(1)
        convs = as_messages(messages)
        order = self._servers.order(preferred_server()) if self._servers else [0]
        for i, k in enumerate(order):
            sent = False
            try:
                with self._servers.serving(k) if self._servers else nullcontext():
                    for piece in self._stream_on(k, convs, temperature, max_tokens, stop, cancel):
                        sent = True
                        yield piece
                return
            except ServerUnreachable:
                if self._servers is not None:
                    self._servers.mark_down(k)
                if sent or i == len(order) - 1:
                    raise

    def _stream_on(self, k: int, messages: list[Message], temperature: float, max_tokens: int, stop, cancel):
        try:
            chunks = self._clients[k].chat.completions.create(
                model=self.settings.model,
                messages=[{"role": m.role, "content": m.content} for m in messages],
                temperature=temperature, max_tokens=max_tokens, stop=list(stop) if stop else None, stream=True)
            try:
                yield from self._redacted(self._pieces(chunks, cancel, k))
            finally:
                chunks.close()
        except (self._openai.OpenAIError, ValueError) as err:  # ValueError: a chunk that is not JSON
            raise self._wrap(err, k) from err

    def _pieces(self, chunks, cancel, k: int | None = None):
        seen = 0
        for chunk in chunks:
            seen += 1
            if cancel is not None and cancel.is_set():
                return
            if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
        if not seen:  # not even an empty chunk: the server did not speak the streaming protocol
            raise LLMError(f"{self._where(k)} streamed no reply (is it an OpenAI-compatible server?)")

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
        futures = [self._pool.submit(contextvars.copy_context().run, self._one, m, temperature, max_tokens, stop)
                   for m in batch]  # each in a copy of this context: its meters, its cancel event
        return [f.result() for f in futures]

    # -- scoring ----------------------------------------------------------------------------------
    @property
    def scoring_route(self) -> str:
        """"echo", "llama.cpp" or "none" (core.llm.scoring_routes), asked of the server once; an
        endpoint that does not answer raises LLMError and is asked again next time."""
        with self._route_lock:
            if self._route is None:
                self._route = self._detect_route()
            return self._route

    @property
    def supports_scoring(self) -> bool:  # type: ignore[override]
        return self.scoring_route != NONE

    def _detect_route(self) -> str:
        try:
            self._echo_score(_flat_prompt([Message("user", "Say hello.")]), "Hello")
            return ECHO
        except ScoringUnsupported:
            pass
        native = LlamaCppHttp(self._native_call, self._where())
        if self.settings.base_url and native.probe():
            self._native = native
            return LLAMACPP
        return NONE

    def _native_call(self, path: str, body: dict | None) -> dict:
        """One request to the server's own API at its root (llama.cpp: /tokenize, /completion...),
        with the client's key, timeout and retries; RouteMissing where the server has no such route."""
        stopping.check()  # a stopped reply sends nothing more (trie scoring is many small requests)
        return self._on_a_server(lambda k: self._native_call_on(k, path, body))

    def _native_call_on(self, k: int, path: str, body: dict | None) -> dict:
        url = _server_root(self._urls[k]) + path
        o, client = self._openai, self._clients[k]
        try:
            out = (client.get(url, cast_to=object) if body is None
                   else client.post(url, body=body, cast_to=object))
        except o.APIStatusError as err:
            if 400 <= err.status_code < 500 and err.status_code not in (401, 403, 408, 429):
                raise RouteMissing(f"{path}: HTTP {err.status_code}") from err
            raise self._wrap(err, k) from err
        except (o.OpenAIError, ValueError) as err:
            raise self._wrap(err, k) from err
        if not isinstance(out, dict):
            raise RouteMissing(f"{path}: not a JSON object")
        return out

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        route = self.scoring_route
        if route == LLAMACPP:
            return self._native.score(messages, candidates)
        if route == NONE:
            raise ScoringUnsupported(f"{self._where()} returns no log-probabilities: {ROUTE_NOTES[NONE]}")
        prompt = _flat_prompt(messages)
        return list(self._pool.map(lambda c: self._echo_score(prompt, c), candidates))

    def _echo_score(self, prompt: str, candidate: str) -> float:
        """Sum of the prompt log-probabilities of " candidate" after `prompt`, echoed back by the
        server (one generated token is asked for and ignored: vLLM refuses max_tokens=0)."""
        return self._on_a_server(lambda k: self._echo_score_on(k, prompt, candidate))

    def _echo_score_on(self, k: int, prompt: str, candidate: str) -> float:
        full = prompt + " " + candidate
        try:
            resp = self._clients[k].completions.create(
                model=self.settings.model, prompt=full, echo=True, logprobs=1, max_tokens=1, temperature=0.0)
            lp = resp.choices[0].logprobs
            offsets, values = lp.text_offset, lp.token_logprobs
        except (self._openai.BadRequestError, self._openai.NotFoundError, self._openai.UnprocessableEntityError,
                AttributeError, TypeError, IndexError) as err:
            raise ScoringUnsupported(f"{self._where(k)} has no prompt log-probabilities: {self._redact(str(err))[:200]}") from err
        except (self._openai.OpenAIError, ValueError) as err:
            raise self._wrap(err, k) from err
        if not offsets or not values or offsets[0] != 0:  # no log-probabilities, or not of the echoed prompt
            raise ScoringUnsupported(f"{self._where(k)} returned no prompt log-probabilities")
        start, end = len(prompt), len(full)
        return float(sum(v for o, v in zip(offsets, values) if start <= o < end and v is not None))


def _server_root(base_url: str) -> str:
    """http://host:port/v1 -> http://host:port (llama.cpp's native endpoints live at the root)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root
