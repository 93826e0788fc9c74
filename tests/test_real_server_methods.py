"""Every chat method (core.methods.METHODS) answers one short scripted dialogue through a real
llama.cpp HTTP server (the 135M model, tests/llama_server.py), as a user pointing the workbench at
their own server would run it. Small stand-ins keep it quick: the hashing embedder, a tiny
GenericsKB file for MCTS and a hand-built graph for the KG methods."""

from __future__ import annotations

import pytest

from core.chat import ChatSession, ScriptStep, run_script
from core.config import LLMSettings
from core.llm import make_llm
from core.methods import METHODS, Toolkit, method_class
from core.resources import HashingEmbedder
from tests.llama_server import MODEL_NAME

pytestmark = pytest.mark.slow

SCRIPT = [ScriptStep(user="Hi, I am Alice and I live in Lisbon."),
          ScriptStep(user="Where do I live?", expect=("Lisbon",))]


@pytest.fixture(scope="module")
def tools(llama_server):
    llm = make_llm(LLMSettings(backend="openai", model=MODEL_NAME, base_url=llama_server.url, api_key=llama_server.key,
                               timeout_s=300, max_retries=0, strong=False))
    # weak: methods score enumerated options, so the llama.cpp scoring route is exercised too
    return Toolkit(llm=llm, embedder=HashingEmbedder(256), strong=False)


def _config(name: str, tmp_path):
    if name == "mcts":
        from core.methods.mcts.config import KBSettings, MCTSConfig, ReasonerSettings
        from tests.mcts_helpers import write_kb

        return MCTSConfig(kb=KBSettings(path=str(write_kb(tmp_path)), concepts_per_group=4, cache_dir=str(tmp_path / "c")),
                          # two relations, short tails: the reasoner still generates and scores over HTTP
                          reasoner=ReasonerSettings(relations=ReasonerSettings().relations[:2], max_tokens=6, cache=False))
    if name.startswith("kgaug"):
        from core.methods.kgaug.config import KGAugConfig

        return KGAugConfig(ranker="bm25", rewrite=method_class(name).rewrite_default)
    return None


def _session(name: str, tools: Toolkit, tmp_path) -> ChatSession:
    session = ChatSession(name, tools, _config(name, tmp_path), max_tokens=8)
    if name.startswith("kgaug"):
        from core.methods.kgaug.linking import LinkerSettings
        from core.methods.kgaug.pipeline import build_knowledge
        from tests.kgaug_helpers import small_graph

        session.method.knowledge = build_knowledge(small_graph(), LinkerSettings(use_spacy=False))
    return session


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_answers_a_scripted_dialogue_through_the_server(name, tools, tmp_path):
    calls = tools.llm.calls
    records = list(run_script(_session(name, tools, tmp_path), SCRIPT))
    assert [r["turn"] for r in records] == [0, 1]
    assert all(r["reply"].strip() and r["model"] for r in records), records
    assert records[1]["expected"] == ["Lisbon"] and isinstance(records[1]["correct"], bool)
    assert tools.llm.calls > calls  # the replies came from the server
