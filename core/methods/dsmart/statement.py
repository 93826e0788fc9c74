"""Structured statement generation s_t ~ p_theta(s_t | h_t) (Appendix E prompt), or the round's
own sentences when the LLM is too weak to distil them (DSMConfig.statements)."""

from __future__ import annotations

from core.llm.base import LLM, LLMError, Message
from core.llm.prompts import render_prompt
from core.methods.dsmart.config import DSMConfig
from core.methods.dsmart.extract import Utterance
from core.text import split_sentences

MAX_STATEMENT_CHARS = 600


class StatementMaker:
    def __init__(self, llm: LLM | None, strong: bool, config: DSMConfig) -> None:
        self.llm = llm
        self.strong = strong
        self.config = config

    def use_llm(self) -> bool:
        mode = self.config.statements
        return self.llm is not None and (mode == "llm" or (mode == "auto" and self.strong))

    def make(self, question: str, answer: str, notes: list[str]) -> tuple[str, list[Utterance]]:
        """(statement shown in the history, utterances handed to the extractor)."""
        if self.use_llm():
            statement = self.distil(question, answer, notes)
            if statement:
                return statement, [Utterance("narrator", statement)]
        return self.round_text(question, answer)

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

    def round_text(self, question: str, answer: str) -> tuple[str, list[Utterance]]:
        """The user's turn in full and the first sentences of the reply, each with its speaker, so
        first-person words resolve to the right participant."""
        reply = " ".join(split_sentences(answer)[: self.config.assistant_sentences])
        utterances = [u for u in (Utterance("user", question.strip()), Utterance("assistant", reply)) if u.text]
        statement = "\n".join(f"{u.speaker.capitalize()}: {u.text}" for u in utterances)
        return statement, utterances
