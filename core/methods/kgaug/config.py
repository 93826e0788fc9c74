"""Settings of KG augmentation (Triton / Triton-C), with the paper's defaults (top 5 triples)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.config import GenerationSettings
from core.methods.kgaug.candidates import CandidateSettings
from core.methods.kgaug.linking import LinkerSettings
from core.methods.kgaug.sources import KGSources, opendialkg_sources

RankerName = Literal["bm25", "kaping", "triton", "triton-ce"]
RewriteMode = Literal["none", "auto", "llm", "symbolic"]
RANKERS = ("bm25", "kaping", "triton", "triton-ce")


@dataclass(frozen=True)
class KGAugConfig:
    # Knowledge graph inputs; default: the shared OpenDialKG files that exist on this machine.
    sources: KGSources = field(default_factory=opendialkg_sources)
    ranker: RankerName = "triton"
    # Triton-C rewrites the dialogue first. auto = the paper's LLM prompt with a strong model, the
    # symbolic pronoun rewrite with a weak one.
    rewrite: RewriteMode = "none"
    top_k: int = 5  # the paper: at most 5 triples in the prompt
    linker: LinkerSettings = LinkerSettings()
    candidates: CandidateSettings = CandidateSettings()
    triton_model: str = ""  # the `triton` ranker's model; "" = assets/models/triton-relevance-features
    relevance_model: str = ""  # the `triton-ce` cross-encoder; "" = assets/models/triton-relevance-minilm
    quantize: bool = True  # int8 dynamic quantisation of the relevance model on CPU
    cache_dir: str = ""  # "" = ~/.cache/dialogue-workbench/kg
    history_turns: int = 6  # dialogue turns shown in the generation prompt (and read by the rewrite)
    generation: GenerationSettings = GenerationSettings()
