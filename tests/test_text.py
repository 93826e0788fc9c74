from __future__ import annotations

from core.text import approx_tokens, entities, split_sentences, without_speaker, words


def test_split_sentences_strips_and_drops_empty():
    text = "Hi there!  My dog is Rex. He is 3 years old.   "
    assert split_sentences(text) == ["Hi there!", "My dog is Rex.", "He is 3 years old."]
    assert split_sentences("   ") == []


def test_split_keeps_abbreviations_together():
    assert split_sentences("Dr. Smith lives in the U.S. now. He likes it.") == ["Dr. Smith lives in the U.S. now.", "He likes it."]


def test_words_and_token_estimate():
    assert words("I'm here, aren't I?") == ["i'm", "here", "aren't", "i"]
    assert approx_tokens("one two three") == 4


def test_entities_with_spacy():
    ents = {(e.text, e.label) for e in entities("Alice moved to Berlin in March 2021.")}
    assert ("Berlin", "GPE") in ents
    assert any(label == "DATE" for _, label in ents)


def test_speaker_tags_are_not_words_to_search_with():
    assert without_speaker("Listener: Why did you feel guilty?") == "Why did you feel guilty?"
    assert without_speaker("A: The taxi drivers are on strike.") == "The taxi drivers are on strike."
    assert without_speaker("Dr Smith: Take two a day.") == "Take two a day."
    assert without_speaker("I said: no way.") == "I said: no way."  # not a tag: lower-case words before the colon
    assert without_speaker("Meet at 10:30 today") == "Meet at 10:30 today"
    assert without_speaker("Why?") == "Why?"


def test_split_sentences_from_many_threads_as_from_one():
    """pysbd's Segmenter keeps the text it splits on itself; shared by threads it cut one thread's
    sentences out of another's text (the NLI scorer's threads test failed under load)."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"Line {i} is here. " * (1 + i % 5) + f"And a last one about item {i}!" for i in range(64)]
    alone = [split_sentences(t) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(split_sentences, texts * 4))
    assert together == alone * 4


def test_split_sentences_remembers_a_text_and_gives_each_caller_its_own_list():
    text = "I moved to Voorhof. My flatmate eats cereal."
    first = split_sentences(text)
    first.append("edited by a caller")
    assert split_sentences(text) == ["I moved to Voorhof.", "My flatmate eats cereal."]
    assert split_sentences("  ") == []
    long = "A long paragraph goes on. " * 200  # over the remembered length: split all the same
    assert split_sentences(long) == ["A long paragraph goes on."] * 200
