"""Does the second try's note (prompts/reply_language.txt) bring a reply back to the user's
language with the default model? Replays the dialogue of a recorded transcript in which a method
answered in another language (run 6's `dsmart`, "Hola! I'm Rosa ...": Spanish in 13 of 15 replies),
with its replies as they were shown as the history, so every prompt holds the Spanish the model
would follow. For each turn whose recorded reply was in another language, `--samples` replies are
written at the chat temperature with `base`'s layout, as the reply round asks: once the prompt
alone (the first try), once the prompt and the note after it (the second try). Counts the replies
with a sentence not in the user's language (core.language.other_language). Issue 52;
docs/replies.md, "A reply in the user's language".

    PYTHONPATH=. .venv/bin/python scripts/lab/language_second_try.py \\
        --script benchmarks/conversational_long_dev.jsonl \\
        --records results/replies/chat/conversational-long-6/dsmart.jsonl --dialogue 4 \\
        --out results/replies/language-probe/second-try.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.benchmarks.replies import split_dialogues  # noqa: E402
from core.chat import read_script  # noqa: E402
from core.config import GenerationSettings, LLMSettings  # noqa: E402
from core.dialogue import Turn  # noqa: E402
from core.language import language_name, other_language, users_language  # noqa: E402
from core.llm.base import Message  # noqa: E402
from core.llm.prompts import render_prompt  # noqa: E402
from core.methods.layout import layout_prompt  # noqa: E402
from core.methods.render import chat_system  # noqa: E402
from core.text import split_sentences  # noqa: E402
from core.toolkit import make_toolkit  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--records", required=True)
    parser.add_argument("--dialogue", type=int, required=True)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    gen = GenerationSettings()
    llm = make_toolkit(LLMSettings()).llm
    steps = split_dialogues(read_script(args.script))[args.dialogue]
    replies = {r["turn"]: r["reply"] for r in map(json.loads, open(args.records, encoding="utf-8"))
               if r["dialogue"] == args.dialogue}
    rows = []
    for t, step in enumerate(steps):
        users = [s.user for s in steps[:t + 1]]
        language = users_language(users)
        if not other_language(split_sentences(replies.get(t, "")), language):
            continue  # the recorded reply was in the user's language: nothing to write again
        turns = [x for k, s in enumerate(steps[:t]) for x in (Turn("user", s.user), Turn("assistant", replies.get(k, "")))]
        prompt = layout_prompt(chat_system(gen.reply_sentences), turns, step.user, gen.max_history_chars)
        note = Message("system", render_prompt("reply_language", language=language_name(language)).strip())
        for kind, messages in (("first try", prompt), ("second try", [*prompt, note])):
            for k in range(args.samples):
                text = llm.chat(messages, temperature=gen.temperature, max_tokens=gen.max_tokens).text
                other = bool(other_language(split_sentences(text), language))
                rows.append({"turn": t, "try": kind, "sample": k, "user": step.user[:80], "other_language": other,
                             "reply": text})
                print(f"[{t} {kind} {k}] {'OTHER' if other else 'same '} {text[:100]!r}", flush=True)
    for kind in ("first try", "second try"):
        mine = [r for r in rows if r["try"] == kind]
        print(f"{kind}: {sum(r['other_language'] for r in mine)} of {len(mine)} replies with a sentence not in the user's language")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
