"""The OpenAI-compatible backend against a small local HTTP server speaking the same protocol
(as vLLM, Ollama or llama.cpp would), plus the failure modes a user meets."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.config import LLMSettings
from core.llm import LLMError, ScoringUnsupported, make_llm


class _Handler(BaseHTTPRequestHandler):
    server_version = "fake-openai/1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, self.headers.get("Authorization"), body))
        if self.headers.get("Authorization") != "Bearer good-key":
            return self._send(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
        if self.path == "/v1/chat/completions":
            text = "echo: " + body["messages"][-1]["content"]
            return self._send(200, {
                "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
            })
        if self.path == "/v1/completions" and self.server.logprobs:
            # One "token" per whitespace-separated word; log-probability = -(word length).
            prompt, offsets, tokens, values, pos = body["prompt"], [], [], [], 0
            for word in prompt.split(" "):
                offsets.append(pos)
                tokens.append(word)
                values.append(-float(len(word)))
                pos += len(word) + 1
            return self._send(200, {
                "id": "p1", "object": "text_completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "text": prompt, "finish_reason": "length",
                             "logprobs": {"tokens": tokens, "token_logprobs": values, "text_offset": offsets, "top_logprobs": None}}],
            })
        return self._send(404, {"error": {"message": "not found", "type": "not_found"}})


@pytest.fixture()
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.seen, srv.logprobs = [], True
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()


def _settings(srv, key="good-key", **kw) -> LLMSettings:
    return LLMSettings(backend="openai", model="tiny", base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1",
                       api_key=key, timeout_s=5, max_retries=0, **kw)


def test_chat_and_batch_round_trip(server):
    llm = make_llm(_settings(server))
    assert llm.chat("hello", temperature=0.0, max_tokens=5).text == "echo: hello"
    out = llm.chat_batch(["a", "b", "c"])
    assert [c.text for c in out] == ["echo: a", "echo: b", "echo: c"]
    path, auth, body = server.seen[0]
    assert path == "/v1/chat/completions" and body["temperature"] == 0.0 and body["max_tokens"] == 5


def test_scoring_with_echo_logprobs(server):
    llm = make_llm(_settings(server))
    scores = llm.score("pick", ["aa", "bbbb cc"])
    assert scores == [-2.0, -6.0]


def test_scoring_unsupported_is_reported_and_remembered(server):
    server.logprobs = False
    llm = make_llm(_settings(server))
    with pytest.raises(ScoringUnsupported):
        llm.score("pick", ["a"])
    assert llm.supports_scoring is False


def test_wrong_key_gives_clear_error_without_the_key(server):
    llm = make_llm(_settings(server, key="wrong-key"))
    with pytest.raises(LLMError, match="refused the API key") as err:
        llm.chat("hi")
    assert "wrong-key" not in str(err.value)


def test_unreachable_endpoint_fails_fast_and_clearly():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    llm = make_llm(LLMSettings(backend="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=2, max_retries=0))
    with pytest.raises(LLMError, match="cannot reach"):
        llm.ping()


def test_openai_backend_needs_a_model_name():
    with pytest.raises(LLMError, match="model name"):
        make_llm(LLMSettings(backend="openai", model="", base_url="http://127.0.0.1:1/v1"))
