"""Per-reply consistency in the Chat page: each assistant reply shows its NLI label and CS
against the conversation before it (a tiny random NLI model stands in for the trained one, so the
check is exact: the badge must carry the scorer's own judgement of that history)."""

from __future__ import annotations

from pathlib import Path

import pytest
from nli_helpers import write_tiny_nli_model
from streamlit.testing.v1 import AppTest

from core.dialogue import ASSISTANT, USER, Turn
from core.metrics import nli
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
CHAT = str(REPO / "pages" / "1_Chat.py")
ME = "anon:tests"


def _forget_loaded_models() -> None:
    """The scorer is cached by core (lru_cache) and by the app (st.cache_resource)."""
    from ui import resources

    nli.load_nli.cache_clear()
    resources.nli_scorer.clear()


@pytest.fixture()
def tiny_default_model(tmp_path, monkeypatch):
    folder = write_tiny_nli_model(tmp_path / "nli")
    monkeypatch.setattr(nli, "DEFAULT_NLI_MODEL_DIR", folder)
    _forget_loaded_models()
    yield folder
    _forget_loaded_models()


def test_chat_shows_each_replys_consistency(app_env, tiny_default_model):
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="Berlin", method="base", owner=ME)
    turns = [Turn(USER, "I live in Berlin."), Turn(ASSISTANT, "Berlin is a lovely city."),
             Turn(USER, "Where do I live?"), Turn(ASSISTANT, "You live in Berlin.")]
    for t in turns:
        store.add_turns(cid, [(t, None)], owner=ME)
    at = AppTest.from_file(CHAT, default_timeout=60)
    at.session_state["conversation_id"] = cid
    at.session_state["owner_id"] = ME
    at.run()
    assert not at.exception
    assistant = [m for m in at.chat_message if m.name == "assistant"]
    captions = [c.value for m in assistant for c in m.caption if "Consistency" in c.value]
    assert len(captions) == 2
    scorer = nli.NLIScorer(str(tiny_default_model))
    expected = scorer.judge(["User: I live in Berlin.", "Assistant: Berlin is a lovely city.", "User: Where do I live?"],
                            "You live in Berlin.")
    assert f"CS {expected.consistency:.2f}" in captions[1] and expected.label in captions[1]
    assert not [m for m in at.chat_message if m.name == "user" and any("Consistency" in c.value for c in m.caption)]


def test_chat_says_when_the_nli_model_is_missing(app_env, tmp_path, monkeypatch):
    monkeypatch.setattr(nli, "DEFAULT_NLI_MODEL_DIR", tmp_path / "absent")
    _forget_loaded_models()
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="x", method="base", owner=ME)
    store.add_turns(cid, [(Turn(USER, "Hi."), None)], owner=ME)
    store.add_turns(cid, [(Turn(ASSISTANT, "Hello."), None)], owner=ME)
    at = AppTest.from_file(CHAT, default_timeout=60)
    at.session_state["conversation_id"] = cid
    at.session_state["owner_id"] = ME
    at.run()
    assert not at.exception
    assert any("Consistency check off" in c.value and "train-nli" in c.value for c in at.caption)


def test_judgements_are_stored_once_and_read_back_by_a_new_session(app_env, tiny_default_model, monkeypatch):
    """The first view judges the replies and stores each judgement with its turn (and the model's
    name); a second session (another tab, a reload, a reconnect to another replica) shows the same
    badges without running the model; a different model judges again."""
    store = Store(app_env / "app.sqlite3")
    cid = store.create_conversation(title="Berlin", method="base", owner=ME)
    for t in [Turn(USER, "I live in Berlin."), Turn(ASSISTANT, "Berlin is a lovely city."),
              Turn(USER, "Where do I live?"), Turn(ASSISTANT, "You live in Berlin.")]:
        store.add_turns(cid, [(t, None)], owner=ME)

    def open_chat() -> list[str]:
        at = AppTest.from_file(CHAT, default_timeout=60)
        at.session_state["conversation_id"] = cid
        at.session_state["owner_id"] = ME
        at.run()
        assert not at.exception
        return [c.value for m in at.chat_message if m.name == "assistant" for c in m.caption if "Consistency" in c.value]

    first = open_chat()
    stored = [s.checks.get("nli") for s in store.turns(cid, owner=ME)]
    assert stored[0] is None and stored[2] is None and stored[1]["model"] == stored[3]["model"] == tiny_default_model.name
    expected = nli.NLIScorer(str(tiny_default_model)).judge(
        ["User: I live in Berlin.", "Assistant: Berlin is a lovely city.", "User: Where do I live?"], "You live in Berlin.")
    assert nli.NLIJudgement.from_dict(stored[3]) == expected

    calls = []
    real = nli.NLIScorer.judge_many
    monkeypatch.setattr(nli.NLIScorer, "judge_many", lambda self, items: calls.append(len(items)) or real(self, items))
    assert open_chat() == first and calls == []  # read back, not judged again

    store.put_checks(cid, {3: {"nli": {**stored[3], "model": "another-model"}}}, owner=ME)
    assert open_chat() == first and calls == [1]  # judged by another model: this one judges it again
