"""The reasoning tree at conversational speed: one request per state for the choice policy and the
digit value, a time budget that answers with the best state found (and says so), the tree's
progress handed to the page as it grows, and a stopped reply that sends no further LLM request."""

from __future__ import annotations

import threading
import time

import pytest

from core.dialogue import Dialogue, Turn
from core.llm import cancel
from core.llm.fake import ScriptedLLM
from core.methods import ReplyStream, Toolkit, create_method
from core.methods.dsmart.reasoning_tree import ReasoningTree, RTConfig
from core.methods.dsmart.rt_graph import EntityLinker, MemoryView
from core.methods.dsmart.rt_llm import DIGITS, LETTERS, TreeModel
from tests.test_rt_tree import pets_graph, scripted


def test_choice_policy_and_digit_value_send_one_request_per_state():
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -1.0}, {"EXPAND": 0.6, "ANSWER": 0.4})
    view = MemoryView(pets_graph())
    config = RTConfig(max_depth=1, budget_s=0)
    model = TreeModel(llm, view, config, strong=False)
    links = EntityLinker().link("Where does my dog Rex live?", view)
    result = ReasoningTree(view, model, config).search("Where does my dog Rex live?", links)
    children = len(result.states) - 1
    # one policy request for the root, one value request per child: nothing per candidate token
    assert len(llm.requests) == 1 + children
    policy_prompt = llm.requests[0][-1].content
    assert "\nA. EXPAND_ENTITY [" in policy_prompt and "EXPAND_ENTITY [Rex]\n" in policy_prompt and policy_prompt.rstrip().endswith("Next action:")
    assert all("0 (worst) to 9" in r[-1].content for r in llm.requests[1:])
    assert result.best.last.action.render(view) == "EXPAND_ENTITY [Rex]"


def test_enumerated_policy_and_decimal_value_remain_for_ablation():
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -1.0}, {"EXPAND": 0.6})
    view = MemoryView(pets_graph())
    config = RTConfig(max_depth=1, budget_s=0, policy="enumerated", value_scale="decimal")
    model = TreeModel(llm, view, config, strong=False)
    result = ReasoningTree(view, model, config).search("Where is Rex?", EntityLinker().link("Where is Rex?", view))
    assert result.best.last.action.render(view) == "EXPAND_ENTITY [Rex]"
    assert not any("Next action:" in r[-1].content and "A. " in r[-1].content for r in llm.requests)


class SlowScripted(ScriptedLLM):
    """A scripted model whose every scoring request takes `delay` seconds."""

    def __init__(self, delay: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    def _score(self, messages, candidates):
        cancel.check()
        time.sleep(self.delay)
        return super()._score(messages, candidates)


def dsmart_with(llm, **tree) -> tuple:
    tools = Toolkit(llm=llm)
    method = create_method("rt", tools)
    from dataclasses import replace

    method.config = replace(method.config, tree=replace(method.config.tree, **tree))
    return method, Dialogue(id="d")


def test_budget_stops_the_search_and_the_trace_says_so():
    llm = SlowScripted(0.05, replies=lambda m: "an answer", scorer=lambda m, c: 0.0)
    method, dialogue = dsmart_with(llm, budget_s=0.12, max_depth=5, policy="choice")
    t0 = time.perf_counter()
    reply = method.respond_counted(dialogue, "What should I cook tonight?")
    assert time.perf_counter() - t0 < 2.0
    root = reply.trace.nodes[0].detail
    assert root["stop_reason"].startswith("time budget 0.12 s spent")
    assert reply.text == "an answer"


def test_progress_reaches_the_page_before_the_answer():
    llm = scripted({"THINK": 0.0, "ANSWER": -1.0}, {"THINK": 0.5, "ANSWER": 0.6})
    method, dialogue = dsmart_with(llm, budget_s=0, max_depth=2)
    events, pieces = [], []
    stream = ReplyStream(sink=lambda p: pieces.append((len(events), p)), progress=events.append)
    reply = method.respond_streaming(dialogue, "Hi there", stream)
    assert events[0].stage == "tree" and events[0].text.startswith("Searching the memory graph")
    assert any(e.lines for e in events)  # the tree's nodes, line by line
    assert events[-1].fraction == 1.0 and "writing the answer" in events[-1].text
    assert pieces and all(n == len(events) for n, _ in pieces)  # the answer streams after the tree
    assert "".join(p for _, p in pieces).strip() == reply.text


def test_a_stopped_reply_sends_no_further_request():
    llm = SlowScripted(0.05, replies=lambda m: "an answer", scorer=lambda m, c: 0.0)
    method, dialogue = dsmart_with(llm, budget_s=0, max_depth=5, max_expansions=12)
    stream = ReplyStream(sink=lambda p: None)
    outcome = {}

    def run():
        try:
            method.respond_streaming(dialogue, "Tell me a story", stream)
        except cancel.Cancelled as err:
            outcome["cancelled"] = err

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.12)
    stream.cancel.set()
    worker.join(timeout=5)
    assert not worker.is_alive() and "cancelled" in outcome
    sent = len(llm.requests)
    time.sleep(0.15)
    assert len(llm.requests) == sent  # nothing more went to the model


def test_cancel_and_deadline_are_local_to_their_context():
    event = threading.Event()
    event.set()
    with cancel.cancellable(event):
        with pytest.raises(cancel.Cancelled):
            cancel.check()
    cancel.check()  # outside: nothing to stop
    with cancel.deadline(0.01):
        time.sleep(0.02)
        with pytest.raises(cancel.DeadlinePassed):
            cancel.check()
        with cancel.deadline(10):  # an inner deadline never extends the outer one
            with pytest.raises(cancel.DeadlinePassed):
                cancel.check()
    cancel.check()


def test_letters_and_digits_are_one_token_labels():
    assert len(set(LETTERS)) == 26 and DIGITS == tuple("0123456789")


def test_tree_overrides_are_typed_and_unknown_names_refused():
    from core.benchmarks.latency import method_config, parse_tree_overrides

    assert parse_tree_overrides("budget_s=0, policy=enumerated,max_depth=2") == {"budget_s": 0.0, "policy": "enumerated", "max_depth": 2}
    with pytest.raises(ValueError, match="no setting 'beam'"):
        parse_tree_overrides("beam=2")
    config = method_config("dsmart", None, tree={"budget_s": 0.0})
    assert config.tree.budget_s == 0.0 and config.tree.beam_width == 3


def test_settings_overrides_are_typed_and_named():
    from core.config import parse_overrides
    from core.methods.mcts.config import ReasonerSettings

    assert parse_overrides("budget_s=0,turn_words=0,cache=false", ReasonerSettings, "--reasoner") == \
        {"budget_s": 0.0, "turn_words": 0, "cache": False}
    with pytest.raises(ValueError, match="--reasoner: ReasonerSettings has no setting 'relations'"):
        parse_overrides("relations=xWant", ReasonerSettings, "--reasoner")  # a tuple: not settable from text
    with pytest.raises(ValueError, match="cache takes true or false"):
        parse_overrides("cache=yes", ReasonerSettings, "--reasoner")
    with pytest.raises(ValueError):
        parse_overrides("turn_words=many", ReasonerSettings, "--reasoner")


def test_embedding_scorer_searches_without_the_llm_and_finds_the_relevant_entity(hashing_embedder):
    """Weak model + embedder: the prior and the values come from embedding similarity, so the search
    sends no LLM request; EXPAND on the entity the question names wins; THINK is never proposed."""
    llm = ScriptedLLM(replies=["Rex is 3."], scorer=lambda m, c: pytest.fail("the search asked the LLM"))
    view = MemoryView(pets_graph())
    config = RTConfig(budget_s=0)
    model = TreeModel(llm, view, config, strong=False, embedder=hashing_embedder)
    links = EntityLinker().link("How old is Rex?", view)
    result = ReasoningTree(view, model, config).search("How old is Rex?", links)
    assert llm.requests == []
    assert all(s.last.action.kind != "THINK" for s in result.states[1:])
    assert any("Rex | age | 3" == view.fact_line(t) for t in result.best.facts)
    assert result.best.value_source == "embedding" and result.best.value > 0


def test_llm_values_kept_until_the_deadline(hashing_embedder):
    """Under a deadline the children valued in time stay in the tree; the rest are dropped."""
    llm = SlowScripted(0.05, replies=lambda m: "fine", scorer=lambda m, c: 0.0)
    view = MemoryView(pets_graph())
    config = RTConfig(scorer="llm", samples=6, budget_s=0.13)
    model = TreeModel(llm, view, config, strong=False)
    links = EntityLinker().link("Where does Rex live?", view)
    with cancel.deadline(config.budget_s):
        result = ReasoningTree(view, model, config).search("Where does Rex live?", links)
    assert model.budget_spent and "valued in time" in result.stop_reason
    assert all(s.value_source == "likelihood" for s in result.states[1:])
    assert result.best is not result.states[0]


def test_no_child_valued_in_time_keeps_the_beam():
    """The deadline passes before the first value: the search ends with the beam it had (the root),
    and the reply still comes (from the root, or the linked entities' facts)."""
    llm = SlowScripted(0.2, replies=lambda m: "fine", scorer=lambda m, c: 0.0)
    view = MemoryView(pets_graph())
    config = RTConfig(scorer="llm", budget_s=0.1)
    model = TreeModel(llm, view, config, strong=False)
    links = EntityLinker().link("Where does Rex live?", view)
    with cancel.deadline(config.budget_s):
        result = ReasoningTree(view, model, config).search("Where does Rex live?", links)
    assert result.best is result.states[0] and "no child valued in time" in result.stop_reason
