from __future__ import annotations

import pytest

from core.config import LLMSettings, llm_settings_from
from core.llm import LLMOutputError, Message, load_prompt, render_prompt
from core.llm.base import cut_at_stop, extract_json
from core.llm.fake import ScriptedLLM


def test_scripted_replies_in_order_then_repeat_last():
    llm = ScriptedLLM(["one", "two"])
    assert [llm.chat("x").text for _ in range(3)] == ["one", "two", "two"]
    assert llm.calls == 3


def test_chat_batch_counts_each_conversation_and_applies_stop():
    llm = ScriptedLLM(lambda msgs: msgs[-1].content.upper() + " STOP tail")
    out = llm.chat_batch(["a", "b"], stop=[" STOP"])
    assert [c.text for c in out] == ["A", "B"]
    assert llm.calls == 2


def test_choose_returns_best_option_by_per_char_score():
    llm = ScriptedLLM(scorer=lambda msgs, cand: {"yes": -1.0, "no": -3.0}[cand])
    index, scores = llm.choose("q", ["no", "yes"])
    assert index == 1
    assert scores == [-1.5, -1 / 3]


def test_json_validates_against_schema_and_retries():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    llm = ScriptedLLM(["not json", 'Sure: ```json\n{"n": 3}\n```'])
    assert llm.json("give n", schema) == {"n": 3}
    # The retry tells the model what was wrong.
    assert "invalid" in llm.requests[1][-1].content


def test_json_raises_after_retries():
    llm = ScriptedLLM(['{"n": "three"}'])
    with pytest.raises(LLMOutputError):
        llm.json("give n", {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}, retries=1)


def test_extract_json_finds_bare_object_after_text():
    assert extract_json('The answer is {"a": [1, 2]} ok') == {"a": [1, 2]}
    with pytest.raises(LLMOutputError):
        extract_json("no braces here")


def test_cut_at_stop_uses_earliest_stop():
    assert cut_at_stop("abc\nUser: x###", ["###", "\nUser:"]) == "abc"
    assert cut_at_stop("abc", None) == "abc"


def test_prompts_are_package_data_and_placeholders_checked():
    assert "helpful assistant" in load_prompt("chat_system")
    text = render_prompt("reply_length", sentences=2)
    assert text.startswith("Keep your replies short") and "at most 2 sentences" in text and "{sentences}" not in text
    with pytest.raises(KeyError):
        render_prompt("reply_length")
    with pytest.raises(FileNotFoundError):
        load_prompt("no_such_prompt")


def test_api_key_never_in_repr():
    s = LLMSettings(backend="openai", model="m", api_key="sk-secret-123")
    assert "sk-secret-123" not in repr(s)
    assert "sk-secret-123" not in s.describe()


def test_settings_from_environment_mapping():
    assert llm_settings_from({}).backend == "local"
    s = llm_settings_from({"OPENAI_BASE_URL": "http://localhost:11434/v1", "WORKBENCH_LLM_MODEL": "llama3"})
    assert (s.backend, s.model, s.base_url, s.is_strong) == ("openai", "llama3", "http://localhost:11434/v1", True)
    assert llm_settings_from({"OPENAI_API_KEY": "k"}).model == "gpt-4o-mini"
    with pytest.raises(ValueError):
        llm_settings_from({"WORKBENCH_LLM_BACKEND": "gpt"})


def test_message_coercion_from_dicts():
    llm = ScriptedLLM(["ok"])
    llm.chat([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    assert llm.requests[0] == [Message("system", "s"), Message("user", "u")]
