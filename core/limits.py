"""Bounds on what a user may send. The chat page shows the limit, counts the characters in its box
as the limit nears and cuts a longer paste at the limit with a notice (`cut_message`); core checks again, so no other caller (a script, a future page) can hand a method a
100 KB message that would keep the server busy for minutes."""

from __future__ import annotations

MAX_MESSAGE_CHARS = 4000  # about 1,000 tokens: far more than a chat turn, far less than the model's window


class InvalidMessage(ValueError):
    """A message refused before any work is done; the text says why, for the page to show."""


def check_message_length(text: str, max_chars: int = MAX_MESSAGE_CHARS) -> None:
    if len(text) > max_chars:
        raise InvalidMessage(f"The message has {len(text):,} characters; the limit is {max_chars:,}. "
                             "Shorten it or split it over several turns.")


def clean_message(text: str | None, max_chars: int = MAX_MESSAGE_CHARS) -> str:
    """The message as it will be stored (outer whitespace stripped), or InvalidMessage saying why not."""
    if text is None or not text.strip():
        raise InvalidMessage("The message is empty: type something to send.")
    text = text.strip()
    check_message_length(text, max_chars)
    return text


def cut_message(text: str, max_chars: int = MAX_MESSAGE_CHARS) -> tuple[str, int]:
    """(the text cut to `max_chars` after its outer whitespace is stripped, how many characters were
    cut off). People paste documents: the chat keeps the first part and says what it dropped,
    where a box bounded by max_chars dropped the whole paste without a word."""
    text = text.strip()
    return text[:max_chars].rstrip(), max(0, len(text) - max_chars)
