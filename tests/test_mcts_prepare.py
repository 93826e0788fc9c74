"""The MCTS knowledge index prepared in the background with readable progress, and the `mcts`
reply's partial traces (inferences, then knowledge) handed over before its answer streams."""

from __future__ import annotations

import pytest

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import ReplyStream, Toolkit, create_method
from core.methods.mcts.config import KBSettings, MCTSConfig, ReasonerSettings
from core.methods.mcts.kb import KBFormatError
from core.methods.mcts.prepare import STAGE_WEIGHTS, KBPreparation, PrepareState, overall_fraction, prepare_kb, shared_kb
from core.resources import HashingEmbedder
from tests.mcts_helpers import write_kb
from tests.test_mcts_method import _reply_by_relation, _scorer


def _settings(tmp_path, path):
    return KBSettings(path=str(path), concepts_per_group=4, cache_dir=str(tmp_path / "cache"))


def test_overall_fraction_moves_forward_through_the_stages():
    points = [overall_fraction(stage, f) for stage in ("concepts", "sentence embeddings", "concept embeddings", "node groups")
              for f in (0.0, 0.5, 1.0)]
    assert points == sorted(points) and points[0] == 0.0 and points[-1] == pytest.approx(1.0)
    assert sum(STAGE_WEIGHTS.values()) == pytest.approx(1.0)
    assert overall_fraction("sentence embeddings", 0.5) == pytest.approx(0.33 + 0.175)
    line = PrepareState("sentence embeddings", 0.41, 95.0, True).describe()
    assert line == "building the knowledge index: 41% (sentence embeddings, 95 s)"
    assert PrepareState("loading", 0.0, 0.2, False).describe() == "loading the knowledge index…"


def test_preparation_builds_in_the_background_then_loads_from_the_cache(tmp_path):
    path = write_kb(tmp_path)
    embedder = HashingEmbedder(128)
    seen: list[PrepareState] = []
    prep = KBPreparation(path, embedder, _settings(tmp_path, path))
    original = prep._progress

    def spy(stage, fraction):
        original(stage, fraction)
        seen.append(prep.state())

    prep._progress = spy
    kb = prep.start().result()
    assert len(kb) == 30 and kb.groups is not None
    stages = [s.stage for s in seen]
    assert stages[0] == "reading" and {"concepts", "sentence embeddings", "concept embeddings", "node groups"} <= set(stages)
    fractions = [s.fraction for s in seen]
    assert fractions == sorted(fractions)  # the bar never goes back
    assert any(s.building and "building the knowledge index: " in s.describe() for s in seen)
    done = prep.state()
    assert done.done and done.stage == "ready" and done.fraction == 1.0 and done.building
    again = KBPreparation(path, embedder, _settings(tmp_path, path)).start()
    assert len(again.result()) == 30
    assert not again.state().building  # loaded from the on-disk cache, not built


def test_one_preparation_per_kb_and_embedder(tmp_path):
    path = write_kb(tmp_path)
    embedder, settings = HashingEmbedder(128), _settings(tmp_path, path)
    first = prepare_kb(path, embedder, settings)
    assert prepare_kb(path, embedder, settings) is first
    assert prepare_kb(path, HashingEmbedder(128), settings) is not first  # another embedder, another index
    assert shared_kb(path, embedder, settings) is shared_kb(str(path), embedder, settings) is first.result()


def test_a_failed_preparation_says_why_and_is_retried(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("only one column\n")
    embedder, settings = HashingEmbedder(64), _settings(tmp_path, bad)
    prep = prepare_kb(bad, embedder, settings)
    with pytest.raises(KBFormatError):
        prep.result()
    state = prep.state()
    assert state.stage == "failed" and "KBFormatError" in state.error and "could not be prepared" in state.describe()
    assert prepare_kb(bad, embedder, settings) is not prep  # a fresh try (e.g. after the file was fixed)


def test_mcts_reply_shows_inferences_then_knowledge_before_the_answer(tmp_path):
    path = write_kb(tmp_path)
    config = MCTSConfig(kb=_settings(tmp_path, path), reasoner=ReasonerSettings(cache=False))
    llm = ScriptedLLM(lambda m: "Dogs love parks." if any("Knowledge:" in x.content for x in m) else _reply_by_relation(m), scorer=_scorer)
    method = create_method("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config)
    events: list = []
    stream = ReplyStream(sink=lambda piece: events.append(("text", piece)),
                         progress=lambda e: events.append(("trace", e.trace)) if e.trace is not None else None)
    dialogue = Dialogue.from_turns([Turn(USER, "My dog wants to run in the park."), Turn(ASSISTANT, "Fun!")])
    reply = method.respond_streaming(dialogue, "Does he like other animals?", stream)
    kinds = [e[0] for e in events]
    assert kinds[:3] == ["trace"] * 3 and kinds[3:] and set(kinds[3:]) == {"text"}
    context, reasoned, searched = (e[1].nodes[0].detail for e in events[:3])
    assert context["phase"] == "context" and len(context["knowledge"]) == 5 and context["reasoning"] is None
    assert reasoned["phase"] == "reasoned" and reasoned["reasoning"]["candidates"] and reasoned["knowledge"] == []
    assert searched["phase"] == "searched"
    assert [k["text"] for k in searched["knowledge"]] == [e.text for e in reply.evidence] and len(reply.evidence) == 5
    assert "".join(e[1] for e in events if e[0] == "text").strip() == reply.text == "Dogs love parks."
    assert "search_context" in reply.timings
    # without a watcher the same reply is made, without the context-only search
    unwatched = method.respond(dialogue, "Does he like other animals?")
    assert unwatched.text == "Dogs love parks." and "search_context" not in unwatched.timings
    assert [e.text for e in unwatched.evidence] == [e.text for e in reply.evidence]


def test_chat_session_records_when_the_mcts_trace_came(tmp_path):
    from core.chat import ChatSession

    path = write_kb(tmp_path)
    config = MCTSConfig(kb=_settings(tmp_path, path), reasoner=ReasonerSettings(cache=False))
    llm = ScriptedLLM(lambda m: "Dogs love parks." if any("Knowledge:" in x.content for x in m) else _reply_by_relation(m), scorer=_scorer)
    session = ChatSession("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config)
    record = session.send("My dog wants to run in the park.")
    assert record["reply"] == "Dogs love parks."
    assert 0 <= record["first_trace_s"] == record["first_output_s"] <= record["seconds"]
    assert {"search_context", "reason", "search", "generate"} <= set(record["timings"])


class _Building:
    """A preparation caught in the middle of a build, as the sidebar reads it."""

    def state(self):
        return PrepareState("sentence embeddings", 0.41, 95.0, True)


def test_chat_sidebar_shows_the_index_being_built(app_env, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    import ui.mcts
    import ui.warmup

    monkeypatch.setenv("WORKBENCH_WARMUP", "1")
    monkeypatch.setenv("WORKBENCH_WARMUP_KB", "1")
    monkeypatch.setattr(ui.warmup, "start", lambda: None)  # no real models loading in this test
    monkeypatch.setattr(ui.mcts, "kb_preparation", lambda: _Building())
    chat = str(Path(__file__).resolve().parent.parent / "pages" / "1_Chat.py")
    at = AppTest.from_file(chat, default_timeout=120).run()
    at.sidebar.selectbox[0].set_value("mcts").run()
    assert not at.exception
    bars = [el.proto for el in at.get("progress")]
    assert bars and bars[0].value == 41 and bars[0].text == "building the knowledge index: 41% (sentence embeddings, 95 s)"


@pytest.mark.slow
def test_mcts_chat_with_the_small_embedded_model(tmp_path):
    """The real llama.cpp runtime (SmolLM2-135M): the reasoner's completions stop at a line and 8
    tokens, tau_r comes from the generation (no scoring pass), and the trace comes before the answer."""
    from core.chat import ChatSession
    from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

    llm = LlamaCppLLM(LlamaCppOptions(model="small", n_ctx=2048, slots=2, threads=2))
    try:
        path = write_kb(tmp_path)
        # budget_s=0: every relation is generated, so the count below is exact whatever the machine's speed
        config = MCTSConfig(kb=_settings(tmp_path, path), reasoner=ReasonerSettings(cache=False, budget_s=0))
        session = ChatSession("mcts", Toolkit(llm=llm, embedder=HashingEmbedder(128)), config, max_tokens=24)
        record = session.send("My dog wants to run in the park every day.")
        reasoning = session.method.search(session.dialogue, "Does he like other animals?").reasoning
    finally:
        llm.close()
    assert record["reply"] and len(record["evidence"]) == 5
    assert record["first_trace_s"] is not None and record["first_trace_s"] < record["seconds"]
    reason = record["cost"]["reason"]
    assert reason["llm_calls"] == 11 and reason["completion_tokens"] <= 11 * 8  # one call per relation, none scoring
    assert reasoning.scored and all(c.tau is not None and c.tau <= 0 for c in reasoning.candidates)
    assert all("\n" not in c.text for c in reasoning.candidates)
