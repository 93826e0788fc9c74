"""Structured statement generation s_t ~ p_theta(s_t | h_t) (Appendix E prompt), or the round's
own sentences when the LLM is too weak to distil them (DSMConfig.statements), or both: the round's
sentences, and the LLM's statement only where the rules found nothing in the user's turn
("fallback", issue 40: a misparse such as 'Pavel repairs' read as a noun loses the whole fact)."""

from __future__ import annotations

from rdflib import RDF, Graph

from core.llm.base import LLM, LLMError, Message
from core.llm.prompts import render_prompt
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.extract import Utterance
from core.methods.dsmart.fragment import is_fact
from core.methods.dsmart.vocab import DSM, TOP_CLASSES, USER
from core.text import split_sentences, words

MAX_STATEMENT_CHARS = 600
SCHEMA_TYPES = frozenset((*TOP_CLASSES, DSM.Agent, DSM.Speaker))  # types every mention gets, not facts
STATEMENT_PREFIX = "Statement: "  # the LLM's statement's line in a "fallback" round's text
FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself"})
# Words that carry no content of their own: sharing them is no sign that a sentence repeats another.
FUNCTION_WORDS = frozenset(
    "a an the and or but if so is am are was were be been being do does did have has had what where when who whom "
    "which why how to of in on at for with from by about as that this these those it its you your yours you're "
    "not no yes too very also just now then there here can could would should will shall may might oh ok okay "
    "well hi hello thanks thank please sure".split())


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in FIRST_PERSON and w not in FUNCTION_WORDS}


def echoes_user(sentence: str, user_text: str) -> bool:
    """Whether an assistant sentence in the first person repeats content of the user's turn, itself
    in the first person: the assistant speaking in the user's voice (small models answer "Where do I
    live?" with "I live in Lisbon."), which is no fact about the assistant. A first-person sentence
    on its own topic ("I am an AI assistant." to "Who are you?") shares no content word and stays."""
    if not (FIRST_PERSON & set(words(sentence)) and FIRST_PERSON & set(words(user_text))):
        return False
    return bool(content_words(sentence) & content_words(user_text))


def rules_found_little(fragment: Graph) -> bool:
    """Whether a turn's fragment holds no fact but bare adjectives ('user | quality | proud') and the
    types of what it mentions: what the rules kept of the turn says nothing a question could ask
    for. The user's own type ('I'm a teacher': user | type | teacher) is a fact."""
    for s, p, o in fragment:
        if not is_fact((s, p, o)) or p == DSM.quality:
            continue
        if p != RDF.type or (s == USER and o not in SCHEMA_TYPES):
            return False
    return True


def states_something(text: str) -> bool:
    """Whether a user turn has a sentence that is not a question: a turn of questions only asks,
    and the statement the LLM would write of it is the reply's content, not the user's."""
    return any(not s.rstrip().endswith("?") for s in split_sentences(text) if words(s))


class StatementMaker:
    def __init__(self, llm: LLM | None, strong: bool, config: DSMConfig) -> None:
        self.llm = llm
        self.strong = strong
        self.config = config

    def use_llm(self) -> bool:
        mode = self.config.statements
        return self.llm is not None and (mode == "llm" or (mode == "auto" and self.strong))

    def use_fallback(self) -> bool:
        return self.llm is not None and self.config.statements == "fallback"

    def make(self, question: str, answer: str, notes: list[str], earlier_user: str = "") -> tuple[str, list[Utterance]]:
        """(statement shown in the history, utterances handed to the extractor). `earlier_user`: the
        user's earlier turns, against which the reply's echoes are recognised."""
        if self.use_llm():
            statement = self.distil(question, answer, notes)
            if statement:
                return statement, [Utterance("narrator", statement)]
        return self.round_text(question, answer, earlier_user)

    def distil(self, question: str, answer: str, notes: list[str]) -> str:
        prompt = render_prompt("dsmart_statement", question=question.strip(),
                               answer=answer.strip()[: self.config.max_answer_chars])
        try:
            text = self.llm.chat([Message("user", prompt)], temperature=self.config.temperature,
                                 max_tokens=96, stop=["\n\n", "\nQuestion:"]).text
        except LLMError as err:
            notes.append(f"statement generation failed ({err}); used the round text")
            return ""
        text = text.strip().removeprefix("Statement:").strip().strip('"').strip()
        if not text or len(text) > MAX_STATEMENT_CHARS or text.lower().startswith(("question:", "answer:")):
            notes.append(f"statement output unusable ({text[:80]!r}); used the round text")
            return ""
        return text

    def round_text(self, question: str, answer: str, earlier_user: str = "") -> tuple[str, list[Utterance]]:
        """The user's turn in full and the first sentences of the reply, each with its speaker, so
        first-person words resolve to the right participant."""
        sentences = split_sentences(answer)[: self.config.assistant_sentences]
        # The assistant's echoes of the user's turn in the first person are dropped, not extracted:
        # read as the assistant's they attach the user's facts to the assistant, and read as the
        # user's they would let a misremembered echo ("My name is Bob.") prune what the user said.
        echoes = [s for s in sentences if echoes_user(s, f"{earlier_user} {question}")]
        # The assistant's questions back assert nothing: "What's your favorite thing about being a
        # swimmer?" made the user's favourite thing a swimmer, "Have you thought about adopting a
        # greyhound?" a user who adopts one, and such lines came back as memory on later turns
        asked = [s for s in sentences if s not in echoes and s.rstrip().endswith("?")]
        reply = " ".join(s for s in sentences if s not in echoes and s not in asked)
        utterances = [u for u in (Utterance("user", question.strip()), Utterance("assistant", reply)) if u.text]
        statement = "\n".join(f"{u.speaker.capitalize()}: {u.text}" for u in utterances)
        if echoes:
            statement += "\n(not extracted, the assistant repeating the user in the first person: " + " ".join(echoes) + ")"
        if asked:
            statement += "\n(not extracted, the assistant's questions: " + " ".join(asked) + ")"
        return statement, utterances
