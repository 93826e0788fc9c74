"""A reply in the user's language (core/language.py, the reply check's rule, issue 52): the
identifier on texts long enough to tell, the sentences of a reply that switch language, the check
whole and streamed, the second try's note, and the benchmark's count. Sentences from run 6 of the
conversational long dev dialogues, where `dsmart` answered an English user in Spanish."""

from __future__ import annotations

import pytest

from core.conversation import ReplyStored
from core.language import language_of, other_language, users_language, word_count
from core.llm.fake import ScriptedLLM
from core.llm.prompts import render_prompt
from core.metrics.conversing import TurnCase, tripped_checks, turn_flags
from core.reply_check import ReplyCheckSettings, check_reply, needs_second_try, second_try_note
from core.store import Store
from tests.test_reply_check import _round
from tests.test_reply_stream import fed, words

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
    # names are no language: a list of them is not French, however French the names
    assert language_of("Paris, Lyon, Marseille, Toulouse, Nice, Nantes, Strasbourg are big French cities.") is None
    assert language_of("Mikel es un ingeniero en Berlin, trabaja en una startup que no entiendo.") == "es"
    assert users_language([ROSA]) == "en"  # a Spanish greeting, then English
    assert users_language(["Hi!", "Ok."]) is None
    assert users_language([ITZIAR, "Ahora vivo en una casa pequeña cerca del río con mi perro."]) == "es"  # the latest


def test_sentences_after_a_switch_follow_it_until_a_long_one_switches_back():
    sentences = ["Hi Rosa!", "Itziar fue devastada en el trabajo el viernes.", "La audiencia no escuchó nada.",
                 "That sounds like a stressful night for both of you.", "Ok."]
    assert other_language(sentences, "en") == {1, 2}
    assert other_language(sentences, None) == set()


def test_a_sentence_in_another_language_is_dropped_when_something_else_is_said():
    checked = check_reply(f"{ENGLISH} {SPANISH}", ITZIAR, [ROSA])
    assert checked.text == ENGLISH and len(checked.foreign) == 3 and checked.language == "en"
    assert not checked.nothing_new and "not in English" in checked.summary()


def test_a_reply_all_in_another_language_is_written_again_in_the_users():
    checked = check_reply(SPANISH, ITZIAR, [ROSA])
    assert checked.text == SPANISH and checked.nothing_new and checked.language == "en"  # kept whole here ...
    assert needs_second_try(SPANISH, ITZIAR, [ROSA])  # ... and written once more
    assert second_try_note(SPANISH, ITZIAR, [ROSA]) == render_prompt("reply_language", language="English").strip()
    assert second_try_note(ENGLISH, ITZIAR, [ROSA]) is None
    off = ReplyCheckSettings(same_language=False)
    assert check_reply(SPANISH, ITZIAR, [ROSA], off).text == SPANISH and not needs_second_try(SPANISH, ITZIAR, [ROSA], off)


def test_a_fact_question_is_answered_from_the_sentences_in_the_users_language():
    swim = "I've switched to swimming at the municipal pool three times a week."
    spanish = "Hoy hago ejercicio regular, principalmente la práctica de nadar en la piscina municipal."
    checked = check_reply(f"{spanish} You swim at the municipal pool.", "What exercise do I do these days?", [ROSA, swim])
    assert checked.text == "You swim at the municipal pool." and checked.foreign == (spanish,)
    alone = check_reply(spanish, "What exercise do I do these days?", [ROSA, swim])
    assert alone.nothing_new and not alone.declined  # nothing answered in English: written again, not declined
    assert not check_reply(spanish, "What's my mother's name?", [ROSA, swim]).declined


@pytest.mark.parametrize("text", [SPANISH, f"{ENGLISH} {SPANISH}", f"{SPANISH} {ENGLISH}", f"Hola! {SPANISH}",
                                  f"Hi Rosa! {SPANISH} Ok."])
def test_the_streamed_check_drops_what_check_reply_drops(text):
    expected = check_reply(text, ITZIAR, [ROSA])
    for pieces in (words(text), list(text)):
        shown, stream = fed(text, ITZIAR, [ROSA], pieces)
        assert "".join(shown) == stream.shown == expected.text
        assert tuple(stream.foreign) == expected.foreign


def test_a_round_writes_a_reply_in_another_language_again_and_shows_only_the_second(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    llm = ScriptedLLM([SPANISH, ENGLISH])
    stored, streamed = _round(store, ReplyCheckSettings(), SPANISH, ITZIAR, llm)
    assert streamed == stored.reply.text == ENGLISH and stored.reply.draft == SPANISH
    assert llm.requests[-1][-1].content == render_prompt("reply_language", language="English").strip()
    assert isinstance(stored, ReplyStored)


def test_the_benchmark_counts_a_reply_in_another_language():
    flags = turn_flags(TurnCase(f"{ENGLISH} {SPANISH}", ITZIAR, (ROSA,)))
    assert flags.other_language and flags.as_item()["other_language"]
    assert not turn_flags(TurnCase(ENGLISH, ITZIAR, (ROSA,))).other_language
    assert "other_language" in tripped_checks(SPANISH, ITZIAR, [ROSA])
    assert "other_language" not in tripped_checks(ENGLISH, ITZIAR, [ROSA])


def test_a_ramble_in_another_language_is_stopped_after_two_sentences_and_written_again(tmp_path):
    """Two sentences long enough to tell in another language, nothing shown: the model stops
    writing that text (its slot goes to the next person) and writes the reply again, whole."""
    import time

    ramble = " ".join(["Itziar fue devastada en el trabajo el viernes por la noche.",
                       "Llegó a casa a la una de la mañana y se comió medio pan."] * 20)

    class Slow(ScriptedLLM):
        pulled: list[int] = []

        def _stream(self, *args, **kwargs):
            count = 0
            for piece in super()._stream(*args, **kwargs):
                count += 1
                time.sleep(0.005)  # a token at a time, as a model writes: the page's check keeps up
                yield piece
            Slow.pulled.append(count)

    llm = Slow([ramble, ENGLISH])
    stored, streamed = _round(Store(tmp_path / "db.sqlite3"), ReplyCheckSettings(), ramble, ITZIAR, llm)
    assert streamed == stored.reply.text == ENGLISH  # the second text, written whole
    assert len(llm.requests) == 2
    draft = stored.reply.draft
    assert draft.startswith("Itziar fue devastada") and len(words(draft)) < len(words(ramble)) // 4  # stopped early
    assert Slow.pulled[-1] == len(words(ENGLISH))  # the second text was not stopped
