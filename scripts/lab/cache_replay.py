"""How many prompt tokens each reply's answer prompt leaves the server to compute, per method, under
the checked-out prompt layout: a replay of recorded replies, no text generated (issue 53).

Each method chats through a `chat --script` file again, but its answer is the reply an earlier run
recorded (`--records`, a `bench replies` items.jsonl: the same history for every layout); every
other LLM call (the DSM's checks, the tree's scoring) goes to the embedded model. The answer
prompts are tokenized with the model's own chat template, and each is compared with the cache the
slot holds after the reply before: that reply's prompt and the tokens it generated (the method's
own text, `draft`, where the reply check changed it). Computed = the prompt's tokens past the
longest shared prefix. That is what llama.cpp's prompt cache reuses when one conversation keeps its
slot; the server's own counts (`chat --script`'s `prompt_computed`) are the live figure.

Run from a checkout (its `core` is the one measured; an earlier commit's checkout gives the before):

    PYTHONPATH=. .venv/bin/python scripts/lab/cache_replay.py --script benchmarks/memory_long_dev.jsonl \
        --records base=results/replies/check-long-large/items.jsonl --out results/cache-layout/replay-after.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from core.chat import read_script
from core.config import LLMSettings
from core.dialogue import ASSISTANT, USER, Dialogue, Turn
from core.llm.base import LLM, Completion
from core.methods import Toolkit, create_method
from core.toolkit import make_toolkit


class ReplayLLM(LLM):
    """The recorded reply for the answer (a chat whose last message holds the question); every other
    call to `real`. Keeps each answer prompt."""

    def __init__(self, real: LLM) -> None:
        super().__init__()
        self.real, self.name = real, real.name
        self.answer, self.query = "", ""
        self.prompts: list = []

    def _complete(self, batch, temperature, max_tokens, stop):
        out = []
        for messages in batch:
            if self.query and self.query in messages[-1].content:
                self.prompts.append(list(messages))
                out.append(Completion(self.answer, self.name, 0.0, 0, 0))
            else:
                out.extend(self.real._complete([messages], temperature, max_tokens, stop))
        return out

    def _score(self, messages, candidates):
        return self.real._score(messages, candidates)

    def _json_text(self, messages, schema, temperature, max_tokens):
        return self.real._json_text(messages, schema, temperature, max_tokens)


def dialogues_of(steps) -> list[list[str]]:
    out: list[list[str]] = []
    for step in steps:
        if step.new_dialogue or not out:
            out.append([])
        if step.user:
            out[-1].append(step.user)
    return [d for d in out if d]


def shared_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def replay(method_name: str, tools: Toolkit, real, dialogues: list[list[str]], records: dict) -> list[dict]:
    rows = []
    for d, users in enumerate(dialogues):
        llm = ReplayLLM(real)
        method = create_method(method_name, Toolkit(llm=llm, embedder=tools.embedder, strong=tools.strong,
                                                    recall_embedder=tools.recall_embedder))
        dialogue, cache = Dialogue(), []
        for t, user in enumerate(users):
            rec = records[(d, t)]
            llm.answer, llm.query = rec.get("draft") or rec["reply"], user
            method.wait()
            method.respond(dialogue, user)
            ids = real.prompt_ids(llm.prompts[-1])
            reused = shared_prefix(cache, ids)
            rows.append({"dialogue": d, "turn": t, "prompt_tokens": len(ids), "reused": reused, "computed": len(ids) - reused})
            cache = ids + real.tokenize(llm.answer)
            for turn in (dialogue.add(Turn(USER, user)), dialogue.add(Turn(ASSISTANT, rec["reply"]))):
                method.observe(turn)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", action="append", required=True, help="METHOD=items.jsonl (repeat)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    dialogues = dialogues_of(read_script(args.script))
    tools = make_toolkit(LLMSettings())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = {"command": " ".join(["scripts/lab/cache_replay.py", *sys.argv[1:]]), "commit": commit, "model": tools.llm.name,
           "methods": {}}
    for spec in args.records:
        method, path = spec.split("=", 1)
        rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
        records = {(r["dialogue"], r["turn"]): r for r in rows if r.get("method", method) == method}
        replies = replay(method, tools, tools.llm, dialogues, records)
        later = replies[1:]
        out["methods"][method] = {
            "records": path, "replies": len(replies),
            "median_computed_after_first": statistics.median(r["computed"] for r in later),
            "median_reused_after_first": statistics.median(r["reused"] for r in later),
            "median_prompt_tokens_after_first": statistics.median(r["prompt_tokens"] for r in later),
            "rows": replies}
        print(method, {k: v for k, v in out["methods"][method].items() if k != "rows"}, file=sys.stderr, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
