"""Off-turn replies: a reply that answers the user's previous message instead of this one.

A small reader shown the turn before the question sometimes answers that turn again: asked how to
sleep better right after a question about painting a bedroom, it gave painting steps
(docs/dsm-memory.md). The lexical checks of core.metrics.reply_defects cannot see this, so it is
judged by meaning: the reply is off-turn when its embedding is nearer to the user's previous message
than to the message it answers, by at least `MARGIN` in cosine. The margin leaves out follow-ups,
whose right answer is near both messages (a melatonin question after one on jet lag: 0.63 against
0.65 with MiniLM). A first message of a dialogue has no previous one and is never off-turn.

The embedder is fixed (`EMBEDDER`, MiniLM) so that runs of different methods, or with a different
retrieval embedder, are judged alike. Not part of the issue-39 bar (`defective`): reported beside it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

EMBEDDER = "minilm"
MARGIN = 0.05


def is_off_turn(reply: np.ndarray, message: np.ndarray, previous: np.ndarray, margin: float = MARGIN) -> bool:
    """`reply` nearer to `previous` than to `message` by `margin` (unit vectors: dot = cosine)."""
    return float(reply @ previous) - float(reply @ message) >= margin


def off_turn_flags(embedder, replies: Sequence[str], messages: Sequence[str], previous: Sequence[str],
                   margin: float = MARGIN) -> list[bool]:
    """For each reply, whether it is off-turn; an empty `previous` (a dialogue's first message) is
    never off-turn. `embedder.encode` returns unit vectors (core.resources.Embedder)."""
    if not (len(replies) == len(messages) == len(previous)):
        raise ValueError("replies, messages and previous messages must be as many")
    rows = [i for i, p in enumerate(previous) if p.strip() and replies[i].strip()]
    if not rows:
        return [False] * len(replies)
    vectors = embedder.encode([t for i in rows for t in (replies[i], messages[i], previous[i])])
    flags = [False] * len(replies)
    for k, i in enumerate(rows):
        r, m, p = vectors[3 * k: 3 * k + 3]
        flags[i] = is_off_turn(r, m, p, margin)
    return flags
