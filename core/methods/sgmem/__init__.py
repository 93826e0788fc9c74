"""SGMem: sentence graph memory (Wu et al., 2025). See config (paper defaults), graph (KNN sentence
graph), retriever (section 3.4), memory (generated summaries, facts, insights) and method (chat)."""

from core.methods.sgmem.config import DATASET_DEFAULTS, LOCOMO_DEFAULTS, LONGMEMEVAL_DEFAULTS, SGMemConfig
from core.methods.sgmem.graph import SentenceGraph
from core.methods.sgmem.retriever import SGMemHits, SGMemRetriever

__all__ = ["DATASET_DEFAULTS", "LOCOMO_DEFAULTS", "LONGMEMEVAL_DEFAULTS", "SGMemConfig", "SGMemHits",
           "SGMemRetriever", "SentenceGraph"]
