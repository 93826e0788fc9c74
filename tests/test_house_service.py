"""The conversation service owns what writes to the store (issue 56): a comparison's group of
conversations, the judging of earlier replies and the Memory graph's rebuild. Pages and ui modules
read widgets, call the service and draw: the source checks below keep it so, and the unit tests
run the service's new parts on SQLite with the scripted LLM."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from rdflib import RDFS, Literal

from core.conversation import ConversationService, ReplyStored, load_memory
from core.dialogue import ASSISTANT, USER, Reply, Turn
from core.judging import NLI_CONTEXT_TURNS, history_of, judge_consistency
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.dsmart.vocab import DSM, entity
from core.methods.dsmart.vocab import USER as USER_NODE
from core.metrics.nli import NLIJudgement, NLIProbs
from core.paths import MissingResource
from core.store import Store

REPO = Path(__file__).resolve().parent.parent
ME = "anon:house"
FRONT = sorted([*(REPO / "pages").glob("*.py"), *(REPO / "ui").glob("*.py")])
STORE_WRITES = ("create_conversation", "delete_conversation", "put_checks", "observe_round", "add_turns", "put_artifact")
# What rebuilding a memory takes: D-SMART's memory and how its method packs it. Drawing a graph
# (ui/graphs.py reads D-SMART's vocabulary) is not rebuilding it.
REBUILD_MODULES = ("core.methods.dsmart.memory", "core.methods.dsmart.dsm_method")
REBUILD_NAMES = {"pack_state", "split_state", "memory_from_state", "DynamicStructuredMemory"}


def _imports(path: Path) -> list[tuple[str, set[str]]]:
    """(module, names imported from it) for every import in the file, lazy ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, set()) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, {a.name for a in node.names}))
    return out


# -- the source checks ------------------------------------------------------------------------------------
def test_the_scans_see_pages_and_ui_and_would_catch_a_store_write():
    assert len(FRONT) > 20 and any(p.name == "6_Compare.py" for p in FRONT)
    pattern = re.compile(r"\.(" + "|".join(STORE_WRITES) + r")\(")
    assert pattern.search("group = {m: store.create_conversation(title=t) for m in methods}")
    assert not pattern.search("service.start_comparison(methods, query)")


def test_no_page_or_ui_module_writes_conversations_checks_or_memories_itself():
    pattern = re.compile(r"\.(" + "|".join(STORE_WRITES) + r")\(")
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in FRONT
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert found == []


def test_no_page_imports_a_methods_module():
    found = []
    for path in sorted((REPO / "pages").glob("*.py")):
        for module, names in _imports(path):
            subs = [module] if module.startswith("core.methods.") else []
            subs += [f"core.methods.{n}" for n in names if module == "core.methods" and (REPO / "core/methods" / n).exists()]
            found += [(path.name, m) for m in subs]
    assert found == []


def test_no_page_or_ui_module_rebuilds_a_memory_with_method_internals():
    found = [(str(p.relative_to(REPO)), module) for p in FRONT for module, names in _imports(p)
             if module.startswith(REBUILD_MODULES) or (module.startswith("core.methods") and names & REBUILD_NAMES)]
    assert found == []


# -- the service ------------------------------------------------------------------------------------------
@pytest.fixture()
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite3")


def service(store: Store, replies=("A reply.",) * 8) -> ConversationService:
    llm = ScriptedLLM(list(replies))
    return ConversationService(store, ME, lambda name: create_method(name, Toolkit(llm=llm)), today=lambda: "2026-11-27")


def answer_all(rounds: dict) -> dict[str, ReplyStored]:
    done = {}
    for method, round_ in rounds.items():
        with round_:
            done[method] = next(e for e in round_.events(max_tokens=32, tick_s=0.05) if isinstance(e, ReplyStored))
    return done


def test_a_comparison_is_one_conversation_per_method_answered_and_read_back_as_rows(store):
    svc = service(store)
    group = svc.start_comparison(["base", "rag"], "I live in Lisbon and I keep bees.")
    assert list(group) == ["base", "rag"] and len(set(group.values())) == 2
    infos = {c.id: c for c in store.list_conversations(owner=ME)}
    assert {infos[cid].method for cid in group.values()} == {"base", "rag"}
    assert infos[group["rag"]].title == "Compare: I live in Lisbon and I keep bees. (rag)"
    done = answer_all(svc.comparison_rounds(group, ["rag", "base"], "I live in Lisbon and I keep bees."))
    assert set(done) == {"base", "rag"}
    rows, apart = svc.comparison_rows(group)
    assert not apart and len(rows) == 1 and rows[0].user == "I live in Lisbon and I keep bees."
    assert {m: r.turn.text for m, r in rows[0].replies.items()} == {m: e.reply.text for m, e in done.items()}
    from core.compare_group import comparisons

    assert comparisons(store, ME)[0].group == group  # first in the owner's list of comparisons


def test_a_new_comparison_with_nothing_stored_is_discarded_and_one_with_a_compared_turn_kept(store):
    svc = service(store)
    empty = svc.start_comparison(["base", "rag"], "Hello there.")
    assert svc.discard_comparison(empty) is True
    assert store.list_conversations(owner=ME) == []
    kept = svc.start_comparison(["base", "rag"], "Hello again.")
    answer_all(svc.comparison_rounds(kept, ["base", "rag"], "Hello again."))
    assert svc.discard_comparison(kept) is False
    assert {c.id for c in store.list_conversations(owner=ME)} == set(kept.values())


def test_a_comparison_where_only_one_method_stored_its_reply_counts_as_nothing_compared(store):
    """As the page has always done: a first message one method answered and another did not leaves
    no compared turn, so the new group goes again."""
    svc = service(store)
    group = svc.start_comparison(["base", "rag"], "Hi.")
    svc.add_exchange(group["base"], "base", "Hi.", Reply(text="Hello.", method="base", model="scripted"))
    assert svc.comparison_rows(group) == ([], True)
    assert svc.discard_comparison(group) is True
    assert store.list_conversations(owner=ME) == []


class RecordingNLI:
    """A scorer that gives a fixed judgement and records what it was asked."""

    name = "tiny-nli"

    def __init__(self) -> None:
        self.asked: list[tuple[list[str], str]] = []

    def judge_many(self, items):
        self.asked += [(list(h), r) for h, r in items]
        return [NLIJudgement(NLIProbs(0.7, 0.2, 0.1), 0, 1, "premise") for _ in items]

    def judge(self, history, text):
        return self.judge_many([(history, text)])[0]


def stored_conversation(store: Store, rounds: int) -> str:
    cid = store.create_conversation("long", method="base", owner=ME)
    turns = []
    for i in range(rounds):
        turns += [(Turn(USER, f"Message {i}."), None), (Turn(ASSISTANT, f"Reply {i}."), Reply(text=f"Reply {i}.", method="base", model="scripted"))]
    store.add_turns(cid, turns, owner=ME)
    return cid


def test_earlier_replies_are_judged_once_against_the_rounds_window_and_stored(store):
    svc, nli = service(store), RecordingNLI()
    cid = stored_conversation(store, 60)  # 120 turns: longer than the window
    stored = store.turns(cid, owner=ME)
    memo: dict = {}
    judged = svc.judge_replies(cid, stored, lambda: nli, memo, show_from=100, judge_from=110)
    assert sorted(judged) == [111, 113, 115, 117, 119]  # replies from 110 on; 101..109 are only shown, and unjudged
    last = stored[-1]
    assert nli.asked[-1] == (history_of([s.turn for s in stored[:-1]]), last.turn.text)
    assert len(nli.asked[-1][0]) == NLI_CONTEXT_TURNS
    # the same window as a reply judged by its round
    assert judge_consistency(lambda: nli, [s.turn for s in stored[:-1]], last.turn.text) is not None
    assert nli.asked[-1][0] == nli.asked[-2][0]
    checks = {s.index: s.checks for s in store.turns(cid, owner=ME)}
    assert checks[119]["nli"]["model"] == "tiny-nli" and "nli" not in checks[109]
    # another session (no memo) reads the stored judgements back: the model is not asked again
    asked = len(nli.asked)
    again = svc.judge_replies(cid, store.turns(cid, owner=ME), lambda: nli, {}, show_from=110, judge_from=110)
    assert sorted(again) == sorted(judged) and len(nli.asked) == asked
    assert again[119] == judged[119]


def test_without_an_nli_model_nothing_is_judged_or_stored(store):
    svc = service(store)
    cid = stored_conversation(store, 2)

    def missing():
        raise MissingResource("no NLI model here")

    with pytest.raises(MissingResource):
        svc.judge_replies(cid, store.turns(cid, owner=ME), missing, {})
    assert all(not s.checks for s in store.turns(cid, owner=ME))
    assert svc.judge_replies(cid, [], missing, {}) == {}  # nothing to judge: the model is not asked for


def test_a_conversation_without_a_graph_memory_is_rebuilt_round_by_round_and_stored(store):
    svc = service(store)
    cid = store.create_conversation("plain", method="base", owner=ME)
    for role, text in [(USER, "My dog is Rex."), (ASSISTANT, "Nice."), (USER, "Actually my dog is called Max."),
                       (ASSISTANT, "OK.")]:
        store.add_turns(cid, [(Turn(role, text), None)], owner=ME)
    assert svc.graph_memory(cid) is None
    svc.rebuild_graph_memory(cid, None, strong=False)
    assert load_memory(store, cid, "dsm", owner=ME).observed == 4
    view = svc.graph_memory(cid)
    assert view.source == "stored `dsm` memory" and view.method_name == "dsm"
    assert [r.turn_index for r in view.history] == [0, 1]
    words = lambda graph: " ".join(str(o) for _, _, o in graph)  # noqa: E731
    assert "Rex" in words(view.graph_after(1)) and "Max" not in words(view.graph_after(1))
    assert "Max" in words(view.graph_after(2)) and "Rex" not in words(view.graph_after(2))  # pruned
    assert view.findings(0) == [] and isinstance(view.findings(2), list)
    said = view.said_by_fact()
    assert any("Max" in text for text in said.values())


def test_an_rdf_import_is_kept_and_a_bad_file_changes_nothing(store):
    svc = service(store)
    cid = store.create_conversation("plain", method="base", owner=ME)
    store.add_turns(cid, [(Turn(USER, "I live in Paris."), None), (Turn(ASSISTANT, "Lovely."), None)], owner=ME)
    svc.rebuild_graph_memory(cid, None, strong=False)
    before = store.get_artifact(cid, "method:dsm", owner=ME)
    with pytest.raises(ValueError):
        svc.graph_memory(cid).import_rdf(b"this is not turtle <<<", "facts.ttl")
    assert store.get_artifact(cid, "method:dsm", owner=ME) == before
    turtle = f'<{entity("pet")}> <{RDFS.label}> "{Literal("Bruno")}" . <{USER_NODE}> <{DSM.has}> <{entity("pet")}> .'
    record = svc.graph_memory(cid).import_rdf(turtle.encode(), "facts.ttl")
    assert record.source == "import"
    reread = svc.graph_memory(cid)
    assert len(reread.history) == 2 and "Bruno" in " ".join(str(o) for _, _, o in reread.graph_after(2))


def test_the_live_instance_is_drawn_before_the_stored_memory_and_kept_on_import(store):
    svc = service(store)
    cid = store.create_conversation("live", method="dsm", owner=ME)
    method = create_method("dsm", Toolkit(llm=ScriptedLLM()))
    for role, text in [(USER, "I live in Oslo."), (ASSISTANT, "Nice.")]:
        method.observe(Turn(role, text))
    svc.instances[svc.instance_key(cid, "dsm")] = method
    view = svc.graph_memory(cid)
    assert view.source == "live `dsm` session" and view.memory is method.memory
    assert load_memory(store, cid, "dsm", owner=ME) is None  # drawing stores nothing
    view.import_rdf(f'<{USER_NODE}> <{DSM.has}> <{entity("boat")}> .'.encode(), "boat.nt")
    saved = load_memory(store, cid, "dsm", owner=ME)
    assert saved.observed == 2 and saved.state == method.save_state()
