"""The local extractor's rules as a table: every rule of its rule families (context.py,
node_rules.py, change_rules.py, value_rules.py, clause_rules.py) and of the stages that read across
turns (definites.py, replacements.py), with the general pattern it reads, one example sentence and
the test that holds it. `python -m core dsm-rules --markdown` renders it, one table per family;
docs/dsm-updates.md carries the rendering (a test keeps the two equal, and checks that every rule's
method and test exist).

A rule's family (its heading) is read from its code, so a rule cannot sit under another family's
heading. A rule belongs here only when its pattern is stated beyond the one sentence it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

# the heading of each family, by the class (or module of core/methods/dsmart) that holds its rules, in table order
FAMILIES: dict[str, tuple[str, str]] = {
    "ParseContext": ("what a clause asserts", "context.py"),
    "NodeRules": ("nodes", "node_rules.py"),
    "definites": ("nodes across turns", "definites.py"),
    "ChangeRules": ("change statements", "change_rules.py"),
    "replacements": ("change statements across turns", "replacements.py"),
    "ValueRules": ("typed values", "value_rules.py"),
    "ClauseRules": ("clauses", "clause_rules.py"),
}


@dataclass(frozen=True)
class Rule:
    name: str
    code: str  # Family.method (a class of FAMILIES) or module.function of core/methods/dsmart
    reads: str  # the general pattern
    example: str  # one sentence it reads
    test: str  # the test function (tests/test_dsm_*.py) that holds it

    @property
    def family(self) -> str:
        return self.code.split(".", 1)[0]


RULES: tuple[Rule, ...] = (
    # -- what a clause asserts (context.py)
    Rule("asserted clauses", "ParseContext.asserted", "a question's subordinate first-person clause is a statement; hypothetical, conditional and advised clauses are not",
         "... remember when I got pre-approved for $400,000 from Wells Fargo? (a statement); Can you recommend some providers in my area? (none)", "test_a_first_person_clause_inside_a_question_is_a_statement"),
    Rule("questions", "ParseContext.asserted", "a sentence that asks states nothing, with or without its '?' (a wh-word, or an auxiliary before its subject, opens it), nor does a question's wh-clause or one of an asking verb (know, wonder ...)",
         "What is my mother's name (none); Do you know where my sister lives? (none)", "test_a_question_states_no_fact"),
    # -- nodes (node_rules.py; definites.py across turns)
    Rule("speakers", "NodeRules.pronoun", "first person is the speaker, second person the other party; it/they are not guessed (he/she: 'gendered pronoun')",
         "You live in Rome. (said by the assistant: the user lives in Rome)", "test_speakers_resolve_first_and_second_person"),
    Rule("relative pronoun", "NodeRules.antecedent", "who / which / that stand for the noun their relative clause modifies; 'who' climbs to a person",
         "I met Rachel, an old colleague from my company, who is at TechCorp now.", "test_who_refers_to_the_person_not_the_company"),
    Rule("noun key", "NodeRules.key", "a noun is named by its compounds and adjectives, and by its owner ('user's dog')",
         "My dog is Rex. (the node 'user dog')", "test_possessive_copula_names_the_owned_thing"),
    Rule("facility name", "NodeRules.street", "a noun placed by a facility name (on / at / in a FAC entity) is its own individual; a town does not split it",
         "the music shop on Main St", "test_a_shop_on_a_named_street_is_its_own_place_and_where_places_the_clause"),
    Rule("a name's type", "NodeRules.node", "a name's entity label types it only where nothing surer types it otherwise: the noun it is, a place lived in, the memory's earlier type",
         "My sister Nadia lives in Murano. (Nadia a sister, not a place)", "test_a_name_is_typed_by_what_it_is_not_by_a_misread_entity_label"),
    Rule("apposition", "NodeRules.node", "'my sister Anna': the name is the individual, typed by the noun, had by the owner",
         "My sister Anna lives in Boston.", "test_entities_apposition_and_storage"),
    Rule("number in a name", "NodeRules.attached", "a number written into a word ('70-200mm', '5K', '80D') is part of a name, not a count",
         "my new 70-200mm zoom lens", "test_dsm_updates_reads_the_value_an_answer_states"),
    Rule("participle subject", "NodeRules.subject", "a participle or conjoined clause without a subject takes its governing clause's subject",
         "By the way, I've been on a learning streak lately, having watched 15 Crash Course videos in the past few weeks.", "test_a_participle_takes_the_main_clause_subject"),
    Rule("place within a place", "NodeRules.place", "a kept thing's place is the place with the place it is in ('the safe in my bedroom closet')",
         "I keep my passport in the desk drawer in the study.", "test_a_kept_thing_is_stored_at_its_place_within_a_place"),
    Rule("gendered pronoun", "NodeRules.gendered_antecedent", "he / she (him, her, his) stand for the one person noun of that gender the utterance names before them; none when it names none or several",
         "My son practices a lot, and he has scored 7 goals this season.", "test_he_and_she_stand_for_the_one_person_noun_of_their_gender"),
    Rule("model number", "NodeRules.name_number", "a number after the proper name it modifies ('Dell XPS 13', 'iPhone 15') is part of the name, not a count: counts come before their noun",
         "I just got an iPhone 15.", "test_a_number_after_a_name_is_part_of_the_name"),
    Rule("person noun before a name", "NodeRules.kin_before", "a person noun right before a name ('my niece Lily'), however parsed, types the name and is no part of it; the noun's owner has the name",
         "My nephew Max is 4.", "test_a_person_noun_before_a_name_types_the_name_and_a_bare_number_is_an_age"),
    Rule("clause of a time", "NodeRules.anchor", "a word inside a time or name span ('am' tagged a verb) is no clause; the clause is the verb outside the span",
         "Since the move I feed the cat at 6:30 am instead.", "test_a_clock_time_inside_a_longer_time_span_is_read"),
    Rule("group members", "NodeRules.group_owner", "a group's (collection, team, library ...) members are its owner's",
         "My vinyl collection is up to 120 records.", "test_a_group_counts_its_owners_members"),
    Rule("possessed name", "NodeRules.node", "'my X' is the speaker's, for a name too ('my Honda Civic')",
         "I traded in my Civic for a Toyota RAV4.", "test_a_replacement_hands_the_old_things_facts_to_the_new_one"),
    Rule("goal placed", "NodeRules.place", "a put verb's goal ('to a box') is where the thing is, placed by the verb's other locative ('under the stairs'), wherever the parser hangs it",
         "I moved my old books to a box under the stairs.", "test_a_put_verbs_goal_is_the_place_placed_by_the_verbs_locative"),
    Rule("the speaker's one X", "definites.resolve_definites", "a noun said with no owner, that is no name ('the water bill'), is the speaker's own thing of the same words when the memory holds exactly one",
         "Our water bill was $60. ... The water bill came to $75.", "test_the_x_is_the_speakers_one_x"),
    # -- change statements (change_rules.py; replacements.py across turns)
    Rule("change verb", "ChangeRules.changed", "a change verb's 'to / at N' (or hit / reach N) sets the value of its object or subject, as 'X is N'; an aim changes nothing",
         "The landlord raised my rent to $1,950.", "test_a_change_verb_sets_the_value_of_what_it_changes"),
    Rule("total", "ChangeRules.changed", "a totalling verb's 'to N' (came to, amounted to, totalled) is its subject's value",
         "The repair bill came to $340.", "test_a_totalling_verb_states_its_subjects_value"),
    Rule("role in a group", "ChangeRules.role", "a noun the subject is, becomes, is elected / promoted to or works as, with the group it is of / at / in, is the value of one role node per holder and group",
         "I'm now the president of my book club.", "test_a_role_in_a_group_is_one_value_and_a_new_role_replaces_it"),
    Rule("turned age", "ChangeRules.age", "a person or someone's own (a possessed noun) that turns N has age N",
         "My dog just turned 3.", "test_someones_own_turn_an_age_and_years_old_is_no_duration"),
    Rule("replacement", "replacements.replacement_updates", "'traded in X for Y', 'replaced X with Y', 'switched (from X) to Y': Y takes the speaker's facts with X (with no X named: the one named thing of Y's class)",
         "I just traded in my Civic for a Toyota RAV4.", "test_a_replacement_hands_the_old_things_facts_to_the_new_one"),
    Rule("replacement of an untyped name", "replacements.same_class", "with no X named, a class the tagger could not tell (no tag, or only Thing) matches any class; the one named thing still has to be one",
         "I use a Dell XPS 13 for work. ... I switched to a ThinkPad T14.", "test_a_replacement_of_an_untyped_name_and_a_job_switched_to"),
    # -- typed values (value_rules.py)
    Rule("clock time in a longer span", "ValueRules.clock", "a clock time is the leading words of a TIME span that read as one ('6:30 am before work')",
         "I usually feed the cat at 6:30 am before work.", "test_a_clock_time_inside_a_longer_time_span_is_read"),
    Rule("restated count", "ValueRules.restated", "an owned noun phrase set off by a comma after a count ('..., my longest swim so far') is also that count: 'my longest swim is 40 laps'",
         "I swam 40 laps today, my longest swim so far.", "test_a_noun_phrase_after_a_count_restates_it"),
    Rule("measure of a person", "ValueRules.count", "a person who is N units of weight (pounds, kg) or height (cm) has that measure: the count is what they weigh (one slot with 'I weigh N pounds') and their weight, not a count of 'be'",
         "I'm at 180 pounds now.", "test_a_persons_weight_in_units_of_weight"),
    Rule("habit schedule", "ValueRules.schedule", "a clock time, weekday or frequency hangs on the event noun it modifies, else on the clause's activity",
         "I see Dr. Smith every week.", "test_habits_get_a_frequency_a_time_and_a_day"),
    Rule("event subject", "ValueRules.schedule", "an event noun that is the subject takes the time or day ('our meeting moved to 10:30 am')",
         "Our weekly team meeting moved to 10:30 am.", "test_an_event_subject_takes_its_new_time_and_day"),
    Rule("occasions", "ValueRules.occasions", "once / twice / thrice after a verb (not before it, not followed by 'a week') count the times it happened",
         "We've met up twice already.", "test_twice_after_a_verb_counts_its_times_on_the_slot_of_n_times"),
    Rule("time taken", "ValueRules.measured", "a duration that is the object of 'of' is the value of the noun it is of ('my best time of 25:50')",
         "My personal best time is 27 minutes and 45 seconds.", "test_times_taken_and_clock_times_are_typed"),
    Rule("count", "ValueRules.number", "a number modifying a noun counts it, on owner --verb--> Quantity(kind) amount; verbs that count alike share one node",
         "I've added 25 new postcards to my collection.", "test_counts_are_quantities_with_typed_amounts"),
    Rule("increment", "ValueRules.number", "'N more / another / additional X' is an increment, not the count so far",
         "I bought 8 more postcards at the fair.", "test_an_increment_and_a_number_set_aside_are_no_count"),
    Rule("set aside", "ValueRules.number", "a number after 'not', 'instead of', 'rather than' is set aside",
         "I've earned 120 stars, not 300.", "test_an_increment_and_a_number_set_aside_are_no_count"),
    Rule("noun of N", "ValueRules.setting_of", "'<a / my> noun of N' makes N the noun's value ('a sensitivity of 6', 'my GPA of 3.8')",
         "I play with a sensitivity of 6.", "test_a_duration_followed_by_its_window_an_of_setting_a_turned_age_and_a_time_taken"),
    Rule("elided noun", "ValueRules.elided", "a bare number counts the kind of a 'count/total/number' noun before it, else the nearest plural noun before",
         "I've added 17 new ones since I started collecting again", "test_an_elided_noun_is_the_plural_noun_before_it"),
    Rule("count noun", "ValueRules.count", "a 'count/total/number/tally' noun counts its compound ('my follower count')",
         "... which brings my total species count to 32.", "test_a_count_noun_names_what_it_counts"),
    Rule("lone number after a count noun", "ValueRules.bare_count", "a lone number the tagger reads as a year is a count after a count noun, unless a year preposition governs it",
         "My current follower count - I think I'm close to 1300 now.", "test_a_lone_number_after_a_count_noun_is_its_value_not_a_year"),
    Rule("that's N", "ValueRules.count", "'that's N X' after a first-person clause (not in a relative clause) is the speaker's count of the clause's verb",
         "I finished another one yesterday, so that's 15 books this year.", "test_thats_n_after_a_first_person_clause_is_the_speakers_count"),
    Rule("that's N times", "ValueRules.count", "'that's N times ... that I've VERBed' counts that verb",
         "So that's six times now that I've worn them.", "test_thats_n_times_counts_the_verb_of_its_clause"),
    Rule("repeated-verb pronoun", "ValueRules.same_verb_object", "an object pronoun (it / them) of a verb stands for the object of the same verb earlier in the utterance",
         "I just wore my new Converse, so that's six times now that I've worn them.", "test_a_repeated_verb_resolves_its_pronoun_object"),
    Rule("measure of stuff", "ValueRules.measured_stuff", "a measure counts what it is of: '5 ounces of water' and '1 tablespoon of coffee' are two slots",
         "I use 1 tablespoon of coffee for every 5 ounces of water.", "test_a_measure_counts_what_it_is_of"),
    Rule("duration", "ValueRules.duration", "'for N units', 'it's been N units' is a duration of the clause's activity; windows ('ago', 'the past N') and 'N years old' are not",
         "I've had my cat, Luna, for about 9 months now.", "test_a_duration_hangs_on_what_it_measures"),
    Rule("time taken by a finished task", "ValueRules.duration", "'in N minutes' after a finishing verb in the past is the time taken; otherwise 'in N weeks' is when",
         "I finished a 5K in 35 minutes.", "test_a_duration_followed_by_its_window_an_of_setting_a_turned_age_and_a_time_taken"),
    Rule("money measure", "ValueRules.countable", "a number tagged money or percent counts only as the modifier of a noun of its kind ('5 pounds')",
         "I've also lost about 5 pounds in the past month.", "test_money_tagged_pounds_and_expletive_durations_meet_their_update"),
    Rule("changed limit's owner", "ValueRules.count", "the changed value is also whoever changed the thing's, or whose the thing is",
         "I'm changing my morning coffee limit to two cups.", "test_a_changed_limit_is_also_its_owners_count"),
    # -- clauses (clause_rules.py)
    Rule("up / down to N", "ClauseRules.preps", "after a change verb, 'up to N' / 'down to N' is the verb's 'to N' (the parser hangs it, or the number, on the particle)",
         "My boss bumped my salary up to $85,000.", "test_up_or_down_to_n_after_a_change_verb_is_the_value_of_what_it_changes"),
    Rule("job switched to", "ClauseRules.prepositional", "a job noun the speaker switches (trades, upgrades ...) to is held: its 'at' / 'with' name is the employer",
         "I switched to a part-time position at Deloitte.", "test_a_replacement_of_an_untyped_name_and_a_job_switched_to"),
    Rule("fund", "ClauseRules.fund", "money saved for a purpose is the value of the purpose's fund ('our honeymoon fund'), one slot whichever way it is said",
         "I've saved $500 for my vacation. ... My vacation fund is at $900 now.", "test_money_saved_for_a_purpose_is_the_value_of_its_fund"),
    Rule("former habit", "ClauseRules.former", "a clause under 'used to' (a past 'use' with no object; 'didn't use to' negated) is a former habit or state: its relation is 'used to <verb>', never the current value's",
         "I used to live in Boston, but last month I moved to Denver.", "test_a_used_to_clause_is_a_former_habit_not_the_current_value"),
    Rule("closed vocabulary", "ClauseRules.fixed", "verb + preposition paraphrases map to one property (live in / moved to / relocated to -> livesIn)",
         "We relocated to Portland in August.", "test_the_vocabulary_maps_paraphrases_onto_one_property"),
    Rule("copula", "ClauseRules.copula_attr", "'my X is Y': a name, a value or a type of X; 'my name / age is ...' is about the owner",
         "My dog is Rex.", "test_possessive_copula_names_the_owned_thing"),
    Rule("naming", "ClauseRules.naming", "'X is called / named Y', 'I named X Y': Y is X's name",
         "My dog is called Max.", "test_passive_naming_and_my_name_is"),
    Rule("birth", "ClauseRules.birth", "'born in / on': a place is the birth place, a date the birth date",
         "I was born on 5 May 1990.", "test_age_birth_date_and_negation"),
    Rule("where clause", "ClauseRules.where", "a 'where' relative clause places its verb (and a causative's caused event) at its noun",
         "I remember the music shop on Main St where I got my guitar serviced.", "test_a_shop_on_a_named_street_is_its_own_place_and_where_places_the_clause"),
    Rule("amount's purpose", "ClauseRules.purpose", "an amount with an 'on' / 'for' object is that spending's, so amounts for different things are two facts",
         "I spent $75 on groceries at SaveMart.", "test_amounts_for_different_things_are_two_facts_and_one_thing_still_updates"),
    Rule("employer", "ClauseRules.employer", "the name after 'at' / 'with' a job noun held by the verb is the employer",
         "I just started my new job at Spotify.", "test_a_job_at_a_company_names_the_employer"),
    Rule("stored at", "ClauseRules.direct", "a store verb's locative (or 'moved / put X to') places its object: storedAt, functional",
         "I keep my old sneakers under my bed.", "test_entities_apposition_and_storage"),
)


def markdown(rules: tuple[Rule, ...] = RULES) -> str:
    """One table per family, under its heading, in the order of FAMILIES."""
    parts = []
    for family, (idea, where) in FAMILIES.items():
        rows = [r for r in rules if r.family == family]
        if not rows:
            continue
        lines = [f"**{idea}** (`{where}`)", "", "| rule | reads | example | code | test |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {r.name} | {r.reads} | \"{r.example}\" | `{r.code}` | `{r.test}` |" for r in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
