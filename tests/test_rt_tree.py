"""Reasoning Tree: graph actions on hand-made graphs, entity linking, Algorithm 2's beam search on a
scripted LLM (top-k kept, terminal states kept, depth limit, argmax answer, M_exp), the
enumerated policy's legality, free-text parsing for strong models, and the trace as data."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from rdflib import RDF, RDFS, Graph, Literal, Namespace

from core.dialogue import ASSISTANT, USER, Dialogue, Reply, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.dsmart.reasoning_tree import ANSWER, EXPAND, PATH, THINK, Action, ReasoningTree, RTConfig, State, Step
from core.methods.dsmart.rt_graph import EntityLinker, MemoryView
from core.methods.dsmart.rt_llm import DIGITS, LETTERS, SCORES, TreeModel, expected_score, parse_action, parse_score

EX = Namespace("http://example.org/")


def pets_graph() -> Graph:
    """user -has-> rex (a Dog, age 3); user -livesIn-> paris -capitalOf-> france; bob -livesIn-> paris;
    island is unconnected."""
    g = Graph()
    facts = [(EX.user, EX.has, EX.rex), (EX.rex, RDF.type, EX.Dog), (EX.rex, EX.age, Literal(3)),
             (EX.user, EX.livesIn, EX.paris), (EX.paris, EX.capitalOf, EX.france), (EX.bob, EX.livesIn, EX.paris),
             (EX.bob, EX.age, Literal(3)), (EX.island, EX.size, Literal("small"))]
    for t in facts:
        g.add(t)
    for node, label in [(EX.user, "user"), (EX.rex, "Rex"), (EX.Dog, "dog"), (EX.paris, "Paris"), (EX.france, "France"),
                        (EX.bob, "Bob"), (EX.island, "island"), (EX.has, "has"), (EX.livesIn, "lives in")]:
        g.add((node, RDFS.label, Literal(label)))
    return g


# -- graph actions ---------------------------------------------------------------------------------
def test_expand_entity_one_and_two_hops():
    view = MemoryView(pets_graph())
    one = {view.fact_line(t) for t in view.expand(EX.rex, hops=1)}
    assert one == {"user | has | Rex", "Rex | is a | dog", "Rex | age | 3"}
    two = {view.fact_line(t) for t in view.expand(EX.rex, hops=2)}
    assert two == one | {"user | lives in | Paris"}  # user's facts; the dog class has no others
    assert view.expand(EX.nobody) == []
    assert len(view.expand(EX.rex, hops=2, limit=2)) == 2
    # nearest first: the 1-hop facts come before the 2-hop one
    assert view.fact_line(view.expand(EX.rex, hops=2)[-1]) == "user | lives in | Paris"


def test_an_edge_brings_the_values_of_the_node_it_reaches():
    """'user | has | Rex' comes with 'Rex | age | 3' (a count's amount with the count), right
    after its edge; a class reached by a type edge brings nothing."""
    view = MemoryView(pets_graph())
    lines = [view.fact_line(t) for t in view.expand(EX.user, hops=1)]
    assert lines == ["user | has | Rex", "Rex | age | 3", "user | lives in | Paris"]
    assert [view.fact_line(t) for t in view.expand(EX.user, hops=1, limit=2)] == lines[:2]


def test_literals_are_not_nodes():
    """Rex and Bob are both 3 years old: that must not connect them."""
    view = MemoryView(pets_graph())
    lines = [view.fact_line(t) for t in view.find_paths(EX.rex, EX.bob)]
    assert lines == ["user | has | Rex", "user | lives in | Paris", "Bob | lives in | Paris"]
    assert Literal(3) not in view.nx


def test_find_path_shortest_and_unconnected():
    view = MemoryView(pets_graph())
    assert [view.fact_line(t) for t in view.find_paths(EX.user, EX.france)] == [
        "user | lives in | Paris", "Paris | capitalOf | France"]
    assert view.find_paths(EX.user, EX.island) == []
    assert view.find_paths(EX.user, EX.user) == []
    assert view.find_paths(EX.user, EX.nobody) == []


def test_find_path_returns_every_shortest_path_up_to_the_cap():
    g = Graph()
    for mid in (EX.m1, EX.m2, EX.m3):
        g.add((EX.a, EX.knows, mid))
        g.add((mid, EX.knows, EX.b))
    view = MemoryView(g)
    assert len(view.find_paths(EX.a, EX.b, max_paths=3)) == 6
    assert len(view.find_paths(EX.a, EX.b, max_paths=1)) == 2


def test_path_prefers_relations_over_shared_types():
    g = Graph()
    g.add((EX.ann, RDF.type, EX.Person))
    g.add((EX.tom, RDF.type, EX.Person))
    g.add((EX.ann, EX.marriedTo, EX.tom))
    view = MemoryView(g)
    assert view.find_paths(EX.ann, EX.tom) == [(EX.ann, EX.marriedTo, EX.tom)]


def test_schema_and_label_triples_are_not_facts():
    view = MemoryView(pets_graph())
    assert all(p != RDFS.label for _, p, _ in view.facts)
    assert len(view.facts) == 8


# -- entity linking ---------------------------------------------------------------------------------
def test_linking_by_label_lemma_pronoun_and_embedding(hashing_embedder):
    view = MemoryView(pets_graph())
    links = EntityLinker().link("How old are my dogs? Is Rex fine?", view)
    got = {view.label(l.node): l.how for l in links}
    assert got == {"Rex": "label", "dog": "lemma", "user": "pronoun"}
    assert EntityLinker().link("nothing related here", view) == []
    embedded = EntityLinker(embedder=hashing_embedder, threshold=0.5).link("the France trip", view)
    assert [(view.label(l.node), l.how) for l in embedded][:1] == [("France", "label")]
    fuzzy = EntityLinker(embedder=hashing_embedder, threshold=0.3, phrases=lambda q: ["small island"]).link("q", view)
    assert [view.label(l.node) for l in fuzzy] == ["island"]


# -- a scripted LLM for the search ---------------------------------------------------------------------
def scripted(policy: dict[str, float], values: dict[str, float], default_value: float = 0.2) -> ScriptedLLM:
    """Policy: log-likelihood per action prefix (others -20). Value: the score of the state's last
    trajectory line, matched by prefix, peaked so the expected score is that value."""

    def scorer(messages, candidate):
        prompt = messages[-1].content
        if candidate in SCORES or (candidate in DIGITS and "0 (worst) to 9" in prompt):
            steps = re.findall(r"^\d+\. (.*)$", prompt, re.M)
            last = steps[-1] if steps else ""
            target = next((v for k, v in values.items() if last.startswith(k)), default_value)
            point = float(candidate) if candidate in SCORES else int(candidate) / 9
            return -200.0 * (point - target) ** 2
        if candidate in LETTERS:  # the choice policy: the lettered option's action
            option = re.search(rf"^{candidate}\. (.*)$", prompt, re.M).group(1)
            return next((v for k, v in policy.items() if option.startswith(k)), -20.0)
        best = next((v for k, v in policy.items() if candidate.startswith(k)), -20.0)
        return best * max(1, len(candidate)) / 4.0  # undo the per-token normalisation

    return ScriptedLLM(replies=lambda m: "a thought", scorer=scorer)


def run_tree(llm, config: RTConfig, query="Where does my dog Rex live?", graph=None):
    config = replace(config, budget_s=0) if config.budget_s else config  # a scripted search is not timed
    view = MemoryView(graph if graph is not None else pets_graph())
    model = TreeModel(llm, view, config, strong=False)
    links = EntityLinker().link(query, view)
    return ReasoningTree(view, model, config).search(query, links), view, model


def test_expected_score_is_likelihood_weighted():
    peaked = [-200.0 * (float(s) - 0.7) ** 2 for s in SCORES]
    assert expected_score(peaked) == pytest.approx(0.7, abs=1e-3)
    assert expected_score([0.0] * 11) == pytest.approx(0.5)


def test_depth_limit_when_nothing_terminates():
    llm = scripted({"THINK": 0.0, "EXPAND_ENTITY": -0.5}, {})
    result, _, _ = run_tree(llm, RTConfig(samples=1))
    assert max(s.depth for s in result.states) == 5
    assert result.stop_reason == "max depth 5"
    assert len(result.states) == 6  # one child per depth (S=1)
    assert result.best.depth == 5 and not result.best.terminal


def test_no_think_right_after_a_think_and_lazy_thoughts():
    """THINK -> THINK is pruned (the second thought would see the same facts); with lazy thoughts
    only expanded THINK states get a thought, and the response prompt leaves unwritten ones out."""
    llm = scripted({"THINK": 0.0, "EXPAND_ENTITY [Rex]": -0.5, "ANSWER": -3.0}, {"THINK": 0.6, "EXPAND": 0.5})
    result, view, model = run_tree(llm, RTConfig(samples=4, max_depth=4))
    for state in result.states:
        kinds = [s.action.kind for s in state.trajectory]
        assert all(not (a == b == THINK) for a, b in zip(kinds, kinds[1:]))
    expanded = {s.parent for s in result.states if s.parent}
    thinks = [s for s in result.states if s.last is not None and s.last.action.kind == THINK]
    assert thinks and all(bool(s.last.text) == (s.id in expanded) for s in thinks)
    thought_prompts = [m for m in llm.requests if m[-1].content.rstrip().endswith("Thought:")]
    assert len(thought_prompts) == sum(s.id in expanded for s in thinks)
    pending = State("x", "n0", (), (Step(Action(EXPAND, (EX.rex,)), "0 new fact(s)"), Step(Action(THINK))))
    assert "THINK" not in model.trajectory_text(pending) and model.step_log(pending).endswith("2. THINK\n")
    eager, _, _ = run_tree(scripted({"THINK": 0.0, "ANSWER": -3.0}, {}), RTConfig(samples=4, max_depth=2, thoughts="eager"))
    assert all(s.last.text for s in eager.states if s.last is not None and s.last.action.kind == THINK)


def test_beam_all_terminal_stops_early_and_answer_is_argmax():
    llm = scripted({"ANSWER": 0.0}, {"ANSWER": 0.9})
    result, _, model = run_tree(llm, RTConfig())
    assert result.stop_reason == "beam all terminal"
    assert [s.depth for s in result.states] == [0, 1]
    assert result.best.terminal and result.best.value == pytest.approx(0.9, abs=0.01)  # the digit scale: steps of 1/9
    assert model.batches == 2  # one policy batch, one value batch


def test_best_terminal_early_stop_is_opt_in():
    """With THINK 0.5 and ANSWER 0.9 at depth 1, Algorithm 2 goes on (the beam still holds a
    THINK); the heuristic stops as soon as the best beam state is terminal."""
    policy, values = {"ANSWER": -0.1, "THINK": -0.1}, {"ANSWER": 0.9, "THINK": 0.5}
    exact, _, _ = run_tree(scripted(policy, values), RTConfig(samples=8))
    pruned, _, _ = run_tree(scripted(policy, values), RTConfig(samples=8, early_stop="best_terminal"))
    assert max(s.depth for s in exact.states) > 1
    assert pruned.stop_reason == "best state terminal" and max(s.depth for s in pruned.states) == 1
    assert pruned.best.terminal and pruned.best.value == pytest.approx(exact.best.value, abs=1e-3)


def test_top_k_kept_and_terminal_states_carried_over():
    """Depth 1 proposes several actions; the ANSWER child (0.95) must survive to the end, the
    lowest-valued non-terminal child is dropped, and the final answer is the argmax."""
    policy = {"ANSWER": -0.1, "EXPAND_ENTITY [Rex]": -0.1, "EXPAND_ENTITY [user]": -0.1, "THINK": -0.1}
    values = {"ANSWER": 0.95, "EXPAND_ENTITY [Rex]": 0.6, "EXPAND_ENTITY [user]": 0.4, "THINK": 0.1}
    llm = scripted(policy, values)
    config = RTConfig(samples=12, seed=1)
    result, _, _ = run_tree(llm, config)
    depth1 = [s for s in result.states if s.depth == 1]
    assert len(depth1) == 4  # four distinct actions proposed, duplicates merged
    kept = sorted(depth1, key=lambda s: -s.value)[: config.beam_width]
    expanded_parents = {s.parent for s in result.states if s.depth == 2}
    assert expanded_parents == {s.id for s in kept if not s.terminal}
    answer1 = next(s for s in depth1 if s.terminal)
    assert answer1 in result.final_beam  # terminal states are kept, never expanded
    assert all(s.parent != answer1.id for s in result.states)
    assert result.best.value == max(s.value for s in result.final_beam)
    for depth in range(1, max(s.depth for s in result.states) + 1):
        assert len({s.parent for s in result.states if s.depth == depth + 1}) <= config.beam_width


def test_max_expansions_respected():
    llm = scripted({"EXPAND_ENTITY": -0.1, "FIND_PATH": -0.1, "THINK": -0.1}, {})
    config = RTConfig(max_expansions=4, samples=6)
    result, _, _ = run_tree(llm, config)
    assert result.expansions == 4
    expanded = {s.parent for s in result.states if s.parent}
    assert len(expanded) == 4
    assert result.stop_reason == "M_exp=4 expansions spent"
    policy_prompts = [m for m in llm.requests if m[-1].content.rstrip().endswith("Next action:")]
    assert len(policy_prompts) == 4


def test_enumerated_policy_names_only_graph_entities():
    view = MemoryView(pets_graph())
    llm = scripted({"EXPAND_ENTITY": 0.0, "FIND_PATH": 0.0}, {})
    for query in ["Tell me about Zorro and Rex", "Is Atlantis near Paris?", "my unicorn", "Hi"]:
        result, view, _ = run_tree(llm, RTConfig(samples=5), query=query)
        for state in result.states:
            for step in state.trajectory:
                assert all(view.has_entity(e) for e in step.action.entities)
        tree = ReasoningTree(view, None, RTConfig())
        for action in tree.legal_actions(result.states[0], EntityLinker().link(query, view)):
            assert all(view.has_entity(e) for e in action.entities)


def test_graph_actions_add_facts_to_the_subgraph():
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0}, {"EXPAND_ENTITY [Rex]": 0.8})
    result, view, _ = run_tree(llm, RTConfig(max_depth=1))
    child = result.states[1]
    assert child.last.action == Action(EXPAND, (EX.rex,))
    assert {view.fact_line(t) for t in child.facts} == {"user | has | Rex", "Rex | is a | dog", "Rex | age | 3"}
    assert child.last.added == 3


def test_empty_graph_allows_only_think_and_answer():
    view = MemoryView(Graph())
    actions = ReasoningTree(view, None, RTConfig()).legal_actions(State("n0", None), [])
    assert [a.kind for a in actions] == [THINK, ANSWER]


# -- strong models: free text parsed and validated -------------------------------------------------------
def test_parse_action_validates_entities():
    view = MemoryView(pets_graph())
    assert parse_action("EXPAND ENTITY [rex]", view) == Action(EXPAND, (EX.rex,))
    assert parse_action("Next Action: FIND_PATH [user] [France]", view) == Action(PATH, (EX.user, EX.france))
    assert parse_action("THINK: the dog is 3", view) == Action(THINK, (), "the dog is 3")
    assert parse_action("ANSWER", view).kind == ANSWER
    assert parse_action("EXPAND_ENTITY [Zorro]", view) is None
    assert parse_action("FIND_PATH [Rex] [Rex]", view) is None
    assert parse_action("I think we should look around", view) is None


def test_parse_score():
    assert parse_score("Accuracy 0.9, completeness 0.5 ... final score = 0.72") == 0.72
    assert parse_score("Score: 1.0") == 1.0
    with pytest.raises(ValueError):
        parse_score("excellent!")


def test_prompted_policy_and_values_with_fallback():
    def reply(messages):
        prompt = messages[-1].content
        if "Next Action:" in prompt:
            return "EXPAND_ENTITY [Unicorn]" if "[Rex] ->" in prompt else "EXPAND_ENTITY [Rex]"
        if "Score:" in prompt:
            return "Relevance 1.0 ... final score = 0.85"
        return "an answer"

    llm = ScriptedLLM(replies=reply, scorer=lambda m, c: 0.0 if c == "ANSWER" else -5.0 * len(c))
    view = MemoryView(pets_graph())
    config = RTConfig(max_depth=2)
    model = TreeModel(llm, view, config, strong=True)
    result = ReasoningTree(view, model, config).search("Where is Rex?", [])
    depth1 = [s for s in result.states if s.depth == 1]
    assert [s.last.action for s in depth1] == [Action(EXPAND, (EX.rex,))]  # 3 samples merged
    assert depth1[0].value == pytest.approx(0.85) and depth1[0].value_source == "prompt"
    depth2 = [s for s in result.states if s.depth == 2]
    assert [s.last.action.kind for s in depth2] == [ANSWER]  # invalid entity -> scored fall-back
    assert depth2[0].last.text == "an answer"  # strong models draft the answer eagerly
    assert any("fall-back" in n for n in model.notes)


# -- methods and the trace ---------------------------------------------------------------------------------
def test_dsmart_reply_carries_the_tree_as_json_data(hashing_embedder):
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -0.5}, {"EXPAND": 0.7, "ANSWER": 0.9})
    method = create_method("dsmart", Toolkit(llm=llm, embedder=hashing_embedder))
    method.memory._graph = pets_graph()  # a finished memory snapshot, as the DSM publishes it
    reply = method.respond(Dialogue(), "How old is Rex?")
    assert reply.trace.kind == "tree" and reply.text == "a thought"
    nodes = reply.trace.nodes
    assert nodes[0].label == "ROOT" and nodes[0].detail["query"] == "How old is Rex?"
    chosen = [n for n in nodes if n.chosen]
    assert chosen[0].id == "n0" and chosen[-1].detail["best"]
    if chosen[-1].detail["terminal"]:  # a lazily written answer shows on its node
        assert chosen[-1].detail["text"] == reply.text
    assert all(n.parent == p.id for p, n in zip(chosen, chosen[1:]))
    assert any("Rex | age | 3" in n.detail["subgraph"] for n in nodes)
    assert Reply.from_dict(reply.to_dict()) == reply
    assert {"policy", "value", "graph_actions", "link"} <= set(reply.timings)
    assert reply.llm_calls == llm.calls


def test_rt_method_reasons_over_an_empty_graph():
    llm = scripted({"ANSWER": 0.0}, {"ANSWER": 0.9})
    reply = create_method("rt", Toolkit(llm=llm)).respond(Dialogue(), "Hello, who am I?")
    assert [n.label for n in reply.trace.nodes] == ["ROOT", "ANSWER"]
    assert reply.trace.nodes[0].detail["memory_facts"] == 0


def test_prompted_policy_rejects_a_think_after_a_think():
    llm = ScriptedLLM(replies=lambda m: "THINK: keep thinking" if "Next Action:" in m[-1].content else "score 0.6",
                      scorer=lambda m, c: 0.0 if c == "ANSWER" else -5.0 * len(c))
    view = MemoryView(pets_graph())
    config = RTConfig(max_depth=3)
    model = TreeModel(llm, view, config, strong=True)
    result = ReasoningTree(view, model, config).search("Where is Rex?", [])
    for state in result.states:
        kinds = [s.action.kind for s in state.trajectory]
        assert all(not (a == b == THINK) for a, b in zip(kinds, kinds[1:]))
    assert [s.last.action.kind for s in result.states if s.depth == 2] == [ANSWER]  # the scored fall-back
    assert result.states[1].last.text == "keep thinking"  # the policy wrote the thought itself


def test_the_answer_prompts_instructions_are_a_prefix_that_does_not_change(hashing_embedder):
    """Appendix E's instructions sit in the system message, which is the same for every question,
    so the server's KV cache keeps it; the question, facts and reasoning come in the last message."""
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -0.5}, {"EXPAND": 0.7, "ANSWER": 0.9})
    method = create_method("dsmart", Toolkit(llm=llm, embedder=hashing_embedder))
    method.memory._graph = pets_graph()
    first, second = (method.respond(Dialogue(), q).trace.prompt for q in ("How old is Rex?", "Who is Rex?"))
    assert first[0] == second[0] and first[0]["role"] == "system"
    assert "Avoid technical terms or RDF-specific labels" in first[0]["content"]
    last = first[-1]["content"]
    assert "Question: How old is Rex?" in last and "Reasoning Process:" in last and last.rstrip().endswith("Answer:")
    assert "Avoid technical terms" not in last


def _recent_dialogue() -> Dialogue:
    dialogue = Dialogue()
    dialogue.add(Turn(USER, "Remind me, what do I do for a living?"))
    dialogue.add(Turn(ASSISTANT, "You build and repair violins."))
    return dialogue


def _dsmart_prompt(hashing_embedder, **config) -> list[dict]:
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -0.5}, {"EXPAND": 0.7, "ANSWER": 0.9})
    method = create_method("dsmart", Toolkit(llm=llm, embedder=hashing_embedder))
    method.config = replace(method.config, **config)
    method.memory._graph = pets_graph()
    return list(method.respond(_recent_dialogue(), "How old is Rex?").trace.prompt)


def test_dsmart_shows_the_conversation_as_chat_turns_before_its_answer_prompt(hashing_embedder):
    """By default the conversation window comes as chat turns before the Appendix E prompt (the
    server's cache keeps them between replies, core.methods.layout), and the question is asked again
    just before "Answer:" (the turns hold an earlier question)."""
    prompt = _dsmart_prompt(hashing_embedder)
    assert [m["role"] for m in prompt] == ["system", "user", "assistant", "user"]
    assert prompt[2]["content"] == "You build and repair violins."
    last = prompt[-1]["content"]
    assert "conversation just before" not in last and last.count("Question: How old is Rex?") == 1  # once, last
    assert last.rstrip().endswith("---\nQuestion: How old is Rex?\nAnswer:") and "Known Facts" in last


def test_dsmart_with_no_fact_to_show_answers_from_the_conversation_alone(hashing_embedder):
    """Facts the window shows are not repeated; with none left, the prompt is every chat method's:
    the conversation and the message (issue 53)."""
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -0.5}, {"EXPAND": 0.7, "ANSWER": 0.9})
    method = create_method("dsmart", Toolkit(llm=llm, embedder=hashing_embedder))
    prompt = method.respond(_recent_dialogue(), "Thanks, that's all for today.").trace.prompt  # an empty graph
    assert [m["role"] for m in prompt] == ["system", "user", "assistant", "user"]
    assert prompt[-1]["content"] == "Thanks, that's all for today."


def test_dsmart_gives_a_statement_its_facts_as_notes_not_as_a_question_to_answer(hashing_embedder):
    """A message that asks nothing is no question for Appendix E to answer: its facts come as the
    notes every memory method shows, before the message itself; the system message is the one the
    questions get, so the server's cache keeps it (issue 52)."""
    llm = scripted({"EXPAND_ENTITY [Rex]": 0.0, "ANSWER": -0.5}, {"EXPAND": 0.7, "ANSWER": 0.9})
    method = create_method("dsmart", Toolkit(llm=llm, embedder=hashing_embedder))
    method.memory._graph = pets_graph()
    told = list(method.respond(_recent_dialogue(), "Rex chewed my slippers again today.").trace.prompt)
    asked = _dsmart_prompt(hashing_embedder)
    assert [m["role"] for m in told] == ["system", "user", "assistant", "system", "user"]
    assert told[0] == asked[0]
    assert told[-1]["content"] == "Rex chewed my slippers again today."
    assert told[-2]["content"].startswith("Notes from earlier in this conversation")
    assert "Question:" not in told[-2]["content"] and "Answer:" not in told[-2]["content"]


def test_dsmart_turns_in_answer_section_and_none(hashing_embedder):
    as_section = _dsmart_prompt(hashing_embedder, turns_in_answer="prompt")  # issue 40's layout
    assert [m["role"] for m in as_section] == ["system", "user"]
    last = as_section[-1]["content"]
    section = ("The conversation just before the question:\nYou: Remind me, what do I do for a living?\n"
               "I: You build and repair violins.\n---\nKnown Facts")
    assert section in last and last.index("Question: How old is Rex?") < last.index(section)
    assert last.rstrip().endswith("---\nQuestion: How old is Rex?\nAnswer:")
    bare = _dsmart_prompt(hashing_embedder, turns_in_answer="none")  # Appendix E as written
    assert [m["role"] for m in bare] == ["system", "user"]
    assert "violins" not in bare[-1]["content"] and "conversation just before" not in bare[-1]["content"]
    assert bare[-1]["content"].count("Question: How old is Rex?") == 1  # asked once, as Appendix E


def test_the_reasoning_process_says_what_a_graph_step_found_without_a_count(hashing_embedder):
    """A count in the reasoning lines read as an answer ("-> 12 new fact(s)" to "How many hens?")."""
    model = TreeModel(ScriptedLLM(), MemoryView(pets_graph()), RTConfig(), strong=False)
    state = State("x", "n0", (), (Step(Action(EXPAND, (EX.rex,)), "12 new fact(s)", added=12),
                                  Step(Action(EXPAND, (EX.user,)), "0 new fact(s)"),
                                  Step(Action(PATH, (EX.rex, EX.island)), "no path found")))
    text = model.trajectory_text(state)
    assert text.splitlines() == ["1. EXPAND_ENTITY [Rex] -> facts found", "2. EXPAND_ENTITY [user] -> nothing new",
                                 "3. FIND_PATH [Rex] [island] -> no path found"]
    assert not re.search(r"\d", text.replace("1.", "").replace("2.", "").replace("3.", ""))
