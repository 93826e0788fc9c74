"""Bad input survived, each with a clear message in the page and nothing lost: empty and oversized
messages, HTML/script/Markdown payloads, malformed imports and data files, a 10,000-turn
conversation, failing endpoints and model files, and API keys that never come back out."""

from __future__ import annotations

import html
import json
import re
import sqlite3
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from core.config import LLMSettings
from core.limits import MAX_MESSAGE_CHARS, InvalidMessage, clean_message
from core.llm import LLMError, make_llm
from core.conversation import load_memory
from core.store import Store
from tests.llm_stub import LLMStub
from tests.page_fixtures import stub, tiny_nli, tiny_nli_folder  # noqa: F401 (fixtures)
from ui.safe import literal

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
RETRIEVAL = str(REPO / "pages" / "3_Retrieval_comparison.py")
ME = "anon:bad-input"
PAYLOADS = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 1">',
    "![pixel](http://127.0.0.1:9/pixel.png) and [a link](javascript:alert(1))",
    "$\\frac{1}{0}$ :red[alarm] **bold** `code` <b>tag</b> & &amp; # heading",
    "line one\nline two\n\n- not a list\n1. not a list either",
]


def chat_page(**state) -> AppTest:
    at = AppTest.from_file(CHAT, default_timeout=120)
    at.session_state["owner_id"] = ME
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def db() -> Store:
    import os

    return Store(os.environ["WORKBENCH_DB"])


# -- messages ------------------------------------------------------------------------------------
def test_clean_message_refuses_empty_and_oversized():
    for empty in ("", "   ", "\n\t ", None):
        with pytest.raises(InvalidMessage, match="empty"):
            clean_message(empty)
    assert clean_message("  hi  ") == "hi"
    assert clean_message("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS
    with pytest.raises(InvalidMessage, match=f"100,000 characters; the limit is {MAX_MESSAGE_CHARS:,}"):
        clean_message("x" * 100_000)


def test_chat_refuses_empty_and_oversized_messages_without_calling_the_model(stub):
    at = chat_page()
    assert not at.chat_input[0].proto.max_chars  # a box bound by max_chars dropped a longer paste without a word
    assert f"{MAX_MESSAGE_CHARS:,} characters" in at.chat_input[0].proto.placeholder  # the limit is shown
    at.chat_input[0].set_value("   \n ").run()
    assert not at.exception and "empty" in at.warning[0].value
    assert stub.requests == [] and db().list_conversations(owner=ME) == []
    # 100 KB pasted: the page keeps the first 4,000 characters, says so, and the work stays bounded
    at.chat_input[0].set_value("x" * 100_000).run()
    assert not at.exception and f"the limit is {MAX_MESSAGE_CHARS:,}" in at.info[0].value and "96,000 were cut" in at.info[0].value
    [conv] = db().list_conversations(owner=ME)
    assert len(db().turns(conv.id, owner=ME)[0].turn.text) == MAX_MESSAGE_CHARS
    assert len(stub.requests[0]["messages"][-1]["content"]) <= MAX_MESSAGE_CHARS + 100


def rendered_text(markdown_source: str) -> str:
    """What a CommonMark renderer shows for `markdown_source`: its HTML with tags dropped."""
    out = MarkdownIt("commonmark").render(markdown_source)
    assert not re.search(r"<(?!/?(p|br|pre|code)\b)", out), out  # no element but paragraphs, breaks, code
    return html.unescape(re.sub(r"<[^>]+>", "", out))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_literal_markdown_renders_exactly_the_text(payload):
    shown = rendered_text(literal(payload))
    assert " ".join(shown.split()) == " ".join(payload.split())
    # escaping works chunk by chunk, so streamed replies can be escaped as they arrive
    assert "".join(literal(c) for c in (payload[:7], payload[7:])) == literal(payload)


def test_chat_shows_html_and_markdown_payloads_as_text(stub):
    at = chat_page()
    for payload in PAYLOADS:
        at.chat_input[0].set_value(payload).run()
        assert not at.exception
    user = [m for m in at.chat_message if m.name == "user"]
    assert [" ".join(rendered_text(m.markdown[0].value).split()) for m in user] == [" ".join(p.split()) for p in PAYLOADS]
    bot = [m for m in at.chat_message if m.name == "assistant"]
    assert all(m.markdown[0].value.startswith(literal("You said: ")) for m in bot)
    title = at.sidebar.selectbox[1].options[1]  # select boxes show plain text
    assert title.startswith(PAYLOADS[0][:48])


# -- endpoints and model files ---------------------------------------------------------------------
FAILURES = {"401": "refused the API key", "429": "rate-limiting", "500": "server error", "bad-json": "malformed response",
            "empty": "no choices", "hang": "did not answer within 1 s"}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_endpoint_failures_raise_clear_llm_errors(mode):
    with LLMStub(hang_s=10) as stub:
        stub.mode = mode
        llm = make_llm(LLMSettings(backend="openai", model="m", base_url=stub.url, api_key="sk-x", timeout_s=1, max_retries=0))
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match=FAILURES[mode]):
            llm.chat("hi")
        assert time.perf_counter() - t0 < 5  # the timeout from the settings holds


STREAM_FAILURES = {**FAILURES, "empty": "streamed no reply"}


@pytest.mark.parametrize("mode", sorted(STREAM_FAILURES))
def test_streamed_replies_fail_as_clearly(mode):
    with LLMStub(hang_s=10) as stub:
        stub.mode = mode
        llm = make_llm(LLMSettings(backend="openai", model="m", base_url=stub.url, api_key="sk-x", timeout_s=1, max_retries=0))
        with pytest.raises(LLMError, match=STREAM_FAILURES[mode]):
            "".join(llm.stream("hi"))


def test_a_key_echoed_in_a_stream_is_redacted_even_split_over_chunks():
    key = "sk-split-over-chunks-0123456789"
    with LLMStub(reply=lambda body: f"Your key: {key}. Again:{key}") as stub:  # 5-character chunks cut the key
        llm = make_llm(LLMSettings(backend="openai", model="m", base_url=stub.url, api_key=key, timeout_s=5, max_retries=0))
        pieces = list(llm.stream("hi"))
    assert "".join(pieces) == "Your key: ***. Again:***" and len(pieces) > 2


def test_chat_page_shows_endpoint_failures_and_keeps_the_message(stub):
    at = chat_page()
    at.chat_input[0].set_value("first message").run()
    cid = at.session_state["conversation_id"]
    for mode in ("500", "hang", "bad-json"):
        stub.mode = mode
        fast = LLMSettings(backend="openai", model="stub", base_url=stub.url, timeout_s=1, max_retries=0)
        at.session_state["llm_settings"] = fast
        at.chat_input[0].set_value(f"second message ({mode})").run()
        assert not at.exception
        assert FAILURES[mode] in at.error[0].value and "Nothing was saved" in at.error[0].value
        assert at.code[0].value == f"second message ({mode})"  # the text to copy and send again
        assert [t.turn.text for t in db().turns(cid, owner=ME)] == ["first message", "You said: first message"]
    stub.mode = "ok"
    fresh = chat_page(llm_settings=LLMSettings(backend="openai", model="stub", base_url=stub.url, timeout_s=1, max_retries=0))
    stub.mode = "401"
    fresh.chat_input[0].set_value("new conversation").run()
    assert "refused the API key" in fresh.error[0].value
    assert len(db().list_conversations(owner=ME)) == 1  # no empty conversation left behind


MODEL_FILE_FAILURES = {  # (backend, what is wrong with the file) -> what the message says
    ("local", "missing"): "no embedded model file at", ("local", "not-gguf"): "not a GGUF file",
    ("local", "corrupt"): "could not load", ("transformers", "missing"): "no local model at",
    ("transformers", "corrupt"): "cannot load local model",
}


@pytest.mark.parametrize("backend,kind", sorted(MODEL_FILE_FAILURES))
def test_missing_or_corrupt_local_model_file_gives_a_clear_message(tmp_path, backend, kind):
    from core.paths import MissingResource

    path = tmp_path / "model.gguf"
    if kind == "not-gguf":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "corrupt":
        path.write_bytes(b"GGUF" + bytes(range(256)) * 8)  # the right magic, then garbage
    with pytest.raises((LLMError, MissingResource), match=MODEL_FILE_FAILURES[backend, kind]):
        make_llm(LLMSettings(backend=backend, model=str(path)))


def test_chat_page_says_when_the_local_model_file_is_missing(app_env, tiny_nli, tmp_path):
    missing = LLMSettings(backend="local", model=str(tmp_path / "gone.gguf"))
    at = chat_page(llm_settings=missing)
    at.chat_input[0].set_value("hello").run()
    assert not at.exception
    assert "no embedded model file at" in at.error[0].value and db().list_conversations(owner=ME) == []


# -- imports and data files --------------------------------------------------------------------------
def test_malformed_rdf_imports_are_refused_with_reasons_and_change_nothing():
    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.methods.dsmart.rdf_import import MAX_IMPORT_BYTES, parse_rdf

    memory = DynamicStructuredMemory(None)
    memory.observe_round("My dog is Rex.", "Nice.", 0)
    before = (memory.to_turtle(), len(memory.history))
    bad = {
        "a.ttl": (b"<a> <b> .", "not valid turtle"),
        "a.nt": (b"<http://a> <http://b> .", "not valid nt"),
        "a.trig": (b"{ <http://a> <http://b> <http://c> ", "not valid trig"),
        "a.jsonld": (b'{"@id": "x", "http://p": [', "not valid JSON"),
        "b.jsonld": (b'{"@context": {"@vocab": 5}, "a": 1}', "not valid json-ld"),
        "c.jsonld": (b'{"@context": "http://schema.org/", "name": "x"}', "remote JSON-LD @context"),
        "d.jsonld": (b"[]", "no triples"),
        "a.ttl ": (b"", "unknown RDF file type"),
        "e.ttl": (b"\xff\xfe<a>", "not UTF-8"),
        "big.ttl": (b"#" * (MAX_IMPORT_BYTES + 1), "limited to"),
    }
    for name, (data, reason) in bad.items():
        with pytest.raises(ValueError, match=re.escape(reason)):
            parse_rdf(data, name)
    assert (memory.to_turtle(), len(memory.history)) == before


def test_rdf_exports_import_back():
    from rdflib.compare import isomorphic

    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.methods.dsmart.rdf_import import parse_rdf

    memory = DynamicStructuredMemory(None)
    memory.observe_round("My dog is Rex. I live in Paris.", "Nice.", 0)
    for name, text in (("m.ttl", memory.to_turtle()), ("m.trig", memory.to_trig()), ("m.jsonld", memory.to_jsonld())):
        assert isomorphic(parse_rdf(text.encode(), name), memory.graph), name
    label = "<script>window.__pwned=1</script>"
    fragment = parse_rdf(f'<http://x/a> <http://www.w3.org/2000/01/rdf-schema#label> "{label}" .'.encode(), "x.nt")
    record = memory.import_turtle(fragment.serialize(format="nt"))
    assert len(record.added) == 1 and label in memory.to_turtle()


def test_malformed_jsonl_and_json_data_files_name_the_problem(tmp_path):
    from core.data.locomo import load_locomo
    from core.data.mtbench import load_mtbench

    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"task": "GR", "id": 1, "history": []}\n{"task": \n')
    with pytest.raises(ValueError, match=r"bad.jsonl:\d"):
        load_mtbench(jsonl)
    jsonl.write_text('["not", "a", "dialogue"]\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1"):
        load_mtbench(jsonl)
    for text in ("{not json", '{"a": 1}', "[1, 2]"):
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(ValueError, match="bad.json"):
            load_locomo(tmp_path / "bad.json")


def test_retrieval_page_reports_a_malformed_data_file(app_env, tmp_path):
    bad = tmp_path / "locomo.json"
    bad.write_text('[{"sample_id": 1, "conversation": "nope"}]')
    at = AppTest.from_file(RETRIEVAL, default_timeout=60)
    at.session_state["owner_id"] = ME
    at.run()
    at.text_input[0].set_value(str(bad)).run()
    assert not at.exception
    assert "Cannot use locomo" in at.error[0].value and "LoCoMo layout" in at.error[0].value


# -- a long conversation -----------------------------------------------------------------------------
def seed_long_conversation(store: Store, turns: int) -> str:
    cid = store.create_conversation("long", method="base", owner=ME)
    rows = [(cid, i, "user" if i % 2 == 0 else "assistant", f"turn number {i}", f"S0:{i}", 0, "", "", None, 0.0)
            for i in range(turns)]
    with sqlite3.connect(store.path) as raw:  # one transaction: seeding is not what is measured
        raw.executemany("INSERT INTO turns (conversation_id, idx, role, text, turn_id, session, speaker, date, reply, created_at) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    return cid


def test_a_10000_turn_conversation_is_shown_in_windows(stub):
    cid = seed_long_conversation(db(), 10_000)
    t0 = time.perf_counter()
    at = chat_page(conversation_id=cid)
    first = time.perf_counter() - t0
    assert not at.exception
    shown = [m.markdown[0].value for m in at.chat_message]
    assert len(shown) == 50 and shown[-1] == literal("turn number 9999")
    window = at.select_slider[0]
    assert "10,000" in window.label
    badges = lambda: [c.value for m in at.chat_message for c in m.caption if "Consistency" in c.value]
    assert len(badges()) == 5  # the replies among the latest 10 turns are judged unasked
    window.set_value(1).run()
    assert [m.markdown[0].value for m in at.chat_message][0] == literal("turn number 0")
    assert badges() == []  # an earlier window is judged on request (25 replies cost seconds with the real model)
    next(b for b in at.button if b.label.startswith("Check the consistency")).click().run()
    assert len(badges()) == 25
    at.chat_input[0].set_value("one more").run()  # still chats: the new round lands at the end
    assert not at.exception and len(db().turns(cid, owner=ME)) == 10_002
    print(f"\n10,000-turn Chat page, first run: {first:.2f} s")


# -- keys ----------------------------------------------------------------------------------------------
PLANTED = "sk-PLANTED-7f3a9c1e5b2d4086"


def page_dump(at: AppTest) -> str:
    """Every element the page sent to the browser, as protobuf text (the page's content)."""
    out, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        if getattr(node, "proto", None) is not None:
            out.append(str(node.proto))
        todo.extend(getattr(node, "children", {}).values())
    assert len(out) > 5
    return "\n".join(out)


def test_a_planted_key_never_reaches_pages_logs_exports_or_results(app_env, tiny_nli, monkeypatch, tmp_path, caplog,
                                                                  capsys):
    import logging

    caplog.set_level(logging.DEBUG)
    with LLMStub(reply=lambda body: f"Sure. Your key is {PLANTED}, and you said {body['messages'][-1]['content']}") as stub:
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", stub.url)
        monkeypatch.setenv("WORKBENCH_LLM_MODEL", "stub")
        monkeypatch.setenv("WORKBENCH_LLM_API_KEY", PLANTED)
        seen = []
        home = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)
        home.session_state["owner_id"] = ME
        home.run()
        seen.append(page_dump(home))
        home.button[0].click().run()  # check the backend: the hostile server echoes the key
        chat = chat_page()
        chat.sidebar.selectbox[0].set_value("dsm").run()
        chat.chat_input[0].set_value("My dog is Rex.").run()
        stub.mode = "403"  # an error whose body echoes the key
        chat.chat_input[0].set_value("and now?").run()
        assert "HTTP 403" in chat.error[0].value and "\\*\\*\\*" in chat.error[0].value  # "***", Markdown-escaped
        for page in (home, chat):
            seen.append(page_dump(page))
        assert any(h.get("authorization") == f"Bearer {PLANTED}" for h in stub.headers)  # the key was used
        store = db()
        [conv] = store.list_conversations(owner=ME)
        turns = store.turns(conv.id, owner=ME)
        assert "***" in turns[1].turn.text  # the echoed key was redacted before anything kept it
        from core.methods.dsmart.dsm_method import memory_from_state

        memory = memory_from_state(load_memory(store, conv.id, "dsm", owner=ME).state)
        exports = memory.to_turtle() + memory.to_trig() + memory.to_jsonld()
        # a benchmark run from the command line (in this process) with the key in the environment
        from core.cli import main

        stub.mode = "ok"
        out = tmp_path / "run"
        code = main(["bench", "mtbench", "--data", str(REPO / "tests/fixtures/mtbench_small.jsonl"), "--out", str(out),
                     "--methods", "base", "--limit", "1", "--max-tokens", "8", "--nli-model", str(tiny_nli)])
        assert code in (0, None)
        results = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
        assert "Your key is ***" in results  # the run used the hostile endpoint
    raw_db = b"".join(p.read_bytes() for p in Path(store.path).parent.glob("app.sqlite3*"))
    printed = capsys.readouterr()
    haystacks = {"pages": "\n".join(seen), "logs": caplog.text + printed.out + printed.err, "exports": exports,
                 "results": results, "database": raw_db.decode("latin-1")}
    for where, text in haystacks.items():
        assert PLANTED not in text, where
        assert PLANTED[3:15] not in text, where  # nor a recognisable piece of it
