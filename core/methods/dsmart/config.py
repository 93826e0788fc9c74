"""D-SMART memory settings (frozen), with the paper's defaults where it has them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.config import GenerationSettings


@dataclass(frozen=True)
class DSMConfig:
    """How the Dynamic Structured Memory is maintained.

    statements: "llm" distils each round with the Appendix E prompt (the paper); "text" passes the
    round's own sentences to the extractor (the user's turn, the first `assistant_sentences` of the
    reply); "auto" uses the LLM when it is strong, else the text (a 135M model drops facts and
    costs 1-3 s a call); "fallback" passes the round's sentences and adds the LLM's statement
    only for a user turn that states something of which the rules kept no fact but types and bare
    adjectives (docs/dsm-memory.md: with the embedded models it adds no right fact, so it is not
    the default). extractor: "llm" (JSON triples, strong models), "spacy" (local parses), "union"
    (both, merged; the spaCy part alone when the LLM's JSON fails), "auto" (the LLM for strong
    models, else spaCy). llm_conflicts: stage (b) of conflict detection; "auto" runs it with strong models only
    (a weak model answers a likelihood-scored yes/no per candidate pair when "on").
    """

    statements: Literal["auto", "llm", "text", "fallback"] = "auto"
    extractor: Literal["auto", "llm", "spacy", "union"] = "auto"
    llm_conflicts: Literal["auto", "on", "off"] = "auto"
    # the LLM on candidate updates only (llm_updates.py): rounds where the symbolic path suspects an
    # update it could not type; off by default (docs/dsm-updates.md: measured on batches A-C and dev)
    llm_updates: Literal["on", "off"] = "off"
    reasoner: bool = True  # owlrl closure for disjointness errors and the consistency check
    # slot conflicts (slots.py): a restated count or habit prunes the old value when the two slot
    # descriptions share their content words or their embedding cosine reaches this threshold
    # (calibrated on the LongMemEval dev split, docs/dsm-updates.md: labelled candidate pairs have
    # positives from 0.45 up, negatives up to 0.34); None: vocabulary match only
    slot_threshold: float | None = 0.4
    assistant_sentences: int = 3
    max_answer_chars: int = 1500  # of the answer shown to the statement prompt
    temperature: float = 0.8  # the paper's setting outside RT state evaluation
    background: bool = True  # maintenance in a worker thread; replies read the last finished graph


@dataclass(frozen=True)
class RecallConfig:
    """What of the memory reaches the answer prompt (recall.py): the facts' source sentences, ranked
    by relevance to the question, as many as fit `budget_tokens` (the best one always).

    pool (dsmart): "graph" ranks the whole graph, the tree's values adding to the facts it reached
    (default: the tree's expansions list a node's facts nearest first and cut at
    `max_action_facts`, so a user fact said before much small talk is often not reached);
    "reached" ranks only the facts of the states the tree explored. tree_weight: how much a fact's
    tree value (0..1) adds to its similarity (cosines of the question with the sentence and fact)."""

    budget_tokens: int = 240
    pool: Literal["reached", "graph"] = "graph"
    tree_weight: float = 0.3


@dataclass(frozen=True)
class DsmMethodConfig:
    memory: DSMConfig = DSMConfig()
    recall: RecallConfig = RecallConfig()
    generation: GenerationSettings = GenerationSettings()
