"""Method registry. Each entry maps a short name to "module:Class"; modules load on first use so
that listing methods imports nothing heavy. A new method adds one line here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from core.methods.method import Method, Progress, ReplyStream, Toolkit

if TYPE_CHECKING:  # the type alone: listing methods imports no method
    from core.methods.sgmem.config import SGMemConfig

METHODS: dict[str, str] = {
    "base": "core.methods.base:PlainMethod",
    "rag": "core.methods.rag:RagMethod",
    "dsm": "core.methods.dsmart.dsm_method:DsmMethod",
    "dsmart": "core.methods.dsmart.tree_methods:DsmartMethod",
    "rt": "core.methods.dsmart.tree_methods:RtMethod",
    "sgmem": "core.methods.sgmem.method:SGMemMethod",
    "sgmem-h": "core.methods.sgmem.method:SGMemHybridMethod",  # not in the paper: hybrid BM25 + dense seeds
    "mcts": "core.methods.mcts.method:MCTSMethod",
    "kgaug": "core.methods.kgaug.method:KGAugMethod",
    "kgaug-c": "core.methods.kgaug.method:KGAugCMethod",
    "mem0": "core.methods.mem0.method:Mem0Method",  # a peer: the mem0ai library (not from the papers)
}


def method_class(name: str) -> type[Method]:
    try:
        target = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(METHODS)}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def create_method(name: str, tools: Toolkit, config=None) -> Method:
    return method_class(name)(tools, config)


def sgmem_settings(preset: str, embedder_name: str) -> SGMemConfig:
    """SGMem's settings for a dataset preset ("locomo", "longmemeval"), calibrated for the embedder
    (core.methods.sgmem.calibration): what a page starts its SGMem sliders from. Pages reach a
    method's internals only through this registry; SGMem loads on the first call, as a method does."""
    from core.methods.sgmem.calibration import sgmem_settings as calibrated

    return calibrated(preset, embedder_name)


__all__ = ["METHODS", "Method", "Progress", "ReplyStream", "Toolkit", "create_method", "method_class", "sgmem_settings"]
