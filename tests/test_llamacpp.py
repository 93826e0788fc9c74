"""The embedded llama.cpp backend against the real SmolLM2-135M GGUF (chat, JSON schema, streaming,
scoring, the context window), and its scoring against the transformers backend on the same file."""

from __future__ import annotations

import threading

import pytest

from core.llm.base import LLMError, Message
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions, clean_text
from core.llm.trie_scoring import trie_prefixes as _trie_prefixes


def test_trie_prefixes_are_distinct_and_depth_first():
    assert _trie_prefixes([[1, 2, 3], [1, 2, 4], [5]]) == [(), (1,), (1, 2)]
    assert _trie_prefixes([[7]]) == [()]


class PartialBytesServer:
    """llama.cpp's one-token completions over a fixed next-token table, reporting nothing (None) when
    the sampled token is one byte of a multi-byte character, as the real server does."""

    def __init__(self, logprobs: dict[int, float], partial: set[int]) -> None:
        self.logprobs, self.partial, self.calls = logprobs, partial, []

    def __call__(self, prompt_ids, n_probs, logit_bias=()):
        self.calls.append((n_probs, [t for t, _ in logit_bias]))
        forced = [t for t, bias in logit_bias if bias > 0]
        token = forced[0] if forced else max(self.logprobs, key=self.logprobs.get)
        if token in self.partial:
            return None
        ranked = sorted(self.logprobs, key=self.logprobs.get, reverse=True)[:n_probs]
        return {"id": token, "logprob": self.logprobs[token],
                "top_logprobs": [{"id": t, "logprob": self.logprobs[t]} for t in ranked]}


def test_trie_scoring_reads_tokens_that_are_part_of_a_character():
    from core.llm.trie_scoring import score_by_trie

    table = {10: -0.1, 11: -2.0, 12: -3.0, 99: -9.0, 2: -4.0}  # 10 and 99: first bytes of emoji; 2: end of turn
    server = PartialBytesServer(table, partial={10, 99})
    # the greedy token (10) is partial: the top list comes from sampling the end token instead
    assert score_by_trie([1], [[10], [11], [99]], server, n_probs=3, whole_token=2) == [-0.1, -2.0, -9.0]
    assert server.calls[:2] == [(3, []), (3, [2])]
    # 99 is outside the top 3 and partial: forcing it reports nothing, so it is read from the wide list
    assert server.calls[-1] == (1000, [2]) and (1, [99]) in server.calls
    beyond = PartialBytesServer({**table, **{100 + i: -5.0 - i / 1000 for i in range(1200)}}, partial={10, 99})
    (bound,) = score_by_trie([1], [[99]], beyond, n_probs=3, whole_token=2)
    assert bound == pytest.approx(-5.0 - 995 / 1000)  # beyond the 1000 best: the last of them bounds it


def test_clean_text_never_returns_invalid_utf8():
    assert clean_text(b"caf\xc3\xa9 \xff") == "café \ufffd"
    assert clean_text("a\udc80b").encode("utf-8")  # a lone surrogate would raise here
    assert clean_text(None) == ""


@pytest.fixture(scope="module")
def small():
    llm = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=2, threads=2))
    yield llm
    llm.close()


def test_chat_and_batch(small):
    reply = small.chat("Alice lives in Lisbon. Where does Alice live?", temperature=0.0, max_tokens=16)
    assert "Lisbon" in reply.text
    assert reply.completion_tokens <= 16 and reply.prompt_tokens > 5
    batch = small.chat_batch(["Say hello.", "Name a colour."], temperature=0.0, max_tokens=8)
    assert len(batch) == 2 and all(c.text for c in batch)


def paragraph_dialogue() -> list[Message]:
    """A system message and four long turns, user and assistant in turn: a window to cut at its start."""
    paragraphs = [f"Paragraph {i}: " + " ".join(f"{w}{i}" for w in ("river", "stone", "lamp", "cloud") * 12) for i in range(4)]
    return [Message("system", "You are terse."), *(Message("user" if i % 2 == 0 else "assistant", p)
                                                   for i, p in enumerate(paragraphs))]


def test_a_window_cut_at_its_start_is_shifted_in_the_cache_not_computed_again():
    """n_cache_reuse (LlamaCppOptions.cache_reuse): the second prompt drops the first's opening
    paragraph; the rest, the same tokens further forward, is reused from the slot's cache. One slot:
    with two, the slot choice (the next test) is what keeps the cut prompt in the slot that holds it."""
    from core.llm import cost

    small = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=1, threads=2))

    first = paragraph_dialogue()
    cut = [first[0], *first[2:], Message("user", "Say OK.")]
    try:
        small.chat(first, temperature=0.0, max_tokens=1)
        with cost.measure() as meter:
            small.chat(cut, temperature=0.0, max_tokens=1)
    finally:
        small.close()
    work = cost.totals(meter.as_dict())
    assert work["cached_tokens"] > 2 * work["processed_tokens"]  # most of the cut prompt came from the cache


@pytest.mark.parametrize("choose", [True, False])
def test_with_two_slots_a_cut_window_stays_in_the_slot_that_holds_it(choose):
    """The slot choice (LlamaCppOptions.choose_slots, core/llm/slot_choice.py): a prompt that lost its
    window's start shares only the system message with its slot as a prefix; the server alone sends
    it to the least recently used slot and computes it all again."""
    from core.llm import cost

    llm = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=2, threads=2, choose_slots=choose))
    first = paragraph_dialogue()
    try:
        llm.chat([Message("user", "Warm up: say OK.")], temperature=0.0, max_tokens=1)
        llm.chat(first, temperature=0.0, max_tokens=1)
        with cost.measure() as meter:
            llm.chat([first[0], *first[3:], Message("user", "Say OK.")], temperature=0.0, max_tokens=1)
    finally:
        llm.close()
    work = cost.totals(meter.as_dict())
    if choose:
        assert work["cached_tokens"] > 2 * work["processed_tokens"]
    else:
        assert work["processed_tokens"] > 2 * work["cached_tokens"]  # what the slot choice is for


def test_a_cpu_server_leaves_the_cores_to_itself(small):
    """torch's OpenMP pool (another libgomp) halves the server's decode speed once it exists."""
    import torch

    assert torch.get_num_threads() == 1


def test_json_follows_the_schema_by_grammar(small):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    value = small.json("Bob is 4 years old. Give his name and age as JSON.", schema, max_tokens=40)
    assert set(value) == {"name", "age"} and isinstance(value["age"], int)


def test_stream_yields_pieces_and_cancel_stops_it(small):
    pieces = list(small.stream("Count from one to ten in words.", temperature=0.0, max_tokens=24))
    assert len(pieces) > 3
    assert "".join(pieces).strip() == small.chat("Count from one to ten in words.", temperature=0.0, max_tokens=24).text
    cancel = threading.Event()
    got = []
    for piece in small.stream("Write a long story about a dragon.", temperature=0.0, max_tokens=200, cancel=cancel):
        got.append(piece)
        if len(got) == 3:
            cancel.set()
    assert len(got) < 20  # stopped within a few tokens of the cancel, not at 200


def test_scoring_candidates_with_emoji_and_accents(small):
    """An emoji is two tokens whose first is half a character: llama.cpp reports nothing for it on
    its own, and the scores still come back finite."""
    scores = small.score("Say something friendly.", ["🙂 fine", "café 🙂", "ok"])
    assert all(-200 < s < 0 for s in scores)


def test_scoring_prefers_the_supported_answer(small):
    scores = small.score("Alice lives in Lisbon. Where does Alice live? Answer with the city.", ["Lisbon", "Tokyo", "Lisbon, Portugal", ""])
    assert scores[0] > scores[1]
    assert all(s < 0 for s in scores)
    index, _ = small.choose("Is the sky blue on a clear day? Answer yes or no.", ["yes", "no"])
    assert index == 0


def test_a_prompt_beyond_the_context_is_cut_and_said_so(small):
    messages = [Message("system", "You are brief.")] + [Message("user", f"Fact {i}: " + "word " * 60) for i in range(30)]
    messages.append(Message("user", "What is fact 29 about?"))
    reply = small.chat(messages, temperature=0.0, max_tokens=8)
    assert reply.truncated > 0
    assert small.chat("hi", temperature=0.0, max_tokens=5000).completion_tokens <= 512  # bounded: half the context at most
    with pytest.raises(LLMError, match="no room"):
        small.fit_messages([Message("user", "hi")], 1000)  # leaves no room in a 1024-token context


def test_a_corrupt_model_file_is_refused_clearly(tmp_path):
    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(LLMError, match="could not load"):
        LlamaCppLLM(LlamaCppOptions(model=str(fake)))


@pytest.mark.slow
def test_scores_rank_candidates_as_transformers_does_on_the_same_gguf(small, local_llm):
    """Both backends run SmolLM2-135M from the one GGUF file: llama.cpp's trie route must order
    the candidates as transformers' teacher-forced log-likelihoods do."""
    cases = [
        ("Alice lives in Lisbon. Where does Alice live? Answer with the city.", ["Lisbon", "Tokyo", "Paris", "a small town"]),
        ("Rate how relevant 'cats' is to 'pets' from 0 to 10.", [str(k) for k in range(11)]),
        ("Which action comes next?", ["EXPAND_ENTITY", "FIND_PATH", "THINK", "ANSWER"]),
    ]
    for prompt, candidates in cases:
        a = small.score(prompt, candidates)
        b = local_llm.score(prompt, candidates)
        assert max(range(len(a)), key=a.__getitem__) == max(range(len(b)), key=b.__getitem__), (prompt, a, b)
        for x, y in zip(a, b):
            assert abs(x - y) < 0.6 + 0.15 * abs(y), (prompt, a, b)  # same model, other kernels and quantisation paths


@pytest.mark.slow
def test_default_model_answers_a_recall_question():
    llm = LlamaCppLLM(LlamaCppOptions(model="default", n_ctx=2048, slots=1))
    try:
        messages = [Message("user", "Hi, my name is Alice and I live in Lisbon. I have two cats."),
                    Message("assistant", "Nice to meet you, Alice!"),
                    Message("user", "Where do I live, and how many cats do I have?")]
        text = llm.chat(messages, temperature=0.0, max_tokens=40).text
        assert "Lisbon" in text and ("two" in text.lower() or "2" in text)
    finally:
        llm.close()


def test_cost_meters_take_the_servers_usage_and_tokenizer(small):
    from core.llm import cost

    prompt = "Alice lives in Lisbon. Where does Alice live?"
    with cost.measure() as meter:
        with cost.stage("chat"):
            reply = small.chat(prompt, temperature=0.0, max_tokens=8)
        with cost.stage("json"):
            small.json("Give a JSON object with a key 'city'.", {"type": "object", "properties": {"city": {"type": "string"}},
                                                                  "required": ["city"]}, max_tokens=24)
        with cost.stage("stream"):
            text = "".join(small.stream(prompt, temperature=0.0, max_tokens=8))
        with cost.stage("score"):
            small.score(prompt, ["Lisbon", "Paris"])
    rows = meter.as_dict()
    # the server's own request counts come beside the call counts (processed + reused = the prompt)
    assert rows["chat"]["processed_tokens"] + rows["chat"]["cached_tokens"] == rows["chat"]["prompt_tokens"]
    assert rows["score"]["requests"] >= 1 and rows["stream"]["generated_tokens"] >= 1
    got = {stage: {k: row[k] for k in cost.KEYS} for stage, row in rows.items()}
    templated = len(small.prompt_ids([Message("user", prompt)]))
    assert got["chat"] == {"llm_calls": 1, "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
    assert reply.prompt_tokens == templated and 0 < reply.completion_tokens <= 8
    assert got["json"]["llm_calls"] == 1 and got["json"]["completion_tokens"] > 0
    assert got["stream"] == {"llm_calls": 1, "prompt_tokens": templated, "completion_tokens": len(small.tokenize(text))}
    candidates = len(small.tokenize("Lisbon")) + len(small.tokenize("Paris"))
    assert got["score"] == {"llm_calls": 1, "prompt_tokens": templated + candidates, "completion_tokens": 0}


def test_generated_token_logprobs_are_what_scoring_reads(small):
    """The log-probabilities llama.cpp reports for the tokens it generated (the MCTS reasoner's
    tau_r without a second pass) agree with scoring the same text after the same prompt."""
    from core.llm.base import Message
    from core.methods.mcts.reasoner import generated_logprob

    messages = [Message("user", "Complete the sentence with a few words: After the rain, the children")]
    assert small.chat(messages, temperature=0.0, max_tokens=8).token_logprobs is None  # not asked for: not read
    [reply] = small.chat_batch([messages], temperature=0.0, max_tokens=8, logprobs=True)
    assert reply.token_logprobs and len(reply.token_logprobs) == reply.completion_tokens
    assert all(t.logprob <= 0.0 for t in reply.token_logprobs)
    generated = generated_logprob(reply.token_logprobs, reply.text)
    assert generated is not None
    [[scored]] = small.score_batch([(messages, [reply.text])])
    assert generated[0] == pytest.approx(scored, abs=0.01 * generated[1])  # 1e-5 apart here; slots may differ a little


EXIT_MID_STREAM = """
import sys, threading
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions
llm = LlamaCppLLM(LlamaCppOptions(model="small", threads=1))
started = threading.Event()
def consume():
    for _ in llm.stream([{"role": "user", "content": "Write a very long story about a dog."}], max_tokens=2000):
        started.set()
threading.Thread(target=consume, daemon=True).start()
assert started.wait(60), "no token within 60 s"
sys.exit(0)  # as the app exits after SIGTERM: a reply is still being generated
"""


@pytest.mark.slow
def test_exiting_while_a_reply_streams_shuts_the_server_down_cleanly():
    """Before the exit hook, this ended in "FATAL: exception not rethrown" and exit code 134 (or a
    segfault, or "terminate called without an active exception" under Streamlit's SIGTERM)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", EXIT_MID_STREAM], cwd=repo, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "terminate called" not in out.stderr and "FATAL" not in out.stderr


def test_a_seeded_server_samples_the_same_reply_twice():
    """`--llm-seed`: what scripts/lab/same_replies.py needs to see that a refactor changed no reply."""
    import argparse

    from core.llm import llamacpp_options
    from core.toolkit import add_llm_options, llm_settings_from_args

    parser = argparse.ArgumentParser()
    add_llm_options(parser)
    options = llamacpp_options(llm_settings_from_args(parser.parse_args(["--model", "small", "--llm-seed", "7"])))
    assert options.seed == 7
    llm = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=1, threads=2, seed=options.seed))
    try:
        first, again = (llm.chat("Tell me about your day.", temperature=1.0, max_tokens=24).text for _ in range(2))
    finally:
        llm.close()
    assert first and first == again


def test_speculative_kinds_set_the_servers_types_and_an_unknown_one_is_refused():
    import xllamacpp

    from core.llm.llamacpp import configure_speculative

    kinds = xllamacpp.common_speculative_type
    for name, member in (("ngram-simple", kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE),
                         ("ngram-mod", kinds.COMMON_SPECULATIVE_TYPE_NGRAM_MOD)):
        params = xllamacpp.CommonParams()
        configure_speculative(params, LlamaCppOptions(speculative=name), xllamacpp)
        assert list(params.speculative.types) == [member]
    untouched = xllamacpp.CommonParams()
    configure_speculative(untouched, LlamaCppOptions(), xllamacpp)
    assert list(untouched.speculative.types) == [kinds.COMMON_SPECULATIVE_TYPE_NONE]
    with pytest.raises(LLMError, match="unknown speculative"):
        configure_speculative(xllamacpp.CommonParams(), LlamaCppOptions(speculative="ngram-magic"), xllamacpp)


def test_ngram_speculation_writes_what_the_plain_server_writes(small):
    """Greedy replies are the same with n-gram drafts (scripts/lab/speculative_decode.py measured it
    on the 1.5B: 12 of 12 the same, and no faster on 2 cores, so it is not the default)."""
    drafted = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=1024, slots=2, threads=2, speculative="ngram-simple"))
    try:
        for text in ("List the days of the week, then list them again.", "Say hello."):
            plain = small.chat(text, temperature=0.0, max_tokens=40).text
            assert drafted.chat(text, temperature=0.0, max_tokens=40).text == plain
    finally:
        drafted.close()
