"""Embedded llama.cpp backend, in-process through `xllamacpp` (prebuilt CPU/GPU wheels on PyPI).

One `xllamacpp.Server` holds the GGUF model and serves OpenAI-style requests from Python calls,
with continuous batching over `slots` parallel sequences, so two users' replies are generated
together instead of one waiting for the other. What the protocol needs maps onto it as follows:

- chat / batch: `handle_chat_completions`; a batch is sent from threads and batched by the server.
- streaming: the same call with `stream` and a callback; the callback's return value cancels.
- JSON: `response_format` with the JSON schema, which llama.cpp turns into a grammar, so the
  output parses by construction; we still validate it (base class).
- scoring fixed candidates: llama.cpp has no prompt log-probabilities (no `echo`), so we walk the
  candidates' token trie (core.llm.trie_scoring, shared with the HTTP backend): one one-token
  request per distinct prefix returns the top-`n_probs` raw log-probabilities there; a token
  outside them is forced by a logit bias. Requests that extend the last one reuse the slot's KV
  cache, so each costs about one token of compute.

The server also listens on a loopback port (its HTTP API); we use it for the chat template and the
tokenizer, and lock it with a random API key so no other local process can use the model.
"""

from __future__ import annotations

import atexit
import contextvars
import json
import os
import queue
import secrets
import threading
import time
import urllib.error
import urllib.request
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator, Sequence

from core.llm import cancel as stopping, cost
from core.llm.base import LLM, Completion, LLMError, Message, TokenLogprob
from core.llm.gguf_models import resolve_gguf
from core.llm.slot_choice import SlotChooser
from core.llm.trie_scoring import candidate_tokens, score_by_trie

HARD_MAX_TOKENS = 4096  # no request generates more, whatever a caller asks: a model that never stops is bounded
SHUTDOWN_WAIT_S = 15.0  # at exit, how long requests in flight get to end before the server is freed anyway

_LIVE: "weakref.WeakSet[LlamaCppLLM]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Stop every embedded server before the interpreter finalises. Left to finalisation, a reply
    still being generated (a daemon thread inside llama.cpp) is torn down by the C++ runtime, which
    prints "terminate called without an active exception" or "FATAL: exception not rethrown" and
    aborts; the app's SIGTERM (Streamlit stops, then Python exits) ended that way."""
    for llm in list(_LIVE):
        llm.close(wait_s=SHUTDOWN_WAIT_S)


@dataclass(frozen=True)
class LlamaCppOptions:
    """Runtime settings of the embedded server."""

    model: str = ""  # "small" | "medium" | "large" | "default" | path to a .gguf ("" = default)
    cache_dir: str = ""
    threads: int = 0  # 0 = all cores
    n_ctx: int = 12288  # context per slot (tokens): core.config.LLMSettings says why
    slots: int = 2  # sequences served at once
    n_probs: int = 40  # top log-probabilities read per scoring request
    gpu_layers: int = 0  # > 0 offloads layers where the wheel has a GPU backend
    seed: int | None = None  # sampling seed per request (None: the server draws one)
    # speculative decoding: "" none, "draft:<model key or .gguf>" a draft model, or an n-gram kind
    # ("ngram-simple", "ngram-mod", "ngram-map-k"); measured in scripts/lab/speculative_decode.py
    speculative: str = ""
    draft_max: int = 3  # tokens drafted per step (llama.cpp's --draft-max)
    # how much of a slot's cached prompt a request must share to be served in that slot (llama.cpp's
    # --slot-prompt-similarity; None: the library's 0.1). A new conversation shares only the chat
    # opening with one in a slot: at 0.1 it took that slot over and the two evicted each other for
    # their first turns (130 tokens computed again); at 0.8 each keeps its own, and a third is
    # restored from the RAM prompt cache (scripts/lab/slots_users.py, docs/speed.md)
    slot_prompt_similarity: float | None = 0.8
    # llama.cpp's --cache-reuse: when a prompt's start differs from the slot's cache (a conversation
    # window cut at its start), chunks of at least this many tokens further on are reused by shifting
    # them in the cache instead of computed again; 0 = off. On the long dev dialogues the cut turns
    # computed at most 127 tokens instead of 840 (scripts/lab/cache_reuse.py, docs/speed.md)
    cache_reuse: int = 64
    # pin each chat request to the slot holding most of its prompt (core/llm/slot_choice.py), so a
    # conversation whose window was cut at its start stays in its slot; False: the server's choice
    choose_slots: bool = True


def leave_cores_to_llamacpp() -> None:
    """One intra-op thread for torch in a process that runs llama.cpp on the CPU. Both use OpenMP,
    from two copies of libgomp that do not know of each other: once torch's pool of one thread per
    core has run, the server decodes at about 60% speed (0.5B model, 2 cores: 20.6 against 33.2
    tokens/s), while one torch thread costs a 512-sentence encode 2.35 s against 2.02 s
    (`scripts/lab/omp_interference.py`, docs/speed.md). A caller that wants more threads sets them
    after the server has loaded (the app's WORKBENCH_TORCH_THREADS does)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return
    import torch

    torch.set_num_threads(1)


def clean_text(text) -> str:
    """Model output as valid text: bytes decoded with replacement, lone surrogates replaced."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return (text or "").encode("utf-8", errors="replace").decode("utf-8")


def token_logprobs(choice: dict) -> tuple[TokenLogprob, ...] | None:
    """The generated tokens of an OpenAI-style chat choice with `logprobs`; None when absent."""
    content = (choice.get("logprobs") or {}).get("content")
    if content is None:
        return None
    return tuple(TokenLogprob(bytes(t["bytes"]) if t.get("bytes") is not None else t["token"].encode(), float(t["logprob"]))
                 for t in content)


SPECULATIVE_NGRAM = {"ngram-simple": "NGRAM_SIMPLE", "ngram-mod": "NGRAM_MOD", "ngram-map-k": "NGRAM_MAP_K"}


def configure_speculative(params, options: LlamaCppOptions, xllamacpp) -> None:
    """Set llama.cpp's speculative decoding from `options.speculative` (see LlamaCppOptions)."""
    kind = options.speculative.strip()
    if not kind:
        return
    spec = params.speculative
    if kind.startswith("draft:"):
        draft_path, _ = resolve_gguf(kind.removeprefix("draft:"), options.cache_dir)
        spec.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        spec.draft.mparams.path = str(draft_path)
        spec.draft.n_max = options.draft_max
        spec.draft.n_gpu_layers = options.gpu_layers
        spec.draft.cpuparams.n_threads = params.cpuparams.n_threads
        spec.draft.cpuparams_batch.n_threads = params.cpuparams_batch.n_threads
    elif kind in SPECULATIVE_NGRAM:
        spec.types = [getattr(xllamacpp.common_speculative_type, "COMMON_SPECULATIVE_TYPE_" + SPECULATIVE_NGRAM[kind])]
    else:
        raise LLMError(f"unknown speculative decoding {kind!r}: use draft:<model>, or one of {', '.join(SPECULATIVE_NGRAM)}")


def report_timings(timings: dict | None, seconds: float) -> None:
    """One request's server-side work to the cost meters: prompt tokens run, prompt tokens reused
    from the slot's KV cache (or the server's RAM prompt cache), tokens generated."""
    if timings and cost.active():
        cost.record_requests(timings.get("prompt_n", 0), timings.get("cache_n", 0), timings.get("predicted_n", 0), seconds,
                             prefill_s=timings.get("prompt_ms", 0.0) / 1000, decode_s=timings.get("predicted_ms", 0.0) / 1000)


class LlamaCppLLM(LLM):
    supports_scoring = True
    reports_logprobs = True

    def __init__(self, options: LlamaCppOptions = LlamaCppOptions()) -> None:
        super().__init__()
        try:
            import xllamacpp
        except ImportError as err:
            raise LLMError("the embedded runtime is missing: pip install xllamacpp (or run `make install`)") from err
        t0 = time.perf_counter()
        path, self.label = resolve_gguf(options.model, options.cache_dir)
        self.options = options
        self.path = path
        self.name = self.label
        self.threads = options.threads or os.cpu_count() or 1
        self._key = secrets.token_hex(16)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_parallel = max(1, options.slots)
        params.n_ctx = options.n_ctx * params.n_parallel  # llama.cpp splits the context between slots
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.n_gpu_layers = options.gpu_layers
        if options.slot_prompt_similarity is not None:
            params.slot_prompt_similarity = options.slot_prompt_similarity
        if options.cache_reuse:
            params.n_cache_reuse = options.cache_reuse
        configure_speculative(params, options, xllamacpp)
        params.verbosity = -1  # llama.cpp logs every request to stderr otherwise
        params.api_keys = [self._key]
        try:
            self.server = xllamacpp.Server(params)
        except (RuntimeError, ValueError) as err:
            raise LLMError(f"llama.cpp could not load {path}: {err}") from err
        self.address = self.server.listening_address.rstrip("/")
        if options.gpu_layers <= 0:
            leave_cores_to_llamacpp()
        self.load_seconds = time.perf_counter() - t0
        self._active = 0
        self._active_lock = threading.Lock()
        self._closing = threading.Event()  # set by close(): streams stop at their next token, new requests fail
        _LIVE.add(self)
        self._pool = ThreadPoolExecutor(max_workers=max(1, options.slots), thread_name_prefix="llamacpp")
        self._slots = SlotChooser(options.slots) if options.choose_slots and options.slots > 1 else None

    # -- helpers -------------------------------------------------------------------------------
    def _http(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            self.address + path, data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError) as err:
            raise LLMError(f"embedded llama.cpp server did not answer {path}: {err}") from err

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return self._http("/tokenize", {"content": text, "add_special": False, "parse_special": special})["tokens"]

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The chat-templated prompt (ending with the assistant header) as token ids."""
        rendered = self._http("/apply-template", {"messages": [{"role": m.role, "content": m.content} for m in messages]})
        return self.tokenize(rendered["prompt"], special=True)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text)) if text else 0

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return len(self.prompt_ids(messages))

    def pending(self) -> int:
        """Requests being served or waiting now (all users): the Chat page shows a queue from it."""
        return self._active

    def _call(self, handler, request: dict, callback=None) -> dict | None:
        stopping.check()  # a stopped reply sends nothing more (each trie-scoring step is one request)
        with self._active_lock:
            if self._closing.is_set():
                raise LLMError("the embedded llama.cpp server is shut down")
            self._active += 1
        slot = None
        t0 = time.perf_counter()
        try:
            slot = self._pin_slot(request)
            out = handler(request, callback) if callback else handler(request)
        except ValueError as err:  # xllamacpp rejects malformed requests this way
            raise LLMError(f"llama.cpp rejected the request: {err}") from err
        finally:
            if slot is not None:
                self._slots.release(slot)
            with self._active_lock:
                self._active -= 1
        if isinstance(out, dict):
            report_timings(out.get("timings"), time.perf_counter() - t0)
        if isinstance(out, dict) and "error" in out:
            error = out["error"]
            raise LLMError(f"llama.cpp: {error.get('message', error) if isinstance(error, dict) else error}")
        return out

    def _pin_slot(self, request: dict) -> int | None:
        """Give a chat request the slot holding most of its prompt (`id_slot`); note a request its
        caller pinned. None: the server chooses (one slot, or choose_slots off)."""
        if self._slots is None:
            return None
        if "id_slot" in request:
            self._slots.hold(request["id_slot"])
            return request["id_slot"]
        if "messages" not in request:
            return None
        request["id_slot"] = self._slots.acquire([(m["role"], m["content"]) for m in request["messages"]])
        return request["id_slot"]

    # -- context window ------------------------------------------------------------------------
    def fit_messages(self, messages: list[Message], max_tokens: int) -> tuple[list[Message], int]:
        """Drop the oldest non-system messages until the prompt and `max_tokens` fit the slot's
        context; the last message is cut from its start if it alone is too long. Returns the
        messages and how many were dropped or cut (0 = unchanged)."""
        budget = self.options.n_ctx - max_tokens - 8
        if budget < 64:
            raise LLMError(f"max tokens {max_tokens} leaves no room for a prompt in a {self.options.n_ctx}-token context")
        msgs = list(messages)
        if len(self.prompt_ids(msgs)) <= budget:
            return msgs, 0
        dropped = 0
        while len(msgs) > 1 and len(self.prompt_ids(msgs)) > budget:
            at = next((i for i, m in enumerate(msgs[:-1]) if m.role != "system"), None)
            if at is None:
                break
            del msgs[at]
            dropped += 1
        while len(self.prompt_ids(msgs)) > budget and len(msgs[-1].content) > 16:
            last = msgs[-1]
            msgs[-1] = Message(last.role, last.content[len(last.content) // 4 :])  # keep the end: the question
            dropped += 1
        return msgs, dropped

    def _request(self, messages: list[Message], temperature: float, max_tokens: int, stop) -> tuple[dict, int]:
        max_tokens = max(1, min(int(max_tokens), HARD_MAX_TOKENS, self.options.n_ctx // 2))
        fitted, cut = self.fit_messages(messages, max_tokens)
        request = {
            "messages": [{"role": m.role, "content": m.content} for m in fitted],
            "max_tokens": max_tokens,
            "temperature": float(temperature),
            "cache_prompt": True,
        }
        if temperature > 0:
            request["top_p"] = 0.95
        if self.options.seed is not None:
            request["seed"] = self.options.seed
        if stop:
            request["stop"] = list(stop)[:4]
        return request, cut

    # -- the protocol --------------------------------------------------------------------------
    def _complete_one(self, messages: list[Message], temperature: float, max_tokens: int, stop, extra: dict | None = None) -> Completion:
        t0 = time.perf_counter()
        request, cut = self._request(messages, temperature, max_tokens, stop)
        request.update(extra or {})
        out = self._call(self.server.handle_chat_completions, request)
        choice = out["choices"][0]
        usage = out.get("usage", {})
        return Completion(clean_text(choice["message"].get("content")), self.name, time.perf_counter() - t0,
                          usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), truncated=cut,
                          finish_reason=choice.get("finish_reason") or "", token_logprobs=token_logprobs(choice))

    def _complete(self, batch, temperature, max_tokens, stop, logprobs: bool = False) -> list[Completion]:
        # only when asked: reading them costs ~5% of a 120-token reply's time (0.5B model, 2 cores)
        extra = {"logprobs": True, "top_logprobs": 1} if logprobs else None
        if len(batch) == 1:
            return [self._complete_one(batch[0], temperature, max_tokens, stop, extra)]
        # The server batches concurrent requests (one decode step for all slots).
        futures = [self._pool.submit(contextvars.copy_context().run, self._complete_one, m, temperature, max_tokens, stop, extra)
                   for m in batch]  # each in a copy of this context: its meters, its cancel event
        return [f.result() for f in futures]

    def _json_text(self, messages: list[Message], schema: dict, temperature: float, max_tokens: int) -> Completion:
        fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
        return self._complete_one(messages, temperature, max_tokens, None, {"response_format": fmt})

    def _stream(self, messages, *, temperature: float = 0.8, max_tokens: int = 200, stop=None,
               cancel: threading.Event | None = None) -> Iterator[str]:
        """Yield the reply's text pieces as they are generated. Setting `cancel` (or closing the
        generator) stops the generation at the next token."""
        from core.llm.base import as_messages

        self._count(1)
        request, cut = self._request(as_messages(messages), temperature, max_tokens, stop)
        request["stream"] = True
        abandoned = threading.Event()  # the consumer stopped reading; the caller's `cancel` is never set here
        pieces: queue.Queue = queue.Queue()
        done = object()

        started = time.perf_counter()

        def on_chunk(chunk) -> bool:
            if isinstance(chunk, str):
                chunk = json.loads(chunk)
            if chunk.get("timings"):  # the last chunk says what the whole request cost
                report_timings(chunk["timings"], time.perf_counter() - started)
            if "error" in chunk:
                pieces.put(LLMError(f"llama.cpp: {chunk['error']}"))
                return True
            for choice in chunk.get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text:
                    pieces.put(clean_text(text))
            return abandoned.is_set() or (cancel is not None and cancel.is_set()) or self._closing.is_set()

        def run() -> None:
            try:
                self._call(self.server.handle_chat_completions, request, on_chunk)
            except LLMError as err:
                pieces.put(err)
            finally:
                pieces.put(done)

        self.last_stream_truncated = cut
        worker = threading.Thread(target=contextvars.copy_context().run, args=(run,), name="llamacpp-stream", daemon=True)
        worker.start()
        try:
            while (piece := pieces.get()) is not done:
                if isinstance(piece, LLMError):
                    raise piece
                yield piece
        finally:
            abandoned.set()  # a consumer that stops early (Stop button, closed page) ends the generation

    # -- scoring -------------------------------------------------------------------------------
    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        conts = candidate_tokens(candidates, self.tokenize, self._end_token)
        return score_by_trie(self.prompt_ids(messages), conts, self._completion, self.options.n_probs, self._end_token())

    def _completion(self, prompt_ids: list[int], **params) -> dict | None:
        # Scoring keeps to one slot, so each request finds the previous one's prefix in its KV cache
        # (left to itself the server would alternate slots and recompute the whole prompt).
        request = {"prompt": prompt_ids, "n_predict": 1, "temperature": 0.0, "cache_prompt": True,
                   "id_slot": self.options.slots - 1, **params}
        out = self._call(self.server.handle_completions, request)
        logprobs = out["choices"][0].get("logprobs") or {}
        content = logprobs.get("content") or []
        return content[0] if content else None  # None: the token is only part of a character

    def _end_token(self) -> int:
        if not hasattr(self, "_eot"):
            self._eot = self.tokenize("<|im_end|>", special=True)[-1]
        return self._eot

    def close(self, wait_s: float = 0.0) -> None:
        """Free the server. With `wait_s`, first stop streamed replies at their next token and wait
        up to that long for requests in flight to return (a blocking request cannot be cancelled)."""
        with self._active_lock:
            self._closing.set()
        deadline = time.monotonic() + wait_s
        while self._active and time.monotonic() < deadline:
            time.sleep(0.05)
        self._pool.shutdown(wait=False)
        server = getattr(self, "server", None)
        self.server = None
        del server  # the server stops when its object is freed
        _LIVE.discard(self)

