"""One-off check (issue 32): does `base` answer the user about the user ("You live in Lisbon"), or
repeat the user's facts in its own voice ("I live in Lisbon")? Five short dialogues, each played
with the old and the new chat system prompt, `reps` times, with the embedded default model at the
base method's settings (temperature 0.8). Writes every reply and the counts to --out.

    .venv/bin/python scripts/lab/chat_voice.py --reps 2 --out results/chat-voice-qwen05.json
"""

from __future__ import annotations

import argparse
import json
import re
import time

from core.config import BaseConfig
from core.dialogue import ASSISTANT, USER, Turn
from core.llm.llamacpp import LlamaCppLLM, LlamaCppOptions
from core.llm.prompts import load_prompt
from core.methods.layout import layout_prompt
from core.paths import portable_path

BEFORE = ("You are a helpful, consistent assistant in a multi-turn conversation. Answer the user's latest message. "
          "Stay consistent with what was said earlier in the conversation.")
# (user turns; for each question, the user's fact words a reply must not claim in the first person)
DIALOGUES = [
    (["Hi, my name is Alice and I live in Lisbon.", "Where do I live?", "What is my name?"], ["Lisbon", "Alice"]),
    (["I work as a nurse in Toronto.", "What is my job?"], ["nurse"]),
    (["My dog is called Rex and he is three years old.", "How old is my dog?"], ["three|3"]),
    (["I'm Tom. I was born in 1990 and I play the cello.", "What instrument do I play?", "When was I born?"], ["cello", "1990"]),
    (["My favourite food is sushi and I'm allergic to peanuts.", "What am I allergic to?"], ["peanut"]),
]
FIRST_PERSON = re.compile(r"\b(I|I'm|I am|my|me|mine)\b")
SECOND_PERSON = re.compile(r"\b(you|your|you're|yours)\b", re.IGNORECASE)


def voice(reply: str, fact: str) -> str:
    """'user-as-I' when a sentence states the fact in the first person without addressing the
    user; 'second-person' when a sentence with the fact says you/your; else 'other'."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", reply) if re.search(fact, s, re.IGNORECASE)]
    if any(FIRST_PERSON.search(s) and not SECOND_PERSON.search(s) for s in sentences):
        return "user-as-I"
    if any(SECOND_PERSON.search(s) for s in sentences):
        return "second-person"
    return "other"


def play(llm, system: str, turns: list[str], facts: list[str], gen) -> list[dict]:
    history: list[Turn] = []
    out = []
    for i, text in enumerate(turns):
        messages = layout_prompt(system, history, text, gen.max_history_chars)
        reply = llm.chat(messages, temperature=gen.temperature, max_tokens=60).text.strip()
        history += [Turn(USER, text), Turn(ASSISTANT, reply)]
        if i > 0:
            out.append({"question": text, "reply": reply, "voice": voice(reply, facts[i - 1])})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    llm = LlamaCppLLM(LlamaCppOptions(model="default"))
    gen = BaseConfig().generation
    report = {"model": llm.label, "temperature": gen.temperature, "max_tokens": 60, "reps": args.reps,
              "date": time.strftime("%Y-%m-%d"), "prompts": {}}
    for name, system in (("before", BEFORE), ("after", load_prompt("chat_system").strip())):
        answers = [a for _ in range(args.reps) for turns, facts in DIALOGUES for a in play(llm, system, turns, facts, gen)]
        counts = {v: sum(a["voice"] == v for a in answers) for v in ("user-as-I", "second-person", "other")}
        report["prompts"][name] = {"system": system, "answers": len(answers), "counts": counts, "replies": answers}
        print(name, counts, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
        print("written", portable_path(args.out))


if __name__ == "__main__":
    main()
