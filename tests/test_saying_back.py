"""Restatement and recital (core.metrics.saying_back) on hand-computed cases."""

from core.metrics.saying_back import content_stems, overlap, recites, restates

INGRID = "Hi, I'm Ingrid. I work as a midwife at the hospital in Bergen."


def test_content_stems_leave_out_function_words_and_join_word_forms():
    # "I'm", "at", "the", "in", "as", "a" are stop words; "works" ~ "work"; "midwife" -> "midwif"
    assert content_stems(INGRID) == {"hi", "ingrid", "work", "midwif", "hospital", "bergen"}
    assert content_stems("She works.") == content_stems("she WORK") == {"work"}


def test_a_second_person_restatement_is_said_back():
    # reply words: name, ingrid, work, midwif, bergen ("said" is framing); shared 4, own 1 ("name"): 4/5 = 0.8
    reply = "You said your name is Ingrid and you work as a midwife in Bergen."
    assert overlap(reply, INGRID).shared == 4 and overlap(reply, INGRID).own == 1
    assert restates(reply, INGRID)
    # "You mentioned you're a midwife in Bergen." -> midwif, bergen: 2 shared, 0 own
    assert restates("You mentioned you're a midwife in Bergen.", INGRID)


def test_a_reply_that_adds_its_own_content_is_not():
    # nice, meet, ingrid, midwifery, rewarding, work, long, doing: shared 2 (ingrid, work) of 8
    reply = "Nice to meet you, Ingrid! Midwifery must be rewarding work; how long have you been doing it?"
    o = overlap(reply, INGRID)
    assert (o.shared, o.own) == (2, 6) and not restates(reply, INGRID)
    assert not restates("Ingrid!", INGRID)  # one shared word acknowledges, it does not say back
    assert not restates("", INGRID)


def test_the_bounds_are_the_issues_70_percent_and_3_own_words():
    message = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    # 7 shared, 3 own: 7/10 = 0.70 and 3 own -> said back
    assert restates("alpha bravo charlie delta echo foxtrot golf kilo lima mike", message)
    # 6 shared, 3 own: 6/9 = 0.67 < 0.70
    assert not restates("alpha bravo charlie delta echo foxtrot kilo lima mike", message)
    # 10 shared, 4 own: 10/14 = 0.71 but 4 own words > 3
    assert not restates("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november", message)


DANIEL = "You're Daniel, 42 years old, living in a small flat in Glasgow."


def test_recital_is_an_earlier_reply_said_again_not_only_the_last():
    assert recites("you're daniel,  42 years old, living in a small flat in glasgow.", [DANIEL, "Sounds fun."])
    # daniel, 42, year, old, liv, small, flat, glasgow: all 8 in the earlier reply -> 8/8, 8 shared
    assert recites("Daniel, 42, lives in a small flat in Glasgow and is 42 years old.", ["Hello!", DANIEL])
    assert not recites(DANIEL, [])  # a first reply recites nothing
    assert not recites("", [DANIEL])


def test_recital_needs_80_percent_and_four_shared_words():
    earlier = "alpha bravo charlie delta echo foxtrot"
    assert recites("alpha bravo charlie delta kilo", [earlier])  # 4 of 5 = 0.8, 4 shared
    assert not recites("alpha bravo charlie kilo", [earlier])  # 3 of 4 = 0.75
    assert not recites("alpha bravo charlie", [earlier])  # 3 of 3 = 1.0 but 3 shared < 4: a short answer
    assert not recites("alpha bravo charlie delta kilo lima", [earlier])  # 4 of 6 = 0.67
    # the words must come from ONE earlier reply: 2 + 2 from two replies is no recital
    assert not recites("alpha bravo kilo lima", ["alpha bravo", "kilo lima"])


def test_a_bare_acknowledgement_asks_nothing_and_has_two_content_words_at_most():
    from core.metrics.saying_back import bare

    assert bare("That's great!") and bare("That's a good point.") and bare("I see.") and bare("You're right!")
    assert bare("That's a challenging translation!")  # two: challenging, translation
    assert not bare("That's a challenging translation, and a long one!")  # three
    assert not bare("Great! How do you study them?")  # a question back
    assert not bare("Congratulations on the new job!")  # three: congratulations, new, job
    assert bare("You said so.")  # a speech verb is framing, not content


def test_the_checks_a_live_reply_trips_by_name():
    from core.metrics.conversing import tripped_checks

    told = "Hi! I'm Nadia. I work as a nurse in Lyon."
    # said back in the second person: a restatement, and nothing else
    assert tripped_checks("You're Nadia and you work as a nurse in Lyon.", told) == ("restatement",)
    assert tripped_checks("Night shifts must be tiring. Do you like the ward?", told) == ()
    # the reply before said again, word for word, to the next statement
    again = "You're Nadia and you work as a nurse in Lyon."
    assert "recital" in tripped_checks(again, "I also paint on Sundays.", [told], [again])
    assert "repeat" in tripped_checks(again, "I also paint on Sundays.", [told], [again])
    assert "meta" in tripped_checks("This response is short.", told)
    assert tripped_checks("That's great!", told) == ("bare",)
    assert tripped_checks("That's great!", "Where do I work?") == ()  # bare is counted on statements only
