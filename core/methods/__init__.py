"""Method registry. Each entry maps a short name to "module:Class"; modules load on first use so
that listing methods imports nothing heavy. A new method adds one line here."""

from __future__ import annotations

import importlib

from core.methods.method import Method, Progress, ReplyStream, Toolkit

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


__all__ = ["METHODS", "Method", "Progress", "ReplyStream", "Toolkit", "create_method", "method_class"]
