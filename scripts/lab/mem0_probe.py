"""mem0 on the embedded model: three rounds of a short chat added in this thread, each round's
mem0 events, tokens, seconds and failures, then two searches (docs/peers.md).

    .venv/bin/python scripts/lab/mem0_probe.py --n-ctx 12288            # Qwen2.5-Coder-0.5B
    .venv/bin/python scripts/lab/mem0_probe.py --n-ctx 12288 --model small   # SmolLM2-135M
    .venv/bin/python scripts/lab/mem0_probe.py --n-ctx 4096             # the default window
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.config import LLMSettings  # noqa: E402
from core.dialogue import Dialogue, Turn  # noqa: E402
from core.methods import create_method  # noqa: E402
from core.toolkit import make_toolkit  # noqa: E402

ROUNDS = [("Hi! I'm Dana, I just moved to Lisbon for a job at a bakery.", "Welcome to Lisbon, Dana! How's the bakery?"),
          ("It's great. My sister Mia visits next week; she is allergic to nuts.", "Good to know, I'll keep that in mind."),
          ("Actually I moved again, I live in Porto now.", "Porto is lovely!")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--model", default="")
    args = p.parse_args()
    tools = make_toolkit(LLMSettings(backend="local", n_ctx=args.n_ctx, model=args.model))
    m = create_method("mem0", tools)
    m.config = replace(m.config, background=False)
    d = Dialogue()
    for user, reply in ROUNDS:
        t0 = time.perf_counter()
        m.observe(d.add(Turn("user", user)))
        m.observe(d.add(Turn("assistant", reply)))
        print(json.dumps({"wall_s": round(time.perf_counter() - t0, 2), **asdict(m.records[-1])}), flush=True)
    for q in ["Where does Dana live?", "What is Mia allergic to?"]:
        print(json.dumps({"query": q, "found": [(e.text, round(e.score, 3)) for e in m.search(q, 5)]}), flush=True)
    print(json.dumps(m.stats()))


if __name__ == "__main__":
    main()
