"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 for tests: answers /v1/chat/completions the
way a real endpoint would, or fails the way real ones do (hangs, 401, 429, 500, malformed JSON).

    with LLMStub() as stub:            # stub.url is the base URL, e.g. http://127.0.0.1:PORT/v1
        stub.mode = "hang"             # "ok" | "hang" | "401" | "403" | "429" | "500" | "502" | "bad-json" | "empty"
        ...
        stub.requests                  # the JSON bodies received, in order
        stub.headers                   # the request headers (lower-case names), in order

As its own process (the load test's pool of LLM servers, each killable by PID):

    python -m ops.llm_stub --port 8001 [--delay 0.05] [--per-kchar 0.5] [--slots 2]
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def last_user_text(body: dict) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


class LLMStub:
    def __init__(self, reply=lambda body: f"You said: {last_user_text(body)[:200]}", hang_s: float = 30.0,
                 port: int = 0, delay_s: float = 0.0, per_kchar_s: float = 0.0, slots: int = 0) -> None:
        self.delay_s = delay_s  # seconds before each answer (a stand-in for generation time)
        self.per_kchar_s = per_kchar_s  # and more per 1,000 characters of prompt (a long message costs more)
        # requests answered at once, like a server's parallel slots (0: any number); the others wait in turn
        self._slots = threading.Semaphore(slots) if slots else None
        self.mode = "ok"
        self.reply = reply  # body -> reply text, in mode "ok"
        self.hang_s = hang_s
        self.hang_if = lambda body: False  # in mode "ok": hang on the requests this picks (e.g. memory prompts)
        self.hanging = threading.Event()  # set once a request hangs (a test kills the app then)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.gets: list[str] = []  # paths of GET requests
        self.in_flight = threading.Event()  # set while a request is being answered (for kill tests)
        self._release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                stub.requests.append(body)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                stub.in_flight.set()
                try:
                    stub._answer(self, body)
                finally:
                    stub.in_flight.clear()

            def do_GET(self) -> None:  # noqa: N802 (also records any other fetch: a tracking pixel must never come)
                stub.gets.append(self.path)
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

            def _send(self, status: int, payload, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # a client that gave up (timeout): expected
                pass

        self._server = Server(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _answer(self, h, body: dict) -> None:
        if self._slots is None:
            return self._answer_now(h, body)
        with self._slots:
            return self._answer_now(h, body)

    def _answer_now(self, h, body: dict) -> None:
        mode = self.mode
        chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        if self.delay_s or self.per_kchar_s:
            time.sleep(self.delay_s + self.per_kchar_s * chars / 1000)
        if mode == "hang" or (mode == "ok" and self.hang_if(body)):
            self.hanging.set()
            self._release.wait(self.hang_s)
            return h._send(200, _completion(body, "late"))
        if mode in ("401", "403", "429", "500", "502"):
            message = {"401": "Incorrect API key provided", "403": "Forbidden", "429": "Rate limit reached",
                       "500": "internal error", "502": "Bad Gateway (a proxy in front of a dead server)"}[mode]
            # like some proxies, echo the credentials the request carried
            message += f" (request had {h.headers.get('Authorization', 'no key')})"
            return h._send(int(mode), {"error": {"message": message, "type": "stub", "code": mode}})
        streaming = bool(body.get("stream"))
        if mode == "bad-json":
            if streaming:
                return _send_events(h, ['{"id": "x", "choices": [ {"delta": '])
            return h._send(200, None, raw=b'{"id": "x", "choices": [ {"message": ')
        if mode == "empty":
            if streaming:
                return _send_events(h, [])
            return h._send(200, {"id": "x", "object": "chat.completion", "choices": [], "model": "stub"})
        if streaming:  # server-sent events, a few characters per chunk (a key may be split across them)
            text = self.reply(body)
            return _send_events(h, [json.dumps(_chunk(text[i:i + 5])) for i in range(0, len(text), 5)] + [json.dumps(_chunk(None, "stop"))])
        return h._send(200, _completion(body, self.reply(body)))

    def release(self) -> None:
        """Let hanging requests finish (so a test does not wait for hang_s at shutdown)."""
        self._release.set()

    def __enter__(self) -> "LLMStub":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()


def _completion(body: dict, text: str) -> dict:
    return {
        "id": f"stub-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()), "model": "stub",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(text: str | None, finish: str | None = None) -> dict:
    delta = {"content": text} if text is not None else {}
    return {"id": "stub-chunk", "object": "chat.completion.chunk", "created": int(time.time()), "model": "stub",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _send_events(h, events: list[str]) -> None:
    data = "".join(f"data: {e}\n\n" for e in events) + "data: [DONE]\n\n"
    raw = data.encode()
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Content-Length", str(len(raw)))
    h.end_headers()
    h.wfile.write(raw)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="an OpenAI-compatible stub server (echoes the last user message)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--per-kchar", type=float, default=0.0, help="more seconds per 1,000 characters of prompt")
    parser.add_argument("--slots", type=int, default=0, help="requests answered at once (0: any number)")
    args = parser.parse_args()
    stub = LLMStub(port=args.port, delay_s=args.delay, per_kchar_s=args.per_kchar, slots=args.slots)
    stub.requests = _Counter()  # a long run keeps no request bodies, only their number
    stub.headers = _Counter()
    print(f"listening on {stub.url}", flush=True)
    stub._server.serve_forever()


class _Counter(list):
    def append(self, _item) -> None:  # noqa: D102 (counts instead of keeping)
        self.count_ = getattr(self, "count_", 0) + 1


if __name__ == "__main__":
    main()
