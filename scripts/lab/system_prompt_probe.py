"""One-off check (issue 39): what the embedded model answers to a first message under different
system prompts, greedy and at the chat temperature 0.8. The rule-laden prompt of deff1f0 is kept
here verbatim (the package's chat_system changed after this probe).

    PYTHONPATH=. .venv/bin/python scripts/lab/system_prompt_probe.py --model default

Measured 2026-11-27 (2-core CPU, quiet): docs/replies.md, "The opening of the system prompt".
"""

from __future__ import annotations

import argparse
import time

from core.llm.base import Message
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions

RULES_DEFF1F0 = (
    "You are a helpful, consistent assistant in a multi-turn conversation with a user. The user's messages are "
    "written by the user about themselves: \"I\", \"me\" and \"my\" in them mean the user, not you. Reply to the user "
    "in the second person: say \"you\" and \"your\" for the user's own facts (for example \"Your name is X.\" or "
    "\"You live in Y.\", never \"My name is X.\"), and use \"I\" only for yourself, the assistant. Answer the user's "
    "latest message. Stay consistent with what was said earlier in the conversation.")
SYSTEMS = {
    "rules (deff1f0)": RULES_DEFF1F0,
    "qwen's own": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
    "plain": "You are a helpful assistant.",
    "none (the template's default)": None,
}
MESSAGES = ["Hi, I'm Marta. I live in Porto and I have a dog called Rex.", "Say hello.",
            "My sister Ana moved to Lisbon last year and works as a nurse."]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    llm = LlamaCppLLM(LlamaCppOptions(model=args.model))
    for name, system in SYSTEMS.items():
        for temperature in (0.0, 0.8):
            for text in MESSAGES:
                messages = ([Message("system", system)] if system else []) + [Message("user", text)]
                t0 = time.perf_counter()
                reply = llm.chat(messages, temperature=temperature, max_tokens=80).text
                print(f"[{name}, t={temperature}, {time.perf_counter() - t0:.1f} s] {text[:30]!r} -> {reply!r}")


if __name__ == "__main__":
    main()
