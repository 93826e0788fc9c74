"""How often a language identifier would call a recorded reply not in the user's language: the
measurement before a language check in the shared reply check (issue 52; docs/replies.md, "Run 6",
"A reply in another language").

    .venv/bin/python scripts/lab/reply_language_probe.py results/replies/chat/*/*.jsonl \
        --out results/replies/language-probe/recorded.json
    .venv/bin/python scripts/lab/reply_language_probe.py results/replies/chat/*/*.jsonl \
        --languages en,es,fr,de,it,pt,nl,pl,ru,zh,ja,ko,ar,hi,tr --out results/replies/language-probe/recorded-15.json
    PYTHONPATH=. .venv/bin/python scripts/lab/reply_language_probe.py results/replies/chat/*/*.jsonl --unit sentence \
        --min-words 4 5 6 8 --languages en,es,fr,de,it,pt,nl,pl,ru,zh,ja,ko,ar,hi,tr \
        --out results/replies/language-probe/sentences-15.json

(py3langid is a dependency since core/language.py; the first two runs were made before, with it
installed apart.)

Every `chat --script` transcript's replies (what was shown, and the method's own text where the
check changed it): the language py3langid gives the whole reply, against the one it gives the
user's messages of that dialogue put together. A reply counts when it has at least `--min-words`
words; replies of fewer are left out (short texts are identified unreliably). With `--unit
sentence` each sentence of a reply counts alone, as the reply check sees them (core.language).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import py3langid as langid

from core.text import split_sentences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--min-words", type=int, nargs="+", default=[3, 5, 8])
    parser.add_argument("--languages", default="", help="comma-separated ISO 639-1 codes the identifier may answer (default: all 97)")
    parser.add_argument("--unit", choices=("reply", "sentence"), default="reply",
                        help="identify whole replies, or each sentence (core.text.split_sentences) alone")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.languages:
        langid.set_languages(args.languages.split(","))
    out: dict = {"files": len(args.files), "languages": args.languages or "all", "unit": args.unit, "by_min_words": {}}
    rows = []
    for f in args.files:
        dialogues: dict[int, list[dict]] = defaultdict(list)
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if isinstance(r, dict) and "user" in r and "reply" in r:
                dialogues[r.get("dialogue", 0)].append(r)
        for d, turns in dialogues.items():
            user_lang = langid.classify(" ".join(t["user"] for t in turns))[0]
            for t in turns:
                for kind, reply in (("shown", t["reply"]), ("draft", t.get("draft") or "")):
                    texts = split_sentences(reply) if args.unit == "sentence" else [reply]
                    rows += [{"file": f"{f.parent.name}/{f.name}", "dialogue": d, "turn": t.get("turn"),
                              "kind": kind, "user_lang": user_lang, "lang": langid.classify(text)[0],
                              "words": len(text.split()), "text": text[:160]} for text in texts if text.strip()]
    out["replies" if args.unit == "reply" else "sentences"] = sum(r["kind"] == "shown" for r in rows)
    out["user_languages"] = dict(Counter(r["user_lang"] for r in rows if r["kind"] == "shown"))
    for n in args.min_words:
        shown = [r for r in rows if r["kind"] == "shown" and r["words"] >= n]
        other = [r for r in shown if r["lang"] != r["user_lang"]]
        out["by_min_words"][str(n)] = {
            "replies": len(shown), "other_language": len(other),
            "languages": dict(Counter(r["lang"] for r in other)),
            "by_file": dict(Counter(r["file"] for r in other).most_common(10)),
            "examples": [{k: r[k] for k in ("file", "dialogue", "turn", "lang", "text")} for r in other[:40]],
        }
    text = json.dumps(out, indent=1, ensure_ascii=False)
    print(json.dumps({k: v for k, v in out.items() if k != "by_min_words"}, indent=1))
    for n, v in out["by_min_words"].items():
        print(n, v["replies"], v["other_language"], v["languages"], v["by_file"])
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
