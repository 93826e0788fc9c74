"""Knowledge updates in the DSM (issue 19): one test per miss cause fixed, each built from a real
sentence of the LongMemEval dev split (`DEV_SENTENCES`, checked against the file when it is there);
the closed relation vocabulary; conflicts between paraphrased slots; history after pruning."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from rdflib import RDFS, Literal

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.extract import SpacyExtractor, Utterance
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.slots import SlotMatcher, description
from core.methods.dsmart.vocab import DSM, USER, entity, noun_class, relation

# question id -> dev-split user sentences the tests below are built from
DEV_SENTENCES = {
    "5c40ec5b": ["By the way, speaking of Germany, I've got a friend Alex from there who I met at a music festival, and we've met up twice already - he's really cool."],
    "5831f84d": ["By the way, I've been on a learning streak lately, having watched 15 Crash Course videos in the past few weeks.",
                 "I've already finished 10 videos in the past few weeks!"],
    "01493427": ["I was wondering if you could help me generate a list of my postcards? I've added 17 new ones since I started collecting again",
                 "I've added 25 new postcards to my collection since I started collecting again."],
    "affe2881": ["I just saw a Northern Flicker in my local park last weekend, which brings my total species count to 32."],
    "618f13b2": ["By the way, I just wore my new black Converse to run some errands yesterday, so that's six times now that I've worn them."],
    "852ce960": ["I'm really looking forward to finally owning a home, it's been a long process, but it'll be worth it to have a "
                 "backyard like the one I'll have - remember when I got pre-approved for $400,000 from Wells Fargo?"],
    "2698e78f": ["And by the way, speaking of boundaries, I see Dr. Smith every week, and she's been helping me work on this stuff."],
    "59524333": ["Can you suggest the best way to set reminders for my gym sessions, which I usually go to at 7:00 pm on Mondays, Wednesdays, and Fridays?",
                 "I need to make sure I'm done with the meeting before I head to the gym, which is usually at 6:00 pm."],
    "ce6d2d27": ["And by the way, I have a cocktail-making class on Thursday, so I'm excited to try out some new recipes.",
                 "By the way, I have a cocktail-making class on Fridays, so maybe something I can experiment with then."],
    "945e3d21": ["Oh, and I've noticed that I'm more focused on days when I attend yoga classes, which is three times a week - it really helps me clear my head."],
    "6a1eabeb": ["By the way, I'm hoping to beat my personal best time of 25:50 this time around."],
    "e61a7584": ["I've had Luna for about 6 months now, and I've been meaning to get her microchipped for a while.",
                 "I've had my cat, Luna, for about 9 months now, and I've been trying to keep her active and engaged."],
    "5a4f22c0": ["By the way, speaking of networking, I was just thinking about catching up with Rachel, an old colleague from my previous company, who's currently at TechCorp."],
    "0f05491a": ["To correct myself, I actually need **125 stars** to reach the Gold level on the Starbucks Rewards app, not 400.",
                 "Actually, I need 120 stars to reach the gold level, not 300."],
    "cf22b7bf": ["I've also lost about 5 pounds in the past month, which is slow progress, but I'm okay with that.",
                 "By the way, speaking of my cardio days, I've been doing great and I just realized I've lost 10 pounds since I started going consistently to the gym 3 months ago."],
    "7a87bd0c": ["Oh, and by the way, I've been feeling really proud of myself for sticking to my daily tidying routine - it's already been 3 weeks!",
                 "By the way, I've been sticking to my daily tidying routine for 4 weeks now, and it's amazing how much of a difference it's made in my apartment."],
    "a1eacc2a": ["I like the idea of a writing calendar, especially since I've been enjoying writing short stories lately.",
                 "I've written four so far since I started writing regularly, and I'm hoping to keep the momentum going.",
                 "By the way, I've been writing regularly for three months now, and it's been amazing - I've even managed to complete 7 short stories since I started."],
    "a2f3aa27": ["And by the way, I've got 1250 followers on Instagram now, so it'd be great to get some insights on how to optimize my content for them.",
                 "By the way, I've been meaning to check my current follower count - I think I'm close to 1300 now."],
    "affe2881-earlier": ["By the way, speaking of bird identification, I've been keeping track of the species I've seen in my local park, and I've managed to spot 27 different species so far."],
    # multi-session questions (nothing updated): slots of different things that must not conflict
    "2788b940": ["By the way, I usually take Zumba classes on Tuesdays and Thursdays at 7:00 PM, so something upbeat would be great.",
                 "By the way, I'm not free on Sundays since I have my yoga class at 6:00 PM, so anything that can be done on other days would be great."],
    "gpt4_194be4b3": ["By the way, I've had my acoustic guitar, a Yamaha FG800, for about 8 years, and it's been a great companion for songwriting and camping trips.",
                      "By the way, I've had my black Fender Stratocaster electric guitar for about 5 years now, and it's been my go-to instrument for playing blues and rock music."],
    "9aaed6a3": ["I spent $75 on groceries at SaveMart last Thursday.",
                 "I also spent $100 at Gap last weekend on a new pair of jeans and a sweater."],
    "d851d5ba": ["By the way, I just ran 5 kilometers in the \"Run for Hunger\" charity event on March 12th and raised $250 for a local food bank.",
                 "By the way, I recently completed a charity fitness challenge in February and managed to raise $500 for the American Cancer Society, which was a great feeling!"],
    "22d2cb42": ["By the way, do you know any good music shops in my area that sell violins?",
                 "And yeah, I remember the music shop on Main St where I got my guitar serviced, they're really good with guitar maintenance."],
    "6071bd76": ["By the way, I'm planning to brew a fresh pot of coffee in the morning, and I'm feeling excited to use my new beans - I've got my French press ratio down to a science: 1 tablespoon of coffee for every 5 ounces of water."],
    # values the first extractor missed in other dev dialogues (a sample of numbered user sentences)
    "311778f1": ["By the way, I was also thinking about my Netflix screen time tracking, and I realized that I spent around 10 hours last month watching documentaries, which is a bit more than I expected."],
    "a82c026e": ["I main Mercy and I'm currently using a sensitivity of 6 and a DPI of 1600."],
    "a1cc6108": ["By the way, I just turned 32 last month, so I'm still relatively young, but I want to make a move that will set me up for success in the next few decades."],
    "61f8c8f8": ["By the way, I just got back into running and recently finished a 5K in 35 minutes."],
    "61f8c8f8-all": ["I've done a 5K run last year, but it took me 45 minutes to complete.",
                     "I'll try to maintain a pace of around 16 minutes per mile for my base building phase.",
                     "By the way, I just got back into running and recently finished a 5K in 35 minutes."],
    "a346bb18": ["I do have some cycling experience from the charity cycling event, Pedal for a Purpose, where I completed 30 miles in 2 hours and 15 minutes."],
    "c6853660": ["By the way, I've switched to a darker roast and cut back to just one cup in the morning, which has been really helping me feel more focused.",
                 "By the way, I'm thinking of changing my morning coffee limit to two cups, do you think that's a good idea?"],
    "8cf4d046": ["I'm interested in the Quantitative Analyst role at Goldman Sachs."],
    "618f13b2-earlier": ["And, I'm happy to report that I've worn my new black Converse Chuck Taylor All Star sneakers four times already, including to my friend's birthday party last Saturday."],
}


@pytest.fixture(scope="module")
def nlp():
    from core.resources import load_spacy

    return load_spacy()


@pytest.fixture(scope="module")
def extractor(nlp):
    return SpacyExtractor(nlp)


def facts(extractor, text):
    return {t for t in extractor.extract([Utterance("user", text)]) if is_fact(t)}


def amounts(graph_or_facts, value):
    """Quantities that carry `value` as their typed amount."""
    return {s for s, p, o in graph_or_facts if p == DSM.amount and o == Literal(value)}


def memory(nlp, embedder=None, **config):
    return DynamicStructuredMemory(None, config=DSMConfig(statements="text", llm_conflicts="off", background=False,
                                                          **config), nlp=nlp, embedder=embedder)


def test_the_sentences_are_from_the_dev_split(shared_data):
    """Every sentence quoted here is in a user turn of its dev question (the tests use real text)."""
    data = {d["question_id"]: d for d in json.loads((shared_data / "longmemeval" / "longmemeval_oracle_dev.json").read_text())}
    for key, sentences in DEV_SENTENCES.items():
        qid = key.split("-")[0]
        turns = " ".join(t["content"] for s in data[qid]["haystack_sessions"] for t in s if t["role"] == "user")
        for sentence in sentences:
            assert sentence.rstrip("!.?") in turns, (key, sentence)


# -- cause "no triple": the value was never extracted ---------------------------------------------------
def test_a_shop_on_a_named_street_is_its_own_place_and_where_places_the_clause(extractor, nlp):
    """22d2cb42 'Where did I get my guitar serviced?' - 'The music shop on Main St.': the shop on Main
    St is not the 'good music shops' asked about before, and the 'where' clause says the guitar was
    serviced there. A town does not split a noun ('the gym in Denver' is the later 'the gym')."""
    shop = entity("music shop on main st")
    got = facts(extractor, DEV_SENTENCES["22d2cb42"][1])
    assert (entity("user guitar"), relation("service at"), shop) in got
    assert (USER, relation("get at"), shop) in got
    m = memory(nlp, slot_threshold=None)
    for text in DEV_SENTENCES["22d2cb42"]:
        m.observe_round(text, "")
    assert {str(m.graph.value(entity("music shop"), RDFS.label)), str(m.graph.value(shop, RDFS.label))} \
        == {"good music shops", "music shop on Main St"}
    assert (USER, relation("meet at"), entity("cafe")) in facts(extractor, "I had dinner at the cafe where I met Anna last year.")
    assert (USER, relation("go to"), entity("gym")) in facts(extractor, "I go to the gym in Denver every morning.")


def test_a_participle_takes_the_main_clause_subject(extractor):
    got = facts(extractor, DEV_SENTENCES["5831f84d"][0])
    (q,) = amounts(got, 15)
    assert (q, DSM.ofKind, noun_class("video")) in got and (USER, relation("watch"), q) in got


def test_an_elided_noun_is_the_plural_noun_before_it(extractor):
    """'17 new ones' counts the postcards, on the same Quantity node as '25 new postcards'."""
    (old,) = amounts(facts(extractor, DEV_SENTENCES["01493427"][0]), 17)
    (new,) = amounts(facts(extractor, DEV_SENTENCES["01493427"][1]), 25)
    assert old == new == entity("user add postcard count")


def test_a_count_noun_names_what_it_counts(extractor):
    got = facts(extractor, DEV_SENTENCES["affe2881"][0])
    (q,) = amounts(got, 32)
    assert (q, DSM.ofKind, noun_class("specie")) in got and any(s == USER and o == q for s, _, o in got)


def test_thats_n_times_counts_the_verb_of_its_clause(extractor):
    got = facts(extractor, DEV_SENTENCES["618f13b2"][0])
    (q,) = amounts(got, 6)
    assert (USER, relation("wear"), q) in got and (q, DSM.ofKind, noun_class("time")) in got


def test_twice_after_a_verb_counts_its_times_on_the_slot_of_n_times(extractor, nlp):
    """'we've met up twice already' is a count of meeting (2), on the node 'met up 3 times' updates;
    'I once met' and 'twice a week' are no counts of times."""
    got = facts(extractor, DEV_SENTENCES["5c40ec5b"][0])
    (q,) = amounts(got, 2)
    assert q == entity("user meet time count") and (USER, relation("meet"), q) in got
    assert (q, DSM.ofKind, noun_class("time")) in got
    assert not amounts(facts(extractor, "I once met a famous chef."), 1)
    assert not amounts(facts(extractor, "I go swimming twice a week."), 2)
    m = memory(nlp, slot_threshold=None)
    m.observe_round(DEV_SENTENCES["5c40ec5b"][0], "")
    record = m.observe_round("We've met up three times now, and he's visiting again next month.", "")
    assert amounts(m.graph, 3) and not amounts(m.graph, 2)
    assert [(p.triple, p.rule) for p in record.pruned] == [((q, DSM.amount, Literal(2)), "functional")]


def test_a_lone_number_after_a_count_noun_is_its_value_not_a_year(extractor, nlp):
    """'my current follower count - I think I'm close to 1300 now': spaCy tags 1300 as a DATE; after
    a count noun it is the count, on the node of the earlier '1250 followers', so the update prunes."""
    (new,) = amounts(facts(extractor, DEV_SENTENCES["a2f3aa27"][1]), 1300)
    (old,) = amounts(facts(extractor, DEV_SENTENCES["a2f3aa27"][0]), 1250)
    assert old == new == entity("user have follower count")
    assert not amounts(facts(extractor, "My step count was low in 2020."), 2020)  # a year's preposition
    m = memory(nlp)
    m.observe_round(DEV_SENTENCES["a2f3aa27"][0], "")
    record = m.observe_round(DEV_SENTENCES["a2f3aa27"][1], "")
    assert [(p.triple, p.rule) for p in record.pruned] == [((old, DSM.amount, Literal(1250)), "functional")]


def test_a_repeated_verb_resolves_its_pronoun_object(extractor):
    """'I just wore my new black Converse ..., so that's six times now that I've worn them': the six
    times are times of wearing the Converse, as the earlier 'worn ... Converse ... four times'."""
    got = facts(extractor, DEV_SENTENCES["618f13b2"][0])
    (q,) = amounts(got, 6)
    assert q == entity("user wear converse time count") and (q, DSM.ofKind, noun_class("time")) in got
    (old,) = amounts(facts(extractor, DEV_SENTENCES["618f13b2-earlier"][0]), 4)
    assert old == entity("user wear converse chuck taylor time count")
    got = amounts(facts(extractor, "I read the book twice, and that's two times that I've loved it."), 2)
    # 'loved it': no earlier object of 'love', so no guess; 'read the book twice' counts the reading
    assert got == {entity("user love time count"), entity("user read book time count")}


def test_a_first_person_clause_inside_a_question_is_a_statement(extractor):
    got = facts(extractor, DEV_SENTENCES["852ce960"][0])
    assert (USER, relation("approve_for"), Literal(400000)) in got
    assert not any(p == relation("recommend") for _, p, _ in facts(extractor, "Can you recommend some providers in my area?"))


def test_habits_get_a_frequency_a_time_and_a_day(extractor):
    got = facts(extractor, DEV_SENTENCES["2698e78f"][0])
    assert any(p == DSM.frequency and o == Literal("every week") for _, p, o in got)
    got = facts(extractor, DEV_SENTENCES["59524333"][1])
    assert any(p == DSM.atTime and o == Literal(dt.time(18, 0)) for _, p, o in got)
    got = facts(extractor, DEV_SENTENCES["ce6d2d27"][1])
    assert (entity("cocktail make class"), DSM.onDay, Literal("Friday")) in got
    got = facts(extractor, DEV_SENTENCES["945e3d21"][0])
    assert any(p == DSM.frequency and o == Literal("three times a week") for _, p, o in got)


def test_a_duration_followed_by_its_window_an_of_setting_a_turned_age_and_a_time_taken(extractor):
    """'spent around 10 hours last month' is 10 hours ('last month' says when, it is no window around
    the number as in 'the past 3 weeks' or '3 months ago'); 'a sensitivity of 6' is the sensitivity's
    value; 'I just turned 32 last month' is an age, though the tagger reads '32 last month' as a date;
    'finished a 5K in 35 minutes' is the time the run took."""
    got = facts(extractor, DEV_SENTENCES["311778f1"][0])
    (hours,) = amounts(got, 10)
    assert (hours, DSM.unit, Literal("hour")) in got
    assert not amounts(facts(extractor, "I have been sick in the past 3 weeks."), 3)
    assert not amounts(facts(extractor, "I recently changed the strings about 3 weeks ago."), 3)
    got = facts(extractor, DEV_SENTENCES["a82c026e"][0])
    (sensitivity,) = amounts(got, 6)
    (dpi,) = amounts(got, 1600)
    assert (sensitivity, DSM.ofKind, noun_class("sensitivity")) in got and sensitivity != dpi
    gpa = facts(extractor, "I maintained a GPA of 3.8 out of 4.0.")
    assert amounts(gpa, 3.8) and not amounts(gpa, 4.0)  # 'out of 4.0' is the scale, not a value
    assert (USER, DSM.age, Literal(32)) in facts(extractor, DEV_SENTENCES["a1cc6108"][0])
    assert (entity("user son"), DSM.age, Literal(5)) in facts(extractor, "My son turned 5 yesterday.")
    assert not any(p == DSM.age for _, p, _ in facts(extractor, "Turn 2 pages."))
    got = facts(extractor, DEV_SENTENCES["61f8c8f8"][0])  # a finished run: 'in 35 minutes' is the time it took
    (run,) = amounts(got, 35)
    assert (run, DSM.unit, Literal("minute")) in got and (USER, relation("finish"), run) in got
    assert not amounts(facts(extractor, "I'll finish it in 3 days."), 3)  # when, not how long


# -- cause "value not typed": the value was text, not a typed literal -------------------------------------
def test_times_taken_and_clock_times_are_typed(extractor):
    got = facts(extractor, DEV_SENTENCES["6a1eabeb"][0])
    assert any(p == DSM.value and o.toPython() == dt.timedelta(minutes=25, seconds=50) for _, p, o in got)
    (q,) = amounts(facts(extractor, DEV_SENTENCES["0f05491a"][0]), 125)  # '**125 stars**': Markdown stripped
    assert q == entity("user need star count")
    assert not amounts(facts(extractor, DEV_SENTENCES["0f05491a"][1]), 300)  # '..., not 300': set aside


# -- cause "wrong subject": the value hung on another node ----------------------------------------------
def test_a_duration_hangs_on_what_it_measures(extractor):
    (old,) = amounts(facts(extractor, DEV_SENTENCES["e61a7584"][0]), 6)
    (new,) = amounts(facts(extractor, DEV_SENTENCES["e61a7584"][1]), 9)
    assert old == new  # "had Luna" and "had my cat, Luna": one slot, the months with Luna
    got = facts(extractor, DEV_SENTENCES["e61a7584"][1])
    assert (new, DSM.unit, Literal("month")) in got


def test_who_refers_to_the_person_not_the_company(extractor):
    got = facts(extractor, DEV_SENTENCES["5a4f22c0"][0])
    assert (entity("Rachel"), DSM.worksFor, entity("TechCorp")) in got


def test_a_measure_counts_what_it_is_of(extractor):
    """6071bd76 'did I switch to more water per tablespoon of coffee, or less?' - 5 ounces: '1 tablespoon
    of coffee for every 5 ounces of water' are two slots, each about its stuff, so the question about
    water finds the 5; a unit alone ('5 ounces') is still a count of ounces."""
    got = facts(extractor, DEV_SENTENCES["6071bd76"][0])
    (water,) = amounts(got, 5)
    (coffee,) = amounts(got, 1)
    assert water != coffee and "water" in str(water) and "coffee" in str(coffee)
    alone = facts(extractor, "I now use 5 ounces per tablespoon.")
    (plain,) = amounts(alone, 5)
    assert "water" not in str(plain) and (plain, DSM.ofKind, noun_class("ounce")) in alone


# -- cause "relation not matched" / "conflict not detected": the update did not prune ----------------------
def test_money_tagged_pounds_and_expletive_durations_meet_their_update(nlp):
    for qid in ("cf22b7bf", "7a87bd0c"):
        m = memory(nlp)
        m.observe_round(DEV_SENTENCES[qid][0], "")
        record = m.observe_round(DEV_SENTENCES[qid][1], "")
        assert len(record.pruned) == 1 and record.pruned[0].rule == "functional", qid


# -- the closed relation vocabulary ------------------------------------------------------------------
def test_the_vocabulary_maps_paraphrases_onto_one_property():
    for verb, prep in (("live", "in"), ("move", "to"), ("relocate", "to"), ("settle", "in"), ("reside", "in")):
        assert lx.relation_for(verb, prep) == DSM.livesIn
    assert lx.relation_for("work", "at") == lx.relation_for("work", "for") == DSM.worksFor
    assert lx.relation_for("own", "") == lx.relation_for("have", "") == DSM.has
    assert lx.relation_for("walk", "to") is None  # not in the vocabulary: a minted relation
    assert lx.count_verb("complete") == lx.count_verb("finish") and lx.count_verb("purchase") == lx.count_verb("buy")


def test_paraphrased_moves_conflict_on_the_functional_property(nlp):
    m = memory(nlp)
    m.observe_round("I live in Paris.", "")
    m.observe_round("We relocated to Denver last spring.", "")
    record = m.observe_round("I just settled in Lisbon.", "")
    assert set(m.graph.objects(USER, DSM.livesIn)) == {entity("Lisbon")}
    assert [p.triple for p in record.pruned] == [(USER, DSM.livesIn, entity("Denver"))]


# -- conflicts between paraphrased slots ---------------------------------------------------------------
class TableEmbedder:
    """Unit vectors from a table: 'same' phrases point one way, the rest another."""

    name = "table"

    def __init__(self, same: set[str]) -> None:
        self.same = same

    def encode(self, texts, batch_size=64):
        return np.array([[1.0, 0.0] if t in self.same else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_slot_matcher_by_vocabulary_and_by_threshold():
    vocab_only = SlotMatcher(None, 0.6)
    assert vocab_only.same("finish videos", "finish video") == (True, 1.0)  # same content words
    assert vocab_only.same("finish videos", "watch Crash Course videos")[0] is False
    table = SlotMatcher(TableEmbedder({"finish videos", "watch Crash Course videos"}), 0.6)
    assert table.same("finish videos", "watch Crash Course videos") == (True, 1.0)
    assert table.same("finish videos", "catch bass")[0] is False


def test_a_paraphrased_count_prunes_the_old_amount_and_history_keeps_it(nlp):
    """'finished 10 videos' then 'having watched 15 Crash Course videos': another verb, another node,
    the same slot by the embedder; the pruned amount stays in the record of the turn that pruned it."""
    old_q = "user finish video count"
    emb = TableEmbedder({"finish videos", "watch Crash Course videos"})
    m = memory(nlp, embedder=emb)
    m.observe_round(DEV_SENTENCES["5831f84d"][1], "")
    m.observe_round("I'm trying to learn more about natural language processing.", "")
    record = m.observe_round(DEV_SENTENCES["5831f84d"][0], "")
    stale = (entity(old_q), DSM.amount, Literal(10))
    assert stale not in m.graph and amounts(m.graph, 15)
    assert [(p.triple, p.rule) for p in record.pruned] == [(stale, "slot")]
    assert record.turn_index == 2 and "watch Crash Course videos" in record.pruned[0].reason
    assert stale in m.graph_at(2) and stale not in m.graph_at(3)  # replay: there until turn 2 pruned it
    assert description(m.graph, entity(old_q)) == "finish videos"
    without = memory(nlp)  # vocabulary only: the paraphrase is not matched
    without.observe_round(DEV_SENTENCES["5831f84d"][1], "")
    assert not without.observe_round(DEV_SENTENCES["5831f84d"][0], "").pruned


def test_a_running_total_restates_every_count_of_its_kind(nlp):
    """'which brings my total species count to 32' after 'I've managed to spot 27 different species':
    another verb, no shared words, no embedder; the running total replaces the count, and the
    history keeps the pruned 27 with the turn that pruned it."""
    m = memory(nlp, slot_threshold=None)
    m.observe_round(DEV_SENTENCES["affe2881-earlier"][0], "")
    record = m.observe_round(DEV_SENTENCES["affe2881"][0], "")
    assert amounts(m.graph, 32) and not amounts(m.graph, 27)
    (pruned,) = record.pruned
    assert pruned.rule == "slot" and pruned.triple[2] == Literal(27) and "running total" in pruned.reason
    assert record.turn_index == 1 and amounts(m.graph_at(1), 27)
    other = memory(nlp, slot_threshold=None)  # a count that is no total, of another verb: kept
    other.observe_round(DEV_SENTENCES["affe2881-earlier"][0], "")
    other.observe_round("I photographed 5 different species in my local park today.", "")
    assert amounts(other.graph, 27)


def test_different_things_of_one_kind_are_not_one_slot(nlp):
    """Different kind words on both sides, or different names on both sides: two things (multi-session
    dev pairs the embedder scores 0.47-0.68); one side without them may be the same thing (the
    labelled dev updates below stay candidates)."""
    m = SlotMatcher(None, 0.4, nlp=nlp)
    assert m.different_things(("Zumba classes", ""), ("yoga classes", "")).startswith("different class")
    assert m.different_things(("weightlifting class", ""), ("yoga class", "")).startswith("different class")
    assert m.different_things(("years", "Yamaha FG800"), ("years", "my black Fender Stratocaster electric guitar")).startswith("different names")
    assert m.different_things(("Zumba classes", ""), ("attend Hip Hop Abs", "")).startswith("different names")
    for a, b in [(("videos", ""), ("Crash Course videos", "")), (("different species", ""), ("total species", "")),
                 (("new postcards", ""), ("postcards", "")), (("trips", "my camera"), ("trips", "80D")),
                 (("gym sessions", ""), ("head to gym", "")), (("Converse Chuck Taylor", ""), ("times", "")),
                 (("cups", "coffee"), ("cup", "coffee"))]:  # a short phrase may tag 'cups' a name: one word, either number
        assert m.different_things(a, b) == "", (a, b)
    assert SlotMatcher(None, 0.4).different_things(("Zumba classes", ""), ("yoga classes", "")) == ""  # no parser: not checked


def test_durations_of_different_activities_are_not_one_slot(nlp, embedder):
    """61f8c8f8: a pace of 16 minutes is no time for the 5K, and the 5K in 35 minutes updates last
    year's 45; a346bb18: 30 miles cycled in 2 hours 15 do not replace the marathon's time."""
    m = memory(nlp, embedder=embedder)
    for text in DEV_SENTENCES["61f8c8f8-all"]:
        m.observe_round(text, "")
    assert amounts(m.graph, 16) and amounts(m.graph, 35) and not amounts(m.graph, 45)
    assert [str(p.triple[2]) for r in m.history for p in r.pruned] == ["45"]
    m = memory(nlp, embedder=embedder)
    # the assistant's turn in a346bb18 (the user wrote '4h 22min', which is no duration to the parser)
    m.observe_round("Did I tell you about the marathon?",
                    "You mentioned earlier that you completed a full marathon in 4 hours and 22 minutes, "
                    "but you didn't mention a charity cycling event.")
    assert amounts(m.graph, 4) and amounts(m.graph, 22)
    m.observe_round(DEV_SENTENCES["a346bb18"][0], "")
    assert not [p for r in m.history for p in r.pruned if p.rule == "slot"]
    assert amounts(m.graph, 4) and amounts(m.graph, 22) and amounts(m.graph, 2) and amounts(m.graph, 15)


def test_a_memory_that_loads_its_parser_late_gives_it_to_the_slot_stage():
    m = DynamicStructuredMemory(None, config=DSMConfig(statements="text", llm_conflicts="off", background=False))
    assert m.slots.nlp is None
    m.observe_round(DEV_SENTENCES["2788b940"][0], "")
    assert m.slots.nlp is not None


def test_amounts_for_different_things_are_two_facts_and_one_thing_still_updates(nlp):
    """9aaed6a3 / d851d5ba: '$75 on groceries' then '$100 ... on a new pair of jeans', '$250 for a
    local food bank' then '$500 for the American Cancer Society' are different spendings, not an
    update of one number (the numeric rule pruned them while the amount hung on the user)."""
    for key in ("9aaed6a3", "d851d5ba"):
        m = memory(nlp, slot_threshold=None)
        for text in DEV_SENTENCES[key]:
            assert not m.observe_round(text, "").pruned, text
    spent = {o.toPython() for _, p, o in m.graph if p == relation("raise")}
    assert spent == {250, 500}
    m = memory(nlp, slot_threshold=None)
    m.observe_round("I spend $60 on groceries every week.", "")
    (pruned,) = m.observe_round("Now I spend $80 on groceries every week.", "").pruned
    assert pruned.rule == "numeric" and pruned.triple[2] == Literal(60)


@pytest.mark.slow
def test_a_class_and_a_guitar_keep_their_values_beside_another_of_their_kind(nlp, embedder):
    """2788b940: the yoga class at 6 pm does not replace the Zumba classes at 7 pm (cosine 0.68 for
    'my Zumba classes' / 'my yoga classes'); gpt4_194be4b3: 5 years with the Fender does not replace
    8 years with the Yamaha."""
    m = memory(nlp, embedder=embedder)
    for text in DEV_SENTENCES["2788b940"]:
        assert not m.observe_round(text, "").pruned
    assert {o for _, p, o in m.graph if p == DSM.atTime} == {Literal(dt.time(19, 0)), Literal(dt.time(18, 0))}
    m = memory(nlp, embedder=embedder)
    for text in DEV_SENTENCES["gpt4_194be4b3"]:
        m.observe_round(text, "")
    assert amounts(m.graph, 8) and amounts(m.graph, 5)


@pytest.mark.slow
def test_the_default_threshold_separates_the_labelled_dev_pairs(embedder):
    """Candidate pairs logged on dev by `python -m core slot-pairs` and labelled by hand (docs/dsm-updates.md):
    the default threshold matches the restated slots and none of the others."""
    matcher = SlotMatcher(embedder, DSMConfig().slot_threshold)
    same = [("finish videos", "watch Crash Course videos"), ("be episode", "finish episodes"),
            ("cut cup", "change cups my morning coffee limit"), ("take trips my camera", "have trips 80D"),
            ("do weeks", "stick weeks my daily tidying routine"), ("my gym sessions", "head to gym")]
    other = [("meeting", "make"), ("make", "write report"), ("stretch", "wake up"), ("brush with new brush", "rotate toys"),
             ("my gym sessions", "think")]
    assert all(matcher.same(a, b)[0] for a, b in same), [(a, b, matcher.similarity(a, b)) for a, b in same]
    assert not any(matcher.same(a, b)[0] for a, b in other), [(a, b, matcher.similarity(a, b)) for a, b in other]


@pytest.mark.slow
def test_real_embedder_matches_dev_paraphrases_and_keeps_other_counts(nlp, embedder):
    m = memory(nlp, embedder=embedder)
    for text in DEV_SENTENCES["a1eacc2a"]:
        m.observe_round(text, "")
    assert not amounts(m.graph, 4) and amounts(m.graph, 7)  # 'written four' -> 'complete 7 short stories'
    assert amounts(m.graph, 3)  # the three months of writing are another slot: kept
    m = memory(nlp, embedder=embedder)
    for text in DEV_SENTENCES["59524333"]:
        m.observe_round(text, "")
    times = {o for _, p, o in m.graph if p == DSM.atTime}
    assert times == {Literal(dt.time(18, 0))}


# -- written update pairs (benchmarks/knowledge_updates_written.jsonl, batch A): general patterns the
# dev sentences seldom show, each rule checked on the written sentence and, where dev has one, on dev
def written(pair_id: str) -> dict:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "knowledge_updates_written.jsonl"
    return next(p for p in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if p["id"] == pair_id)


def observe_pair(nlp, pair_id: str, embedder=None, **config):
    pair = written(pair_id)
    m = memory(nlp, embedder=embedder, **config)
    m.observe_round(pair["earlier"], "")
    return m, m.observe_round(pair["later"], "")


def test_a_change_verb_sets_the_value_of_what_it_changes(extractor, nlp):
    """'I bumped my daily step goal up to 10,000 steps' lands on the node of 'my daily step goal is
    8,000 steps'; 'the landlord raised my rent to $1,950' is the rent's value, as 'my rent is $1,800';
    'my Japan trip fund is now at $3,500' and 'my Duolingo streak just hit 60 days' are the fund's and
    the streak's."""
    goal = entity("user step goal be step count")
    assert amounts(facts(extractor, written("w24")["earlier"]), 8000) == {goal}
    assert amounts(facts(extractor, written("w24")["later"]), 10000) == {goal}
    m, record = observe_pair(nlp, "w24", slot_threshold=None)
    assert [(p.triple, p.rule) for p in record.pruned] == [((goal, DSM.amount, Literal(8000)), "functional")]
    m, record = observe_pair(nlp, "w27", slot_threshold=None)
    rent = entity("user rent")
    assert set(m.graph.objects(rent, DSM.value)) == {Literal(1950)}
    assert [p.triple for p in record.pruned] == [(rent, DSM.value, Literal(1800))]
    assert (entity("user japan trip fund"), DSM.value, Literal(3500)) in facts(extractor, written("w14")["later"])
    (days,) = amounts(facts(extractor, written("w30")["later"]), 60)
    assert days == entity("user duolingo streak be day duration")
    assert not amounts(facts(extractor, "I'm going to the gym at 6."), 6)  # no change verb, no count


def test_a_changed_limit_is_also_its_owners_count(nlp):
    """c6853660 (dev): 'cut back to just one cup' then 'changing my morning coffee limit to two cups': the
    cups are the limit's and the user's, and 'cut' / 'be' say nothing of the slot, so the two counts of
    cups are one slot by their words alone."""
    m = memory(nlp, slot_threshold=None)
    m.observe_round(DEV_SENTENCES["c6853660"][0], "")
    record = m.observe_round(DEV_SENTENCES["c6853660"][1], "")
    (new,) = amounts(m.graph, 2)
    assert (USER, relation("change"), new) in m.graph and not amounts(m.graph, 1)
    assert [p.rule for p in record.pruned] == ["slot"] and description(m.graph, new) == "cups"


def test_a_group_counts_its_owners_members(extractor, nlp):
    """'My vinyl collection is up to 120 records' / 'our board game collection has grown to 31 games':
    the owner has the records and the games, so 'I own 150 of them' and 'we own 25 board games' are
    the same slots."""
    (q,) = amounts(facts(extractor, written("w46")["later"]), 31)
    assert (USER, relation("have"), q) in facts(extractor, written("w46")["later"])
    # the embedder matches 'have records' / 'have my vinyl records' (a table stands in for it here)
    emb = TableEmbedder({"have records", "have my vinyl records", "have board games", "have games"})
    for pair_id, old, new in (("w02", 120, 150), ("w46", 25, 31)):
        m, record = observe_pair(nlp, pair_id, embedder=emb)
        assert amounts(m.graph, new) and not amounts(m.graph, old), pair_id
    assert not any(p == DSM.worksFor for _, p, _ in facts(extractor, DEV_SENTENCES["8cf4d046"][0]))


def test_an_event_subject_takes_its_new_time_and_day(extractor, nlp):
    """'Our weekly team meeting moved to 10:30 am' is the meeting's time (it replaces 9:00 am); 'my
    pottery class got moved to Thursdays' is the class's day; the meeting does not do itself."""
    m, record = observe_pair(nlp, "w40", slot_threshold=None)
    (meeting,) = set(m.graph.subjects(DSM.atTime, None))
    assert str(m.graph.value(meeting, RDFS.label)) == "user's weekly team meeting"
    assert set(m.graph.objects(meeting, DSM.atTime)) == {Literal(dt.time(10, 30))}
    assert (meeting, DSM.does, meeting) not in m.graph
    assert [p.triple for p in record.pruned] == [(meeting, DSM.atTime, Literal(dt.time(9, 0)))]
    assert (entity("user pottery class"), DSM.onDay, Literal("Thursday")) in facts(extractor, written("w10")["later"])


def test_someones_own_turn_an_age_and_years_old_is_no_duration(extractor, nlp):
    """'My dog just turned 3 last week' is the dog's age and replaces 'my dog is 2 years old', which
    is an age, not two years of something."""
    dog = entity("user dog")
    earlier = facts(extractor, written("w16")["earlier"])
    assert (dog, DSM.age, Literal(2)) in earlier and not amounts(earlier, 2)
    m, record = observe_pair(nlp, "w16", slot_threshold=None)
    assert set(m.graph.objects(dog, DSM.age)) == {Literal(3)}
    assert [p.triple for p in record.pruned] == [(dog, DSM.age, Literal(2))]


def test_a_job_at_a_company_names_the_employer(extractor):
    """'I just started my new job at Spotify' (spaCy types Spotify a place); wanting a job, or an
    interest in a role (8cf4d046, dev), names no employer."""
    assert (USER, DSM.worksFor, entity("Spotify")) in facts(extractor, written("w04")["later"])
    assert not any(p == DSM.worksFor for _, p, _ in facts(extractor, "I want a job at Google."))


def test_thats_n_after_a_first_person_clause_is_the_speakers_count(nlp):
    """'I finished another one yesterday, so that's 15 books this year': the user's count of books,
    which restates 'I've read 12 books so far this year' (the embedder matches 'have books' / 'read
    books'; here a table stands in for it)."""
    emb = TableEmbedder({"have books", "read books"})
    m, record = observe_pair(nlp, "w12", embedder=emb)
    (new,) = amounts(m.graph, 15)
    assert (USER, relation("have"), new) in m.graph and not amounts(m.graph, 12)
    assert (USER, relation("read"), new) in m.graph  # the old slot's description is carried over


def test_a_restated_slot_keeps_the_old_slots_description(nlp):
    """'I weigh 180 pounds' then 'I'm down to 172 pounds': one slot; the new count is also what the
    user weighs, so a question about weighing finds it. (Since issue 29's 'measure of a person' rule
    a person who is N pounds weighs N pounds, so the two counts meet on one node and the functional
    amount prunes; before, the slot stage matched 'pounds' / 'weigh pounds'.)"""
    m, record = observe_pair(nlp, "w15", embedder=TableEmbedder({"pounds", "weigh pounds"}))
    (new,) = amounts(m.graph, 172)
    assert (USER, relation("weigh"), new) in m.graph and (USER, relation("weigh"), new) in record.added
    assert [p.rule for p in record.pruned] == ["functional"] and not amounts(m.graph, 180)


def test_a_kept_thing_is_stored_at_its_place_within_a_place(extractor, nlp):
    """'I keep my passport in the desk drawer in the study' (the place hangs on the passport in the
    parse) is one spot, the drawer in the study; 'moved my passport to the safe ...' moves it."""
    passport = entity("user passport")
    got = facts(extractor, written("w26")["earlier"])
    (place,) = [o for s, p, o in got if s == passport and p == DSM.storedAt]
    assert place == entity("desk drawer in study")
    m, record = observe_pair(nlp, "w26", slot_threshold=None)
    assert (passport, DSM.storedAt, place) not in m.graph and len(set(m.graph.objects(passport, DSM.storedAt))) == 1
    assert [p.rule for p in record.pruned] == ["functional"]


def test_the_check_reads_a_count_by_its_owner_and_how_old_as_age(nlp):
    """A Quantity is about whose it is and how it was counted: 'my commute is only 15 minutes' answers
    'how long is my commute?'; 'how old' asks for an age; 'every' and titles are no content words."""
    from core.benchmarks import dsm_check as du

    m, _ = observe_pair(nlp, "w22", slot_threshold=None)
    question = du.question_words("How long is my commute?", nlp)
    assert du.number_on(du.question_triples(m.graph, question), 15)
    m, _ = observe_pair(nlp, "w16", slot_threshold=None)
    assert du.number_on(du.question_triples(m.graph, du.question_words("How old is my dog?", nlp)), 3)
    assert du.content_words("every Wednesday and Sunday") == {"wednesday", "sunday"} and du.content_words("Dr. Kim") == {"kim"}


def test_written_pairs_become_longmemeval_instances(tmp_path):
    """`python -m core written-updates`: two dated sessions per pair, the statements flagged as evidence, so
    `dsm-updates` reads the earlier value as the stale one."""
    import subprocess
    import sys
    from pathlib import Path

    from core.benchmarks.dsm_check import stale_number
    from core.data.longmemeval import load_longmemeval

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "written.json"
    subprocess.run([sys.executable, "-m", "core", "written-updates",
                    str(root / "benchmarks" / "knowledge_updates_written.jsonl"), str(out)], check=True, capture_output=True, cwd=root)
    instances = {i.question_id: i for i in load_longmemeval(out)}
    assert len(instances) == 48 and all(i.question_type == "knowledge-update" for i in instances.values())
    w12 = instances["written_w12"]
    assert len(w12.evidence_turn_ids) == 2 and len(w12.dialogue.sessions) == 2
    assert stale_number(w12, 15.0) == 12.0


def test_an_increment_and_a_number_set_aside_are_no_count(extractor):
    """'8 more postcards' is an increment, not the count so far; '120 stars, not 300' sets 300 aside."""
    assert not amounts(facts(extractor, "I bought 8 more postcards at the fair."), 8)
    got = facts(extractor, "I've earned 120 stars, not 300.")
    assert amounts(got, 120) and not amounts(got, 300)


def test_a_role_in_a_group_is_one_value_and_a_new_role_replaces_it(nlp, extractor):
    """'I'm the treasurer of my book club' then 'I'm now the president of my book club' (w36): one
    role node per holder and group, whose functional value the new role replaces; 'a fan of jazz'
    holds no role."""
    from rdflib import RDFS

    m, record = observe_pair(nlp, "w36", slot_threshold=None)
    role = entity("user role user book club")
    assert (role, DSM.value, Literal("president")) in m.graph
    assert (role, DSM.value, Literal("treasurer")) not in m.graph
    assert [p.rule for p in record.pruned if p.triple[0] == role] == ["functional"]
    assert "role" in str(m.graph.value(role, RDFS.label))
    assert (entity("user role bistro"), DSM.value, Literal("sous chef")) in facts(extractor, "I got promoted to sous chef at the bistro.")
    assert not any(p == DSM.value for _, p, _ in facts(extractor, "I'm a big fan of jazz."))


def test_a_replacement_hands_the_old_things_facts_to_the_new_one(nlp):
    """'I drive a 2015 Honda Civic' then 'I just traded in my Civic for a Toyota RAV4' (w20): the user
    drives the RAV4 now, the Civic fact is pruned (rule 'replacement', kept in the history) and the
    user no longer has the Civic. 'switched to Y' with no old thing named replaces the one thing of
    Y's kind the user had a relation to."""
    m, record = observe_pair(nlp, "w20", slot_threshold=None)
    drive = relation("drive")
    assert (USER, drive, entity("Toyota RAV4")) in m.graph
    assert not [o for o in m.graph.objects(USER, drive) if "civic" in str(o).lower()]
    assert "replacement" in {p.rule for p in record.pruned}
    assert not [o for o in m.graph.objects(USER, DSM.has) if "civic" in str(o).lower()]
    m = memory(nlp, slot_threshold=None)
    m.observe_round("I go to Planet Fitness three times a week.", "")
    m.observe_round("I switched to the YMCA because it has a pool.", "")
    assert (USER, relation("go_to"), entity("YMCA")) in m.graph
    assert (USER, relation("go_to"), entity("Planet Fitness")) not in m.graph
