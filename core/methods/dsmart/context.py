"""What the local extractor's rule families share while they read one utterance's parse.

The families (node_rules.py, change_rules.py, value_rules.py, clause_rules.py) are small classes,
each given this context and the lower families it calls; none keeps state of its own. The context
holds the builder the triples go into, who is speaking (first person resolves to them), and the
tokens already turned into values, which later rules leave alone. It lives for one utterance: token
indices are the utterance's, across its sentences.

Whether a clause asserts anything is read here too, since it depends on the speaker and every
family that emits a fact asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.methods.dsmart import word_lists as lx
from core.methods.dsmart.fragment import FragmentBuilder


@dataclass(frozen=True)
class ParseContext:
    builder: FragmentBuilder
    speaker: str  # "user", "assistant" or "narrator" (a third-person statement about the user)
    used: set[int] = field(default_factory=set)  # tokens already turned into values (numbers, their nouns, times)

    def asserted(self, verb, question: bool) -> bool:
        """False for the question itself, hypothetical / conditional clauses, the assistant's
        advice ('you could ...', 'you can ...') and indirect questions: a wh-clause of a question
        ('do you know where my sister lives?') or of an asking verb ("I don't know what your
        mother's name is"), not of a statement ("that's what my smartwatch has been showing")."""
        x = verb
        while True:
            if x.dep_ != "relcl" and (question or x.head.lemma_.lower() in lx.ASKING_VERBS) \
                    and any(c.lower_ in lx.WH_WORDS and c.dep_ != "det" for c in x.children):
                return False  # a wh-clause of a question, or of 'know' / 'wonder' ..., asks for its value
            auxes = {c.lower_.strip("'") for c in x.children if c.dep_ in ("aux", "auxpass")}
            if auxes & lx.HYPOTHETICAL or {"d"} & auxes:
                return False
            if any(c.dep_ == "mark" and c.lower_ in lx.CONDITIONAL_MARKS for c in x.children):
                return False
            if self.speaker == "assistant" and auxes & {"can", "will", "ll"}:
                return False
            if question and x.dep_ in ("ROOT", "conj") and x.head.dep_ in ("ROOT", "conj"):
                return False  # the interrogative main clause
            if question and auxes & {"will", "ll"}:
                return False
            if x.dep_ not in ("xcomp", "conj") or x.head.i == x.i:
                return True
            x = x.head  # "I'd like to wake up": the hypothetical governs its complement


SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl"})


def is_question(sent) -> bool:
    """Whether a sentence asks, with or without its question mark (people type 'what is my mother's
    name'): it ends in '?', or opens with a wh-word not followed by its own subject ('What is ...',
    not 'What I like is ...'), or with an auxiliary before the subject ('Is my dog called Rex')."""
    if sent.text.rstrip().endswith("?"):
        return True
    toks = [t for t in sent if not t.is_punct and not t.is_space]
    if len(toks) < 2:
        return False
    first, second = toks[0], toks[1]
    if first.lower_ in lx.WH_WORDS:
        return not (second.pos_ in ("PRON", "PROPN") and second.dep_ in SUBJECTS)
    if first.lower_ in lx.QUESTION_AUX and first.pos_ == "AUX":
        return any(t.dep_ in SUBJECTS and t.i > first.i and t.head.i in (first.i, first.head.i) for t in sent)
    return False
