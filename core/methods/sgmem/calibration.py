"""Retrieval settings calibrated per embedder and chunk level on the LoCoMo dev split
(scripts/tune_retrieval.py over all seven dev conversations; figures in docs/embedders.md and
docs/retrieval.md).

- `sgmem-*` stays the paper's section 3.4 algorithm: dense seeds above gamma, h KNN hops, a chunk
  ranked by the MEAN similarity of its reached sentences. Only its limits (k, h, n, gamma) are
  calibrated here, since gamma is an absolute cosine value set for all-MiniLM-L6-v2's scale.
- `sgmem-*+h` (not in the paper): hybrid BM25 + dense sentence seeds and a chunk scored by its best
  reached sentence (aggregate `max`) or the sum over them (`sum`), as chosen per level on dev.
- `hybrid-*`: the fusion weights of the chunk-level BM25 + dense baseline.

An embedder without an entry gets the paper's values (`sgmem-*`) and MiniLM's choices for the
others. `retrieval_options` builds the `RetrieverContext.options` that the factories read: each
value is one setting for every level or a dict level -> setting (core.methods.sgmem.retriever).
"""

from __future__ import annotations

from dataclasses import replace

from core.methods.sgmem.config import DATASET_DEFAULTS, HYBRID_DEFAULTS, SGMemConfig
from core.retrieval.base import LEVELS
from core.retrieval.fusion import FusionSettings

MINILM, MPNET = "all-MiniLM-L6-v2", "all-mpnet-base-v2"

# (preset, embedder name) -> level -> overrides of the paper's limits for sgmem-* (mean aggregate kept).
SGMEM: dict[tuple[str, str], dict[str, dict]] = {
    ("locomo", MINILM): {
        "turn": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
        "round": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
        "session": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
    },
    ("locomo", MPNET): {
        "turn": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
        "round": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
        "session": {"knn_k": 1, "hops": 1, "max_sentences": 15, "gamma": 1.2},
    },
}
# embedder name -> level -> the hybrid-seed settings (sgmem-*+h), for every dataset (only LoCoMo has
# a dev split with realistic haystacks to tune on)
_H = {"knn_k": 1, "hops": 1, "max_sentences": 15, "aggregate": "max", "hybrid": FusionSettings("convex", dense_weight=0.7)}
# MiniLM: BM25 over whole chunks mixed into the graph's chunk score at 0.4 (one weight for every
# level: the best or within .005 of the best at each level on dev conv-26, 150 questions; 0.4 over 0
# gave turn .529/.520, round .633/.593, session .849/.804; `scripts/tune_retrieval.py --what
# chunkfusion`, results/tune-chunkfusion-minilm-conv26.json). mpnet was not re-tuned: 0 (graph alone).
SGMEM_HYBRID: dict[str, dict[str, dict]] = {
    MINILM: {level: dict(_H, chunk_bm25=0.4) for level in ("turn", "round", "session")},
    MPNET: {"turn": dict(_H), "round": dict(_H), "session": dict(_H)},
}
# embedder name -> level -> fusion of the chunk-level hybrid baseline (hybrid-*)
CHUNK_FUSION: dict[str, dict[str, FusionSettings]] = {
    MINILM: {level: FusionSettings("convex", dense_weight=0.5) for level in LEVELS},
    MPNET: {level: FusionSettings("convex", dense_weight=0.3) for level in LEVELS},
}


def sgmem_settings(preset: str, embedder_name: str, calibrated: bool = True, level: str = "") -> SGMemConfig:
    """sgmem-* for one level (default: the preset's own level): the paper's values, with the limits
    calibrated for this embedder unless `calibrated` is False."""
    base = DATASET_DEFAULTS[preset]
    level = level or base.chunk_level
    if not calibrated:
        return replace(base, chunk_level=level)
    return replace(base, chunk_level=level, **SGMEM.get((preset, embedder_name), {}).get(level, {}))


def sgmem_levels(preset: str, embedder_name: str, calibrated: bool = True) -> dict[str, SGMemConfig]:
    return {level: sgmem_settings(preset, embedder_name, calibrated, level) for level in LEVELS}


def hybrid_settings(embedder_name: str, level: str = "turn") -> SGMemConfig:
    table = SGMEM_HYBRID.get(embedder_name, SGMEM_HYBRID[MINILM])
    return replace(HYBRID_DEFAULTS, chunk_level=level, **table[level])


def chunk_fusion(embedder_name: str, level: str = "turn") -> FusionSettings:
    return CHUNK_FUSION.get(embedder_name, CHUNK_FUSION[MINILM])[level]


def retrieval_options(preset: str, embedder_name: str, calibrated: bool = True,
                      sgmem: SGMemConfig | dict | None = None) -> dict:
    """Options for the retriever factories: `sgmem` (the paper's algorithm; `sgmem` given = one
    setting for every level, e.g. the page's sliders), `sgmem+h` and `hybrid`, each per level."""
    return {"sgmem": sgmem if sgmem is not None else sgmem_levels(preset, embedder_name, calibrated),
            "sgmem+h": {level: hybrid_settings(embedder_name, level) for level in LEVELS},
            "hybrid": {level: chunk_fusion(embedder_name, level) for level in LEVELS}}
