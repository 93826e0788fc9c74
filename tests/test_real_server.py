"""The OpenAI-compatible backend against a real llama.cpp HTTP server (tests/llama_server.py): what
users point the workbench at. Faults too: a wrong key, a server paused mid-reply, a 500, bad JSON."""

from __future__ import annotations

import time

import pytest

from core.config import LLMSettings
from core.llm import LLMError, LLMOutputError, ScoringUnsupported, make_llm
from core.llm.scoring_routes import LLAMACPP, NONE, scoring_note
from tests.llama_server import MODEL_NAME, REPO, SubprocessServer
from tests.llm_stub import LLMStub


def settings(server, key=None, timeout_s=300.0) -> LLMSettings:
    return LLMSettings(backend="openai", model=MODEL_NAME, base_url=server.url, api_key=server.key if key is None else key,
                       timeout_s=timeout_s, max_retries=0)


@pytest.fixture(scope="module")
def llm(llama_server):
    return make_llm(settings(llama_server))


def test_chat_answers_with_usage(llm):
    reply = llm.chat("Say hello.", temperature=0.0, max_tokens=8)
    assert reply.text and reply.prompt_tokens > 5 and 0 < reply.completion_tokens <= 8


def test_batch_answers_each_conversation(llm):
    out = llm.chat_batch(["What is 2 + 2?", "Name a colour.", "Say yes."], temperature=0.0, max_tokens=4)
    assert len(out) == 3 and all(c.text for c in out)
    # greedy decoding is deterministic: the batch answers as single requests do
    assert out[1].text == llm.chat("Name a colour.", temperature=0.0, max_tokens=4).text


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_json_output_with_response_format(llama_server, llm):
    """The server honours response_format (llama.cpp turns the schema into a grammar)."""
    import openai

    client = openai.OpenAI(base_url=llama_server.url, api_key=llama_server.key, max_retries=0)
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}}
    resp = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Where is the Eiffel tower?"}],
                                          max_tokens=24, temperature=0.0, response_format=fmt)
    import json

    assert isinstance(json.loads(resp.choices[0].message.content)["city"], str)


def test_json_output_without_response_format_is_validated(llm):
    """The backend's `json` asks in plain text and validates: a 135M model may fail the schema;
    then the error is LLMOutputError (callers take their symbolic path), never a wrong value."""
    try:
        value = llm.json('Reply with JSON only, like {"city": "Paris"}. Where is the Eiffel tower?', SCHEMA, max_tokens=24)
    except LLMOutputError as err:
        assert "schema" in str(err)
    else:
        assert isinstance(value["city"], str)


def test_streaming_yields_pieces_that_make_the_reply(llm):
    # (the backend holds back len(key) - 1 characters so that an echoed key is redacted whole:
    # a reply longer than that arrives in several pieces)
    pieces = list(llm.stream("Count from one to ten.", temperature=0.0, max_tokens=24))
    assert len(pieces) > 1
    assert "".join(pieces).strip() == llm.chat("Count from one to ten.", temperature=0.0, max_tokens=24).text


def test_scoring_uses_llamacpp_n_probs_and_matches_the_embedded_backend(llama_server, llm):
    """The route is detected once; scores over HTTP equal the in-process scorer's on the same GGUF."""
    from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

    assert llm.scoring_route == LLAMACPP and llm.supports_scoring
    assert "n_probs" in scoring_note(llm)
    prompt = "Alice lives in Lisbon. Where does Alice live? Answer with the city."
    candidates = ["Lisbon", "Tokyo", "Lisbon, Portugal", "", "🙂 Lisbon"]  # the emoji's first token is half a character
    http = llm.score(prompt, candidates)
    assert http[0] > http[1] and all(s < 0 for s in http)
    embedded = LlamaCppLLM(LlamaCppOptions(model="small", threads=2, n_ctx=2048, slots=1))
    try:
        local = embedded.score(prompt, candidates)
    finally:
        embedded.close()
    assert http == pytest.approx(local, abs=0.05)
    index, _ = llm.choose(prompt, ["Lisbon", "Tokyo"])
    assert index == 0


def test_a_wrong_key_gives_the_clear_401_message_and_never_the_key(llama_server):
    wrong = "sk-wrong-" + "x" * 16
    bad = make_llm(settings(llama_server, key=wrong))
    for call in (lambda: bad.chat("hi", max_tokens=2), lambda: "".join(bad.stream("hi", max_tokens=2)), lambda: bad.scoring_route):
        with pytest.raises(LLMError, match=r"refused the API key \(401\)") as err:
            call()
        assert wrong not in str(err.value) and llama_server.key not in str(err.value)


def test_a_server_paused_mid_reply_fails_within_the_timeout():
    """SIGSTOP on a server process while it streams: the read timeout of the settings fires, with
    the message that names it (no key here: a keyed stream holds back its first characters)."""
    prompt = "Write a long story about a cat."
    with SubprocessServer() as server:
        patient = make_llm(LLMSettings(backend="openai", model=MODEL_NAME, base_url=server.url, timeout_s=120, max_retries=0))
        patient.chat(prompt, temperature=0.0, max_tokens=1)  # the prompt is cached: the stream starts at once
        llm = make_llm(LLMSettings(backend="openai", model=MODEL_NAME, base_url=server.url, timeout_s=3, max_retries=0))
        pieces = llm.stream(prompt, temperature=0.0, max_tokens=400)
        assert next(pieces)  # the reply has started
        server.pause()
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match=r"did not answer within 3 s"):
            for _ in pieces:
                pass
        assert time.perf_counter() - t0 < 15
        with pytest.raises(LLMError, match=r"did not answer within 3 s"):  # a new request to the stopped server
            llm.chat("hi", max_tokens=2)


@pytest.mark.parametrize("mode, message", [("500", "server error"), ("bad-json", "malformed response")])
def test_a_500_and_malformed_json_fail_clearly_for_chat_stream_and_scoring(mode, message):
    with LLMStub(hang_s=5) as stub:
        stub.mode = mode
        llm = make_llm(LLMSettings(backend="openai", model="m", base_url=stub.url, api_key="sk-stub-key", timeout_s=2, max_retries=0))
        with pytest.raises(LLMError, match=message):
            llm.chat("hi")
        with pytest.raises(LLMError, match=message):
            "".join(llm.stream("hi"))
        # a broken server is not "cannot score": no route is remembered, and the error says what broke
        with pytest.raises(LLMError, match=message) as err:
            llm.score("hi", ["a"])
        assert not isinstance(err.value, ScoringUnsupported) and llm._route is None


def test_an_ok_stub_offers_no_scoring_route():
    """A chat-only server (as Ollama or LM Studio): detected once, as none, with what it means."""
    with LLMStub() as stub:
        llm = make_llm(LLMSettings(backend="openai", model="m", base_url=stub.url, timeout_s=2, max_retries=0))
        assert llm.scoring_route == NONE and not llm.supports_scoring
        asked = len(stub.requests)
        assert llm.scoring_route == NONE and len(stub.requests) == asked  # not asked again
        assert "reasoning tree falls back" in scoring_note(llm)


# -- the Home page says which route is active --------------------------------------------------------
def _home_after_check(app_env, llm_settings):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=300)
    at.session_state["llm_settings"] = llm_settings
    at.run()
    at.button[0].click().run()  # "Check that the backend answers"
    assert not at.exception and at.success, [e.value for e in at.error]
    return [c.value for c in at.caption]


def test_home_page_names_the_llamacpp_scoring_route(app_env, llama_server):
    captions = _home_after_check(app_env, settings(llama_server))
    assert any("llama.cpp's native /completion with n_probs" in c for c in captions)
    assert not any(llama_server.key in c for c in captions)


def test_home_page_says_what_no_scoring_means(app_env):
    with LLMStub() as stub:
        captions = _home_after_check(app_env, LLMSettings(backend="openai", model="m", base_url=stub.url, timeout_s=5, max_retries=0))
    assert any(c.startswith("no scoring") and "reasoning tree falls back" in c for c in captions)


# -- the command line: figures or one clear line, never a traceback -----------------------------------
def _cli(args, key=""):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_LLM", "OPENAI_"))}
    env["WORKBENCH_LLM_API_KEY"] = key
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_info_ping_against_the_real_server_names_the_scoring_route(llama_server):
    out = _cli(["info", "--ping", "--backend", "openai", "--model", MODEL_NAME, "--base-url", llama_server.url], key=llama_server.key)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "answers in" in out.stdout and "scoring: llama.cpp's native /completion with n_probs" in out.stdout
    assert llama_server.key not in out.stdout + out.stderr


@pytest.mark.parametrize("mode", ["ok", "500", "bad-json", "401"])
def test_info_ping_speed_against_a_stub_prints_figures_or_one_line(mode):
    with LLMStub(hang_s=5) as stub:
        stub.mode = mode
        out = _cli(["info", "--ping", "--speed", "--backend", "openai", "--model", "m", "--base-url", stub.url], key="sk-cli-secret-key")
    assert "Traceback" not in out.stderr and "sk-cli-secret-key" not in out.stdout + out.stderr
    if mode == "ok":
        assert out.returncode == 0 and "decode:" in out.stdout
        assert "no scoring: the server returns no log-probabilities, so the reasoning tree falls back" in out.stdout
    else:
        assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1 and "not answering" in out.stderr


@pytest.mark.parametrize("error", [LLMError("the endpoint failed"), ScoringUnsupported("no log-probabilities"),
                                   LLMOutputError("model output failed the schema")])
def test_every_llm_error_type_ends_in_one_line_and_exit_2_at_the_cli_edge(error, monkeypatch, capsys):
    from core import cli

    def fail(args):
        raise error

    monkeypatch.setattr(cli, "_run_models", fail)  # any command: the edge is main()
    assert cli.main(["models"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"the LLM failed: {type(error).__name__}: {error}"
