"""A reply in the user's language (core/language.py, the reply check's rule, issue 52): the
identifier on texts long enough to tell, the sentences of a reply that switch language, and the
benchmark's count. Sentences from run 6 of the
conversational long dev dialogues, where `dsmart` answered an English user in Spanish."""

from __future__ import annotations

from core.language import language_of, other_language, users_language, word_count
from core.metrics.conversing import TurnCase, tripped_checks, turn_flags

ROSA = "Hola! I'm Rosa, a physiotherapist in Bilbao. Mostly sports injuries, lots of footballers with bad knees."
ITZIAR = ("Itziar had a disaster at work on Friday. Halfway through the opening night a speaker on the left of the "
          "stage just died, and she had to re-route everything during a love song without anyone noticing.")
SPANISH = ("Itziar fue devastada en el trabajo el viernes. La audiencia no escuchó nada. "
           "Llegó a casa a la una de la mañana y se comió medio pan.")
ENGLISH = "That sounds like a stressful night! How did she keep calm during the love song?"


def test_the_identifier_tells_only_texts_long_enough():
    assert language_of("Efua studies medicine in Kumasi.") is None  # five words: too short to tell
    assert language_of(ITZIAR) == "en"
    assert language_of("Hoy hago ejercicio regular, principalmente la práctica de nadar en la piscina municipal.") == "es"
    assert word_count("我今天去了公园散步") == 9  # no spaces: a character is a word
    assert users_language([ROSA]) == "en"  # a Spanish greeting, then English
    assert users_language(["Hi!", "Ok."]) is None
    assert users_language([ITZIAR, "Ahora vivo en una casa pequeña cerca del río con mi perro."]) == "es"  # the latest


def test_sentences_after_a_switch_follow_it_until_a_long_one_switches_back():
    sentences = ["Hi Rosa!", "Itziar fue devastada en el trabajo el viernes.", "La audiencia no escuchó nada.",
                 "That sounds like a stressful night for both of you.", "Ok."]
    assert other_language(sentences, "en") == {1, 2}
    assert other_language(sentences, None) == set()


def test_the_benchmark_counts_a_reply_in_another_language():
    flags = turn_flags(TurnCase(f"{ENGLISH} {SPANISH}", ITZIAR, (ROSA,)))
    assert flags.other_language and flags.as_item()["other_language"]
    assert not turn_flags(TurnCase(ENGLISH, ITZIAR, (ROSA,))).other_language
    assert "other_language" in tripped_checks(SPANISH, ITZIAR, [ROSA])
    assert "other_language" not in tripped_checks(ENGLISH, ITZIAR, [ROSA])
