"""MCTS-driven reasoning-aware knowledge retrieval (Liu et al., "Reasoning in Action"). See config
(paper defaults), kb (GenericsKB loader and cache), groups (k-means node groups), reasoner (LLM in
place of COMET, DPP), critics, search (PUCT without rollouts), retriever (both phases), baselines,
memory (MCTS over a dialogue's own sentences) and method (the `mcts` chat method)."""

from core.methods.mcts.config import ABLATIONS, RELATIONS, MCTSConfig

__all__ = ["ABLATIONS", "MCTSConfig", "RELATIONS"]
