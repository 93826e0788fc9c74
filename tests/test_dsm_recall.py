"""The DSM's facts reach the reader as their source sentences (issue 40): second person for the
user, dated, never relation names or URIs, the source sentence kept when the triple lost its
object; ranked by relevance to the question within a token budget."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from rdflib import Graph, Literal

from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit, create_method
from core.methods.dsmart.memory import DynamicStructuredMemory, Pruned, TurnRecord
from core.methods.dsmart.recall import SentenceRanker, render, said_by_fact, sourced_facts, turned_around
from core.methods.dsmart.vocab import DSM, entity
from core.methods.dsmart.vocab import USER as USER_NODE
from core.text import approx_tokens
from tests.sgmem_helpers import TableEmbedder

LEAKS = re.compile(r"livesIn|worksFor|\bquality\b|\| |http|dsm:|URIRef")


def record(index: int, question: str, added, answer: str = "Nice.", date: str = "2026-05-12", pruned=()) -> TurnRecord:
    return TurnRecord(index, question, answer, f"User: {question}\nAssistant: {answer}", tuple(added), tuple(pruned),
                      date=date)


def graph_of(*records: TurnRecord) -> Graph:
    g = Graph()
    for r in records:
        for p in r.pruned:
            g.remove(p.triple)
        for t in r.added:
            g.add(t)
    return g


def test_a_fact_whose_object_was_dropped_still_brings_its_sentence_in_the_second_person_with_its_date():
    bare = (USER_NODE, DSM.quality, Literal("proud"))  # 'of my daughter's architecture degree' was dropped
    r = record(0, "Hello! I'm so proud of my daughter's architecture degree.", [bare])
    [fact] = sourced_facts(graph_of(r), [r], [bare])
    assert fact.verbatim and fact.speaker == "user" and fact.turn_index == 0
    line = render(fact)
    assert line == "You're so proud of your daughter's architecture degree. (12 May 2026)"
    assert not LEAKS.search(line)


def test_a_fact_no_sentence_of_its_round_holds_does_not_reach_the_reader():
    odd = (entity("be"), DSM.frequency, Literal("every day"))  # a parse artifact of 'I water it every day'
    r0 = record(0, "I water it daily.", [odd])
    g = graph_of(r0)
    fact = sourced_facts(g, [r0], [odd])[0]
    assert not fact.verbatim and fact.speaker == "user"
    assert SentenceRanker().rank("How often do I water it?", [fact], g, 200) == []


def test_facts_without_a_source_sentence_are_written_without_relation_names_or_uris():
    lives = (USER_NODE, DSM.livesIn, entity("Lisbon"))
    memory = DynamicStructuredMemory()
    memory.import_turtle(f"<{USER_NODE}> <{DSM.livesIn}> <{entity('Lisbon')}> .")
    fact = sourced_facts(memory.graph, memory.history, [lives])[0]
    assert not fact.verbatim and fact.speaker == "import"
    assert fact.fact == "user | livesIn | lisbon"  # the page's triple line; never shown to the model
    assert render(fact) == "You live in lisbon."
    assert said_by_fact(memory) == {lives: "You live in lisbon."}  # the Memory graph page's "said" column
    assert [line.text for line in SentenceRanker().rank("Where do I live?", [fact], memory.graph, 200)] == \
        ["You live in lisbon."]  # an imported fact has no words but its labels: they reach the reader


def test_turned_around_turns_the_users_words_around():
    assert turned_around("I am 42 and my wife Helena teaches chemistry.") == "You are 42 and your wife Helena teaches chemistry."
    assert turned_around("We had three children, and now we have four.") == "You had three children, and now you have four."
    assert turned_around("Thank you, I will try what you suggested.") == "Thank you, you will try what I suggested."


def test_a_sentence_whose_value_changed_later_is_marked_and_ranked_below_the_new_one():
    old = (entity("user's dog"), DSM.name, Literal("Rex"))
    has = (USER_NODE, DSM.has, entity("user's dog"))
    new = (entity("user's dog"), DSM.name, Literal("Max"))
    r0 = record(0, "My dog is Rex.", [has, old])
    r1 = record(1, "Actually my dog is called Max.", [new], pruned=[Pruned(old, "renamed", "functional")])
    g = graph_of(r0, r1)
    facts = sourced_facts(g, [r0, r1], sorted(t for t in g))
    lines = SentenceRanker().rank("What is my dog called?", facts, g, 200)
    assert [line.text for line in lines] == ["Actually your dog is called Max. (12 May 2026; before: your dog is Rex, 12 May 2026)",
                                             "Your dog is Rex. (12 May 2026; since changed)"]


def test_the_latest_value_comes_with_its_history_oldest_first_and_inherits_the_old_sentences_relevance():
    has = (USER_NODE, DSM.has, entity("user's cats"))
    two, three, four = ((entity("user's cats"), DSM.amount, Literal(n)) for n in (2, 3, 4))
    r0 = record(0, "I have two cats.", [has, two], date="2026-03-01")
    r1 = record(1, "We adopted a kitten, so the cats are three.", [three], date="2026-04-02",
                pruned=[Pruned(two, "count changed", "numeric")])
    r2 = record(2, "Now the cats are four, since Pavel gave us one.", [four], date="2026-05-03",
                pruned=[Pruned(three, "count changed", "numeric")])
    g = graph_of(r0, r1, r2)
    facts = sourced_facts(g, [r0, r1, r2], sorted(t for t in g))
    latest = next(f for f in facts if f.triple == four)
    assert [s.sentence for s in latest.replaced] == ["I have two cats.", "We adopted a kitten, so the cats are three."]
    assert render(latest) == ("Now the cats are four, since Pavel gave you one. (3 May 2026; before: you have two "
                              "cats, 1 March 2026; before: you adopted a kitten, so the cats are three, 2 April 2026)")
    # 'How many pets do I have?' shares a word only with the first sentence; the latest holds the count
    # now and ranks with the relevance of the sentences it replaced, above the first, since changed
    lines = SentenceRanker().rank("How many pets do I have?", facts, g, 200)
    assert lines[0].text.startswith("Now the cats are four")
    assert lines[-1].text == "You have two cats. (1 March 2026; since changed)"


def test_a_name_that_begins_an_earlier_sentence_keeps_its_capital():
    old = (entity("Pavel"), DSM.does, entity("clocks"))
    new = (entity("Pavel"), DSM.does, entity("watches"))
    r0 = record(0, "Pavel repairs clocks.", [old])
    r1 = record(1, "Pavel fixes watches now.", [new], pruned=[Pruned(old, "changed", "functional")])
    g = graph_of(r0, r1)
    latest = next(f for f in sourced_facts(g, [r0, r1], sorted(t for t in g)) if f.triple == new)
    assert render(latest) == "Pavel fixes watches now. (12 May 2026; before: Pavel repairs clocks, 12 May 2026)"


def _ranking_case():
    job = (USER_NODE, DSM.does, entity("pharmacist"))
    bread = (USER_NODE, DSM.likes, entity("bread"))
    chess = (USER_NODE, DSM.likes, entity("chess"))
    records = [record(0, "I work as a pharmacist near Gdansk.", [job]),
               record(1, "Could you explain in simple terms why bread goes stale on the counter overnight?", [bread]),
               record(2, "I would like to get better at chess but I only have twenty minutes a day.", [chess])]
    g = graph_of(*records)
    embedder = TableEmbedder({
        "What is my job?": (1.0, 0.0, 0.0),
        "I work as a pharmacist near Gdansk.": (0.9, 0.1, 0.0),
        "Could you explain in simple terms why bread goes stale on the counter overnight?": (0.1, 1.0, 0.0),
        "I would like to get better at chess but I only have twenty minutes a day.": (0.2, 0.0, 1.0),
        "You do pharmacist.": (0.8, 0.2, 0.0), "You like bread.": (0.0, 1.0, 0.0), "You like chess.": (0.0, 0.0, 1.0),
    })
    return g, records, embedder, [job, bread, chess]


def test_the_relevant_sentence_comes_first_and_the_budget_holds():
    g, records, embedder, triples = _ranking_case()
    facts = sourced_facts(g, records, triples)
    ranker = SentenceRanker(embedder)
    lines = ranker.rank("What is my job?", facts, g, budget_tokens=1000)
    assert [line.sentence.turn_index for line in lines] == [0, 2, 1]  # by similarity, not by insertion order
    assert embedder.calls == 1  # the question, the sentences and the facts written out: one batch
    assert lines[0].text == "You work as a pharmacist near Gdansk. (12 May 2026)"
    small = ranker.rank("What is my job?", facts, g, budget_tokens=approx_tokens(lines[0].text) + 5)
    assert [line.sentence.turn_index for line in small] == [0]
    assert ranker.rank("What is my job?", facts, g, budget_tokens=1) == small  # the best line always comes
    # the tree's value of a fact lifts its sentence
    lifted = ranker.rank("What is my job?", facts, g, 1000, priors={triples[1]: 1.0}, prior_weight=2.0)
    assert lifted[0].sentence.turn_index == 1


def chat(method, dialogue, pairs):
    for q, a in pairs:
        for role, text in ((USER, q), (ASSISTANT, a)):
            method.observe(dialogue.add(Turn(role, text, date="2026-05-12")))
    method.wait()


def small_window(method, chars: int = 60):
    """The method with a conversation window of `chars` (core.methods.layout): these dialogues' last
    round and no more, so the rounds before are memory lines."""
    method.config = replace(method.config, generation=replace(method.config.generation, max_history_chars=chars))
    return method


def test_dsmart_answer_prompt_shows_sentences_not_triples():
    llm = ScriptedLLM(["Your sister Ana works as a nurse."] * 60)
    method = small_window(create_method("dsmart", Toolkit(llm=llm)))
    dialogue = Dialogue()
    chat(method, dialogue, [("My sister Ana moved to Lisbon last year and works as a nurse.", "How nice."),
                            ("I keep a small vegetable patch behind the house.", "Lovely.")])
    reply = method.respond(dialogue, "What does my sister do?")
    prompt = reply.trace.prompt[-1]["content"]
    known = prompt.split("most relevant first):\n")[1].split("\n---")[0]
    first = "- Your sister Ana moved to Lisbon last year and works as a nurse. (12 May 2026)"
    assert known.splitlines()[0] == first
    assert not LEAKS.search(known)
    assert reply.evidence[0].kind == "sentence" and "nurse" in reply.evidence[0].text  # the prompt's lines first
    assert {e.kind for e in reply.evidence} <= {"sentence", "fact"}  # then the facts the tree used
    assert [r.date for r in method.memory.history] == ["2026-05-12", "2026-05-12"]


def test_the_ranker_reads_with_the_toolkits_recall_embedder():
    """The DSM ranks its lines with `Toolkit.recall_embedder`; without one, with `embedder`."""
    from core.resources import HashingEmbedder

    search, recall = HashingEmbedder(64), HashingEmbedder(128)
    with_recall = create_method("dsm", Toolkit(llm=ScriptedLLM(["OK."]), embedder=search, recall_embedder=recall))
    assert with_recall.ranker.embedder is recall
    assert create_method("dsm", Toolkit(llm=ScriptedLLM(["OK."]), embedder=search)).ranker.embedder is search


CHANGED_HABIT = [
    "Hi, I'm Tomás. I work as a pharmacist in Coimbra and I have a cat called Pixel.",
    "I used to drive a red Fiat, but last month I sold it and now I cycle everywhere on a green bicycle.",
    "On a completely different note, I want to learn the guitar this winter. I can find about twenty minutes "
    "on weekdays and maybe an hour on weekends.",
    "I've read that short daily sessions beat long weekly ones, but I'm not sure what to do in those twenty "
    "minutes: scales, chord changes, or just playing songs I like.",
    "A simple plan for the first month would help me stay motivated and not give up after two weeks like last time.",
]


@pytest.mark.slow
def test_the_default_recall_embedder_finds_the_answer_that_shares_no_word_with_the_question():
    """A dev dialogue's miss (docs/dsm-memory.md): 'How do I get around these days?' shares no word
    with 'now I cycle everywhere'. MiniLM ranks the guitar small talk above it; the recall
    embedder (mpnet) puts it first."""
    from core.embedders import RECALL_EMBEDDER
    from core.resources import load_embedder

    def top_line(recall_embedder) -> str:
        tools = Toolkit(llm=ScriptedLLM(lambda messages: "OK."), embedder=load_embedder("minilm"),
                        recall_embedder=recall_embedder)
        method, dialogue = create_method("dsm", tools), Dialogue()
        for text in CHANGED_HABIT:
            method.observe(dialogue.add(Turn(USER, text)))
            method.observe(dialogue.add(Turn(ASSISTANT, "")))
        method.wait()
        return method.retrieve(dialogue, "How do I get around these days?", 3)[0].text

    assert "cycle everywhere" in top_line(load_embedder(RECALL_EMBEDDER))
    assert "cycle everywhere" not in top_line(None)  # MiniLM alone: the reason for the recall embedder


@pytest.mark.parametrize("name", ["dsm", "dsmart"])
def test_a_sentence_the_recent_turns_show_is_not_repeated_among_the_memory_lines(name):
    llm = ScriptedLLM(["Noted."] * 80)
    method, dialogue = small_window(create_method(name, Toolkit(llm=llm))), Dialogue()
    chat(method, dialogue, [("My sister Ana works as a nurse in Lisbon.", "How nice."),
                            ("My dog is Rex.", "Good name."),
                            ("I keep a small vegetable patch behind the house.", "Lovely.")])
    prompt = "\n".join(m["content"] for m in method.respond(dialogue, "I was thinking of my garden and of Ana today.").trace.prompt)
    assert prompt.count("vegetable patch") == 1  # the last round: in the window, not again as a memory line
    assert "Your sister Ana works as a nurse in Lisbon." in prompt  # an older round: a memory line
    # a question about what the user told is shown its memory whole, what the window holds too
    # (core.methods.layout.asks_what_was_told)
    prompt = "\n".join(m["content"] for m in method.respond(dialogue, "What do I grow and what does Ana do?").trace.prompt)
    assert prompt.count("vegetable patch") == 2
    # a line that carries a value's history stays although its sentence is in the recent turns
    chat(method, dialogue, [("Actually my dog is called Max.", "Noted.")])
    prompt = "\n".join(m["content"] for m in method.respond(dialogue, "What is my dog called?").trace.prompt)
    assert "before: your dog is Rex" in prompt


def test_shown_already_needs_the_whole_sentence_word_for_word():
    from core.methods.dsmart.recall import SourcedFact, plain_text, shown_already

    fact = SourcedFact(triple=None, fact="user | keeps | patch", sentence="I keep a small  vegetable patch.",
                       speaker="user", turn_index=2)
    assert shown_already(fact, plain_text(["Hi! I keep a small vegetable\npatch. It is sunny."]))  # spacing aside
    assert not shown_already(fact, plain_text(["I keep a small garden."]))
    assert not shown_already(fact, plain_text([]))
    assert not shown_already(replace(fact, verbatim=False), plain_text(["I keep a small vegetable patch."]))  # written from labels


def test_dsmart_evidence_lists_the_facts_the_tree_used_with_their_sentences():
    """Issue 57: in a short chat the recent turns hold every memory sentence, so the answer prompt
    shows no memory line, and the Evidence tab said "No retrieved evidence" though the tree had
    searched and used facts. The reply's evidence now lists the chosen state's facts, each with the
    words it came from, who said them and the round."""
    method = create_method("dsmart", Toolkit(llm=ScriptedLLM(["Your sister Ana is a nurse."] * 60)))
    dialogue = Dialogue()
    chat(method, dialogue, [("My sister Ana works as a nurse in Lisbon.", "How nice.")])
    reply = method.respond(dialogue, "What does my sister do?")
    facts = [e for e in reply.evidence if e.kind == "fact"]
    assert facts and all(e.source == "reasoning tree" for e in facts)
    assert {e.text for e in facts} <= set(reply.trace.nodes[0].detail["subgraph"]) | {
        line for n in reply.trace.nodes for line in n.detail["subgraph"]}
    said = facts[0].meta
    assert said["said"] == "Your sister Ana works as a nurse in Lisbon. (12 May 2026)"
    assert said["said by"] == "user" and said["round"] == 1


def test_a_fact_only_the_assistant_said_is_its_own_line_and_ranks_below_the_users_equal():
    """Issue 57: what only a reply stated is recalled as the assistant's words, joined to a reply
    sentence (not to the user's), and ranks just below a user's line of the same relevance."""
    job = (USER_NODE, DSM.worksFor, entity("bakery"))
    guess = (USER_NODE, DSM.worksFor, entity("mill"))
    turn = replace(record(0, "I work at the bakery.", [job, guess], answer="You work at the mill."),
                   assistant_only=(guess,))
    g = graph_of(turn)
    facts = {f.triple: f for f in sourced_facts(g, [turn], [job, guess])}
    assert (facts[guess].speaker, facts[guess].sentence) == ("assistant", "You work at the mill.")
    assert render(facts[guess]) == 'I replied: "You work at the mill." (12 May 2026)'
    assert (facts[job].speaker, facts[job].sentence) == ("user", "I work at the bakery.")
    embedder = TableEmbedder({"Where do I work?": (1.0, 0.0), "I work at the bakery.": (0.8, 0.6),
                              "You work at the mill.": (0.8, 0.6), "You work for bakery.": (0.8, 0.6),
                              "You work for mill.": (0.8, 0.6)})
    lines = SentenceRanker(embedder).rank("Where do I work?", list(facts.values()), g, 1000)
    assert [line.sentence.speaker for line in lines] == ["user", "assistant"]
    assert lines[0].score - lines[1].score == pytest.approx(SentenceRanker.ASSISTANT_PENALTY)


def test_the_trees_similarity_embeds_what_it_is_told_to_prepare_in_one_batch():
    from core.methods.dsmart.rt_llm import Similarity

    embedder = TableEmbedder({"What is my job?": (1.0, 0.0, 0.0), "pharmacist": (0.6, 0.8, 0.0),
                              "bread": (0.0, 1.0, 0.0), "chess": (0.0, 0.0, 1.0)})
    similarity = Similarity(embedder)
    similarity.prepare("What is my job?", ["pharmacist", "bread", "chess", "bread"])
    assert embedder.calls == 1
    assert similarity.to_query("What is my job?", ["pharmacist", "chess"]) == pytest.approx([0.6, 0.0])
    assert similarity.to_query("What is my job?", ["bread"]) == pytest.approx([0.0])
    assert embedder.calls == 1  # every text was embedded already


def test_text_vectors_keep_the_most_recently_used_up_to_their_capacity():
    import numpy as np

    from core.methods.dsmart.rt_llm import TextVectors

    store = TextVectors(capacity=2)
    store.put("a", np.array([1.0]))
    store.put("b", np.array([2.0]))
    assert store.get("a") == pytest.approx([1.0])  # "a" is now the most recently used
    store.put("c", np.array([3.0]))
    assert "b" not in store and "a" in store and "c" in store and len(store) == 2 and store.get("b") is None
    assert store.missing(["c", "d", "b", "d"]) == ["d", "b"]


def test_a_search_larger_than_the_kept_store_still_compares_every_text_and_the_next_reuses_it():
    from core.methods.dsmart.rt_llm import Similarity, TextVectors

    embedder = _Counting(TableEmbedder({"What is my job?": (1.0, 0.0, 0.0), "pharmacist": (0.6, 0.8, 0.0),
                                        "bread": (0.0, 1.0, 0.0), "chess": (0.0, 0.0, 1.0)}))
    kept = TextVectors(capacity=2)
    texts = ["pharmacist", "bread", "chess"]
    assert Similarity(embedder, kept).to_query("What is my job?", texts) == pytest.approx([0.6, 0.0, 0.0])
    assert len(kept) == 2 and "chess" in kept and "What is my job?" not in kept  # the two most recent kept
    embedder.texts.clear()
    assert Similarity(embedder, kept).to_query("What is my job?", ["chess", "bread"]) == pytest.approx([0.0, 0.0])
    assert embedder.texts == ["What is my job?"]  # "chess" and "bread" came from the store


class _Counting:
    """An embedder that records every text it was asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.texts = inner, []
        self.name, self.dim = inner.name, inner.dim

    def encode(self, texts, batch_size: int = 64):
        self.texts += list(texts)
        return self.inner.encode(texts, batch_size)


def test_dsmart_embeds_the_new_graph_between_replies_and_the_reply_embeds_only_the_question(hashing_embedder):
    """Issue 53: the tree embedded the graph's fact lines and labels before every prompt, though the
    graph had hardly changed. `wait()` (the memory round done, while the person reads) now embeds
    what is new; the reply's search and link then embed the question and its phrases only (the
    memory lines' ranking still reads its sentences), and the reply is the same."""
    pairs = [("My sister Ana moved to Lisbon last year and works as a nurse.", "How nice."),
             ("I keep a small vegetable patch behind the house.", "Lovely."),
             ("My neighbour Osvaldo builds violins in his garage.", "What a craft.")]
    question = "What does my sister do in Lisbon?"
    replies, embedded = [], []
    for warm in (True, False):
        embedder = _Counting(hashing_embedder)
        method = small_window(create_method("dsmart", Toolkit(llm=ScriptedLLM(["She is a nurse."] * 60), embedder=embedder)))
        if not warm:
            method.responder.warm = lambda graph: 0
        dialogue = Dialogue()
        chat(method, dialogue, pairs)
        before = len(embedder.texts)
        replies.append(method.respond(dialogue, question))
        embedded.append(embedder.texts[before:])
    warmed, cold = embedded
    labels = {"user", "garage", "neighbour", "violins", "small vegetable patch"}
    assert labels <= set(cold) and any(" | " in text for text in cold)  # the tree's labels and fact lines...
    assert not labels & set(warmed) and not any(" | " in text for text in warmed)  # ...embedded before the reply
    (a, b) = replies
    assert a.text == b.text and [e.text for e in a.evidence] == [e.text for e in b.evidence]
    searched = [[(n.label, n.value, n.chosen, n.detail.get("subgraph")) for n in r.trace.nodes] for r in replies]
    assert searched[0] == searched[1]


def test_dsmart_embeds_at_most_a_bounded_number_of_texts_between_replies(hashing_embedder, monkeypatch):
    from core.methods.dsmart import tree_methods

    monkeypatch.setattr(tree_methods, "WARM_TEXTS", 5)
    embedder = _Counting(hashing_embedder)
    method = create_method("dsmart", Toolkit(llm=ScriptedLLM(["OK."] * 20), embedder=embedder))
    method.responder.warm = lambda graph: 0  # the replay first, then one warm step by hand
    chat(method, Dialogue(), [("My sister Ana moved to Lisbon last year and works as a nurse.", "How nice."),
                              ("My neighbour Osvaldo builds violins in his garage.", "What a craft.")])
    del method.responder.warm
    before = len(embedder.texts)
    assert method.responder.warm(method.memory.graph) == 5 and len(embedder.texts) - before == 5
    assert 0 < method.responder.warm(method.memory.graph) <= 5  # the rest, a bounded step at a time
