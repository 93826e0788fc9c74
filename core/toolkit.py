"""The toolkit a method works with (core.methods.Toolkit: the LLM behind its fair queue, the
sentence embedder, the DSM's recall ranker), and the LLM flags every command that builds one shares.

Library code below the command line: `python -m core` (core.cli), the benchmark runner
(core.benchmarks.request) and the lab scripts build their toolkit here, so none of them needs the
CLI's parser. `llm_settings_from_args` fills what a flag leaves unsaid from the WORKBENCH_LLM_*
variables, as the command line always has; `make_toolkit` reads no environment.
"""

from __future__ import annotations

import argparse
import os

from core.config import BACKENDS, LLMSettings, llm_settings_from


def add_llm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM (defaults from WORKBENCH_LLM_* variables, else the embedded Qwen2.5-Coder-1.5B)")
    g.add_argument("--backend", choices=list(BACKENDS), default=None,
                   help="local = embedded llama.cpp (default); transformers = HF model here; openai = an endpoint")
    g.add_argument("--model", default=None,
                   help="local: small | medium | large | default (= large) | path.gguf; transformers: HF id or folder; openai: model name")
    g.add_argument("--threads", type=int, default=None, help="local: CPU threads (default all cores)")
    g.add_argument("--n-ctx", type=int, default=None, help="local: context window per slot in tokens (default "
                   "WORKBENCH_LLM_N_CTX or 12288, which mem0's ~8,000-token prompt needs)")
    g.add_argument("--llm-seed", type=int, default=None,
                   help="local: sampling seed sent with every request, for a repeatable run (default: a new one each time)")
    g.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    g.add_argument("--strong", action=argparse.BooleanOptionalAction, default=None,
                   help="treat the LLM as able to follow the papers' free-text prompts")
    g.add_argument("--dtype", choices=["auto", "float32", "bfloat16"], default=None,
                   help="local model weights (default auto: bfloat16 where the CPU/GPU computes it natively)")


def llm_settings_from_args(args: argparse.Namespace) -> LLMSettings:
    base = llm_settings_from(os.environ)
    backend = args.backend or ("openai" if args.base_url else base.backend)
    return LLMSettings(
        backend=backend,
        model=args.model if args.model is not None else (base.model if backend == base.backend else ""),
        base_url=args.base_url if args.base_url is not None else base.base_url,
        api_key=base.api_key,  # only from the environment: a key on the command line ends up in shell history
        strong=args.strong,
        dtype=getattr(args, "dtype", None) or base.dtype,
        threads=args.threads if getattr(args, "threads", None) is not None else base.threads,
        n_ctx=args.n_ctx if getattr(args, "n_ctx", None) is not None else base.n_ctx,
        seed=getattr(args, "llm_seed", None),
    )


def make_toolkit(settings: LLMSettings, with_embedder: bool = True, embedder: str = "", recall_embedder: str | None = None):
    """`embedder`: minilm, mpnet, a folder or HF id ("" = the default, core.embedders).
    `recall_embedder`: the DSM's recall ranker, loaded on first use (None = core.embedders.RECALL_EMBEDDER,
    "" = `embedder`)."""
    # imported here: listing commands or reading flags loads no model code
    from core.embedders import RECALL_EMBEDDER
    from core.llm import make_llm
    from core.llm.queued import queued
    from core.methods import Toolkit
    from core.resources import LazyEmbedder, load_embedder, load_shared_llm

    llm = make_llm(settings) if settings.backend == "openai" else load_shared_llm(settings)
    llm = queued(llm, settings, per_owner=settings.slots)  # alone on the model: every slot is the command's
    if not with_embedder:
        return Toolkit(llm=llm, strong=settings.is_strong)
    recall = RECALL_EMBEDDER if recall_embedder is None else recall_embedder
    return Toolkit(llm=llm, embedder=load_embedder(embedder), strong=settings.is_strong,
                   recall_embedder=LazyEmbedder(recall) if recall else None)
