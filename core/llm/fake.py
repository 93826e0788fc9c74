"""A scripted LLM for tests: replies come from a queue or a rule, and every call is recorded."""

from __future__ import annotations

from collections import deque
from typing import Callable, Sequence

from core.llm.base import LLM, Completion, Message, cut_at_stop


class ScriptedLLM(LLM):
    """`replies`: strings returned in order (the last repeats when exhausted), or a function of
    the messages. `scorer`: a function (messages, candidate) -> log-likelihood; default prefers
    candidates sharing words with the last message."""

    name = "scripted"
    supports_scoring = True

    def __init__(
        self,
        replies: Sequence[str] | Callable[[list[Message]], str] = ("OK",),
        scorer: Callable[[list[Message], str], float] | None = None,
    ) -> None:
        super().__init__()
        self._rule = replies if callable(replies) else None
        self._queue = deque([] if callable(replies) else list(replies))
        self._last = "OK" if callable(replies) or not replies else replies[-1]
        self._scorer = scorer or _overlap_score
        self.requests: list[list[Message]] = []

    def _next(self, messages: list[Message]) -> str:
        if self._rule is not None:
            return self._rule(messages)
        return self._queue.popleft() if self._queue else self._last

    def _complete(self, batch, temperature, max_tokens, stop) -> list[Completion]:
        out = []
        for messages in batch:
            self.requests.append(messages)
            out.append(Completion(self._next(messages), self.name, 0.0))
        return out

    def _stream(self, messages, *, temperature=0.8, max_tokens=200, stop=None, cancel=None):
        """Word by word, so callers' streaming paths run in tests."""
        import re

        self._count(1)
        text = cut_at_stop(self._complete([messages], temperature, max_tokens, stop)[0].text, stop).strip()
        for piece in re.findall(r"\S+\s*", text) or [text]:
            if cancel is not None and cancel.is_set():
                return
            yield piece

    def count_tokens(self, text: str) -> int:
        """Words: deterministic counts for tests of the cost meters."""
        return len(text.split())

    def _score(self, messages, candidates) -> list[float]:
        self.requests.append(messages)
        return [self._scorer(messages, c) for c in candidates]


def _overlap_score(messages: list[Message], candidate: str) -> float:
    words = set(messages[-1].content.lower().split())
    hits = sum(w in words for w in candidate.lower().split())
    return float(hits) * max(1, len(candidate)) - 0.01 * len(candidate)
