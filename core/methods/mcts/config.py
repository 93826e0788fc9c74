"""Settings of the MCTS reasoning-aware knowledge retriever (Liu et al., "Reasoning in Action"),
with the paper's defaults (section IV-A) where it gives them.

Paper values: search horizon 3, 50 candidate sentences pruned by similarity, 5 sentences per
action, c_puct = 1/sqrt(2), lambda = -1000 on the Wasserstein distance, weight 0.1 on the
knowledge length. Everything else the paper leaves open; our choices are marked "ours" and
explained in docs/mcts.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.config import GenerationSettings
from core.paths import SHARED_DIR

DEFAULT_KB = SHARED_DIR / "data" / "genericskb" / "GenericsKB.txt"

# Table I of the paper: relation -> natural-language statement (COMET / ATOMIC-2020 relations).
RELATIONS: dict[str, str] = {
    "Causes": "causes",
    "xReason": "because",
    "HinderedBy": "can be hindered by",
    "IsBefore": "happens before",
    "IsAfter": "happens after",
    "xNeed": "but before, x needed",
    "xAttr": "X is seen as",
    "xEffect": "as a result, x will",
    "xReact": "as a result, x feels",
    "xWant": "as a result, x wants",
    "xIntent": "because x wanted",
}


@dataclass(frozen=True)
class ReasonerSettings:
    """The Diversity-Preserving Reasoner (section III-B). COMET is not available offline: the
    configured LLM completes "context + relation statement" instead (see reasoner.py)."""

    # Table I's 11 relations, in the order a time budget generates them (the paper gives no order):
    # most often picked first by the unbounded reasoner's DPP on 100 DailyDialog dev contexts (picks
    # of 300: xNeed 42, xIntent 42, IsBefore 40, xWant 35, xReason 24, xAttr 24, xEffect 22, xReact 21,
    # HinderedBy 15, Causes 13, IsAfter 13; results/knowledge-retrieval-dd-kb50k-100-unbounded.json's run, docs/mcts.md), so a
    # budget that leaves time for 6 drops those it would rarely have kept
    relations: tuple[str, ...] = ("xNeed", "xIntent", "IsBefore", "xWant", "xReason", "xAttr", "xEffect", "xReact",
                                  "HinderedBy", "Causes", "IsAfter")
    outcomes: int = 3  # ours: size of the DPP-selected subset R (the paper does not give it)
    max_tokens: int = 8  # ours: a COMET tail is a short phrase (the prompt asks for at most eight words)
    temperature: float = 0.0  # ours: greedy, one candidate per relation (deterministic, cacheable)
    context_turns: int = 3  # ours: the latest turns the LLM sees
    # ours: each context turn before the last is cut to its last `turn_words` words (0 = whole). COMET
    # reads one event; a chat's earlier replies run to 100-200 words, prompt tokens that every relation's
    # request pays for. On the knowledge-retrieval data 2 of 100 DailyDialog contexts and 7 of 100
    # EmpatheticDialogues ones have a longer turn there.
    turn_words: int = 40
    stop: tuple[str, ...] = ("\n",)  # ours: the cleaning keeps the first line anyway, so decoding stops there
    # ours: tau_r of a completion that echoed the prompt first is read from the generated tokens of
    # its tail (conditioned on the echo too: an approximation); True = a scoring pass, exact but
    # ~12 one-token requests per echoed relation (seconds on 2 cores)
    rescore_echoes: bool = False
    cache: bool = True  # reasoner outputs cached on disk by (model, prompt)
    # ours: wall-clock seconds for the relations' generations (0 = none: all 11, the paper's
    # reasoner); a round that would start after the budget is not sent and its relations are dropped,
    # noted in the trace. On 2 cores one relation takes ~0.4 s, so a reply gets about 6 of the 11 (3-11
    # on DailyDialog), the first ones of `relations`; a GPU server gets all of them (docs/mcts.md has
    # the quality rows).
    budget_s: float = 2.5
    # ours: relations sent at once. 1 = one after another: the server keeps them on one slot, whose
    # KV cache holds the shared conversation prefix, so it is computed once, not once per slot; on
    # CPU two sequences decode no faster together than in turn (docs/mcts.md). A GPU server gains
    # from larger rounds.
    round_size: int = 1


@dataclass(frozen=True)
class SearchSettings:
    """MCTS without rollouts (section III-C, IV-A)."""

    c_puct: float = 1 / math.sqrt(2)  # paper
    horizon: int = 3  # paper: at most three steps from the root
    candidates: int = 50  # paper: sentences pruned by similarity before the policy
    per_action: int = 5  # paper: each action returns 5 knowledge sentences (children per expansion)
    simulations: int = 24  # ours: selection-expansion-evaluation-backup rounds per tree
    max_seconds: float = 1.5  # ours: wall-clock budget per tree; the search returns what it has
    prior_temperature: float = 0.05  # ours: softmax temperature of the policy over cosine similarities


@dataclass(frozen=True)
class CriticSettings:
    wd_lambda: float = -1000.0  # paper: lambda on the Wasserstein distance (bridging critic)
    length_weight: float = 0.1  # paper: weight of the knowledge length (retrieval critic)
    length_norm_words: int = 20  # ours: |k| = min(1, words / 20), so the length term is at most 0.1


@dataclass(frozen=True)
class KBSettings:
    """The knowledge base and its on-disk cache."""

    path: str = str(DEFAULT_KB)
    concepts_per_group: int = 40  # ours: k-means clusters = concepts / 40 (FAISS's minimum points per centroid is 39)
    kmeans_iterations: int = 20
    seed: int = 1234
    max_concept_words: int = 4  # ours: longer noun chunks are kept only through their head noun
    batch_size: int = 256
    cache_dir: str = ""  # "" = the cache dir of core.paths (~/.cache/dialogue-workbench)
    embedding_cache: bool = True  # embeddings also go to the on-disk embedding cache: an interrupted build resumes
    # ours: processes for a build (1 = this process alone). N > 1: spaCy parses in N processes and N
    # workers embed, each at one torch thread (core.embed_pool); the KB is the same (vectors to ~1e-7)
    workers: int = 1


@dataclass(frozen=True)
class MCTSConfig:
    use_reasoner: bool = True  # False = the paper's "w/o Reasoner" ablation
    use_bridging: bool = True  # False = "w/o Concept Bridging": the whole KB is the search space
    top_k: int = 5  # knowledge sentences returned
    reasoner: ReasonerSettings = ReasonerSettings()
    search: SearchSettings = SearchSettings()
    critic: CriticSettings = CriticSettings()
    kb: KBSettings = KBSettings()
    recent_turns: int = 4  # chat: the latest turns form the context C and go into the prompt
    generation: GenerationSettings = field(default_factory=lambda: GenerationSettings(temperature=0.8, max_tokens=200))

    def __post_init__(self) -> None:
        s = self.search
        if s.horizon < 1 or s.candidates < 1 or s.per_action < 1 or s.simulations < 1:
            raise ValueError("MCTS needs horizon, candidates, per_action and simulations >= 1")
        if self.top_k < 1:
            raise ValueError("top_k must be >= 1")
        unknown = set(self.reasoner.relations) - set(RELATIONS)
        if unknown:
            raise ValueError(f"unknown relations {sorted(unknown)}; Table I has {', '.join(RELATIONS)}")


ABLATIONS = {
    "mcts": MCTSConfig(),
    "mcts-no-reasoner": MCTSConfig(use_reasoner=False),
    "mcts-no-bridging": MCTSConfig(use_bridging=False),
}
