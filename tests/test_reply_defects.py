"""The reply checks of `bench replies` on hand-computed cases (core.metrics.reply_defects)."""

from core.metrics.reply_defects import (ECHO_CHARS, ReplyCase, ReplyScore, attribution_clauses, echo_chars, leaks,
                                        meta_phrases, score_reply, summarise_scores, template_shingles,
                                        voice_clauses)

MARTA = "Hi, I'm Marta. I live in Porto and I have a dog called Rex."
ANA = "My sister Ana moved to Lisbon last year and works as a nurse."


def test_echo_counts_the_longest_verbatim_stretch_ignoring_case_and_spacing():
    # "i have been baking bread" is 24 characters, all repeated
    assert echo_chars("You said: I HAVE been   baking bread!", "I have been baking bread") == 24
    message = "x" * 20 + "".join(chr(97 + i % 26) for i in range(100))
    assert echo_chars("Well: " + message[20:20 + ECHO_CHARS] + " ...", message) == ECHO_CHARS
    assert score_reply(ReplyCase("Well: " + message[20:20 + ECHO_CHARS], message)).echo
    assert not score_reply(ReplyCase("Well: " + message[20:20 + ECHO_CHARS - 1], message)).echo
    assert echo_chars("", message) == 0


def test_voice_finds_the_users_facts_in_the_first_person():
    assert voice_clauses("I live in Porto.", [MARTA]) == ("I live in Porto",)
    assert voice_clauses("I'm Marta, nice to meet", [MARTA]) == ("I'm Marta, nice to meet",)  # one shared name
    assert voice_clauses("My sister Ana is a nurse.", [ANA]) == ("My sister Ana is a nurse",)
    assert voice_clauses("You live in Porto and you have a dog called Rex.", [MARTA]) == ()


def test_voice_leaves_the_assistants_own_first_person_alone():
    user = "I'd like a simple step-by-step approach and a recommendation for an editor."
    assert voice_clauses("I recommend a simple editor.", [user]) == ()  # starts with its own verb
    assert voice_clauses("I'm sorry to hear that.", ["I'm sorry I'm late."]) == ()  # one shared common word


def test_attribution_catches_a_third_persons_fact_given_to_you():
    assert attribution_clauses("You are Ana, a nurse.", [ANA]) == ("You are Ana, a nurse",)
    assert attribution_clauses("Your sister Ana works as a nurse.", [ANA]) == ()
    assert attribution_clauses("You mentioned that Ana is a nurse.", [ANA]) == ()
    # the user's own fact said of them is right, even when the other person shares it
    assert attribution_clauses("You work as a nurse too.", [ANA, "I work as a nurse as well."]) == ()
    assert attribution_clauses("You are Ana, a nurse.", [MARTA]) == ()  # no third person spoken of


def test_leaks_relation_names_uris_triples_headings_and_template_text():
    assert leaks("She livesIn Lisbon.", [ANA]) == ("livesIn",)
    assert "ex:livesIn" in leaks("ex:livesIn Lisbon", [ANA])
    assert leaks("Ana | works as | nurse", [ANA]) == ("Ana | works as | nurse",)
    assert leaks("---Role--- hello", []) == ("---Role---",)
    assert leaks("I bought an iPhone.", ["My iPhone is new."]) == ()  # the user's own word
    shingles = template_shingles(["You are a helpful assistant responding to questions about data {x}."])
    assert leaks("I am a helpful assistant responding to questions.", [], shingles) == (
        "a helpful assistant responding to questions",)
    assert leaks("You live in Porto.", [MARTA], shingles) == ()


def test_meta_and_refusal():
    text = "This response summarizes the key information. It is clearly written in markdown."
    assert meta_phrases(text) == ("This response", "markdown")
    assert meta_phrases("As an AI, I have no name.") == ("As an AI",)
    assert meta_phrases("You live in Porto.") == ()
    sorry = "I'm sorry, but I don't know how you moved to Lisbon."
    assert score_reply(ReplyCase(sorry, "I moved to Lisbon.")).refusal
    assert not score_reply(ReplyCase(sorry, "Where do I live?")).refusal


def test_repeat_is_the_previous_reply_again():
    assert score_reply(ReplyCase("You're  tomás.", "I drive a Fiat.", previous_reply="You're Tomás.")).repeat
    assert not score_reply(ReplyCase("You drive a Fiat.", "I drive a Fiat.", previous_reply="You're Tomás.")).repeat
    assert not score_reply(ReplyCase("You're Tomás.", "Hi, I'm Tomás.")).repeat  # the first reply repeats nothing
    long = "Sourdough needs a warm place, regular feeding and patience before the loaves rise well. "
    assert score_reply(ReplyCase(long + "Try rye.", "ok", previous_reply=long + "Try spelt.")).repeat


def test_score_reply_correct_and_length():
    s = score_reply(ReplyCase("You live in lisbon. You have a dog called Rex!", "Where do I live?", (MARTA,), ("Lisbon",)))
    assert s.correct is True and s.sentences == 2 and s.tokens == 10 and not s.defective
    assert score_reply(ReplyCase("Hello.", "Hi")).correct is None
    assert score_reply(ReplyCase("I live in Porto.", "Where do I live?", (MARTA,), ("Porto",))).defective


def test_summary_counts_and_rates():
    scores = [ReplyScore(correct=True, sentences=2, tokens=10, repeat=True),
              ReplyScore(correct=False, voice=("I live in Porto",), sentences=4, tokens=20),
              ReplyScore(correct=None, echo_chars=90, refusal=True, sentences=1, tokens=30)]
    s = summarise_scores(scores)
    assert (s["replies"], s["questions"], s["correct"], s["accuracy"]) == (3, 2, 1, 0.5)
    assert (s["voice"], s["echo"], s["refusal"], s["leak"], s["defective"], s["defective_rate"]) == (1, 1, 1, 0, 2, 0.667)
    assert s["repeat"] == 1  # reported, not one of the bar's defects
    assert (s["median_sentences"], s["median_tokens"], s["over_3_sentences"]) == (2, 20, 1)
