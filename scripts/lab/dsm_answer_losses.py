"""Where each memory answer is lost, for `dsm` and `dsmart` (issue 40, docs/dsm-memory.md).

Runs a `chat --script` file exactly as `python -m core chat --method M --script FILE` does (the same
ChatSession, one reply per user turn, memory maintained after each) and, for every turn with
expected answers, checks whether one of them is

  (a) in the graph the reply read: a fact's labels ("triple"), or the user turn text of a round
      whose facts are still in the graph ("source");
  (b) in what the reply reached (its evidence: the tree's facts for dsmart, the facts or
      sentences the prompt shows for dsm);
  (c) in the answer prompt (every message, the question's own words left out);
  (d) in the reply (the `chat` scorer: case-insensitive substring).

With `--replay RECORDS` the assistant turns come from an earlier run's chat records (any method; a
`bench replies` items.jsonl with `--replay-method M`)
and only the turns with expected answers are answered by the method: every variant reads the same
transcript, and a run costs 18 answers instead of 84 replies (the 2 shared cores of 2026-11-27 did
not allow a full `chat` run per variant). `--max-tokens` caps every reply as `chat --max-tokens`
does; the DSM reads only the first 3 sentences of a reply (DSMConfig.assistant_sentences).

With `--samples N` each answer prompt is answered N times at the method's temperature (the first is
the reply); `samples_correct` scores the method's own texts (before the chat's reply check), so a
prompt variant is compared on N x 18 answers rather than on 18 single draws.

A question is lost at the first stage that misses it, counted backwards from the reply: correct;
else "reply" when the prompt held it; else "prompt" when the evidence held it; else "reach" when
the graph held it; else "graph".

  nice -n 10 .venv/bin/python scripts/lab/dsm_answer_losses.py --methods dsm,dsmart \\
      --script benchmarks/memory_long_dev_dsmart.jsonl --out results/dsm-losses-after.json \\
      --records results/chat/dsm-losses-after
  .venv/bin/python scripts/lab/dsm_answer_losses.py --table results/dsm-losses-*.json   # the docs' table
  .venv/bin/python scripts/lab/dsm_answer_losses.py --ranks results/dsm-losses-rank-*.json   # the answer line's rank
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import get_args

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core import toolkit  # noqa: E402
from core.chat import ChatSession, read_script, run_script, scored, summarise, user_steps  # noqa: E402
from core.methods.dsmart.fragment import is_fact  # noqa: E402
from core.methods.dsmart.rt_llm import TurnsInAnswer  # noqa: E402
from core.methods.dsmart.vocab import label_of  # noqa: E402

STAGES = ("graph", "reach", "prompt", "reply")


class KeepingSession(ChatSession):
    """A ChatSession that keeps each reply and the memory it read (for the stage checks).
    `generate=False`: the answer's text is not written (stages a-c only; the reply is empty)."""

    generate = True
    samples = 1  # answers drawn from each answer prompt (the reply is the first)

    def new_dialogue(self) -> None:
        super().new_dialogue()
        method = self.method
        inner = method.respond_streaming
        write = method._write
        self.extra: list[str] = []
        if not self.generate:
            _set_write(method, lambda *args, **kwargs: "")
        elif self.samples > 1:
            # more draws from the same prompt: the server's prompt cache makes each cost only its
            # generated tokens, so a prompt's accuracy is measured on several samples, not one
            def sampled(messages, temperature, max_tokens):
                text = write(messages, temperature, max_tokens)
                self.extra = [write(messages, temperature, max_tokens) for _ in range(self.samples - 1)]
                return text

            _set_write(method, sampled)

        def keep(dialogue, query, stream):
            self.extra = []
            memory = getattr(method, "memory", None)
            self.read = (memory.graph, memory.history) if memory is not None else (None, ())
            self.last_reply = inner(dialogue, query, stream)
            return self.last_reply

        method.respond_streaming = keep


def _set_write(method, write) -> None:
    """Replace how `method` writes its answer's text: a tree method's is its responder's, given the
    method's `_write` when it was made, so both are replaced."""
    method._write = write
    responder = getattr(method, "responder", None)
    if responder is not None:
        responder.write = write


def replayed(session: KeepingSession, steps, transcript: dict):
    """`run_script`, with every turn that expects no answer taken from `transcript`
    ((dialogue, turn) -> reply) instead of answered."""
    for step in user_steps(session, steps):
        if not step.expect:
            session.replay(step.user, transcript[(session.dialogue_index, session.turn_index)])
            continue
        yield scored(session.send(step.user), step)


def has(text: str, expected: list[str]) -> bool:
    low = text.lower()
    return any(e.lower() in low for e in expected)


def graph_texts(graph, history) -> tuple[str, str]:
    """(the labels of every fact, the user turns of the rounds whose facts are still in the graph)."""
    if graph is None:
        return "", ""
    facts = [t for t in graph if is_fact(t)]
    labels = "\n".join(" | ".join(label_of(graph, term) for term in t) for t in facts)
    present = set(facts)
    sources = "\n".join(r.question for r in history if any(t in present for t in r.added if is_fact(t)))
    return labels, sources


def prompt_text(reply, query: str) -> str:
    messages = reply.trace.prompt if reply.trace is not None else ()
    return "\n".join(m["content"] for m in messages).replace(query, "")


def stage_of(row: dict) -> str:
    if row["reply"]:
        return "correct"
    if row["prompt"]:
        return "reply"
    if row["reached"]:
        return "prompt"
    if row["graph"]:
        return "reach"
    return "graph"


def run_method(name: str, tools, steps, records_dir: Path | None, pool: str = "", max_tokens: int = 0,
               transcript: dict | None = None, generate: bool = True, tree_weight: float | None = None,
               samples: int = 1, turns_in_answer: str = "") -> dict:
    config = None
    if (pool or tree_weight is not None or turns_in_answer) and name == "dsmart":  # dsmart's recall and answer prompt
        from dataclasses import replace

        from core.methods import method_class

        base = method_class(name).default_config()
        recall = replace(base.recall, **({"pool": pool} if pool else {}),
                         **({"tree_weight": tree_weight} if tree_weight is not None else {}))
        config = replace(base, recall=recall, **({"turns_in_answer": turns_in_answer} if turns_in_answer else {}))
    KeepingSession.generate = generate
    KeepingSession.samples = samples
    session = KeepingSession(name, tools, config, max_tokens=max_tokens)
    rows, records = [], []
    sink = None
    if records_dir is not None:
        records_dir.mkdir(parents=True, exist_ok=True)
        sink = open(records_dir / f"{name}.jsonl", "w", encoding="utf-8")
    for record in (replayed(session, steps, transcript) if transcript is not None else run_script(session, steps)):
        records.append(record)
        if sink is not None:
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
        if "expected" not in record:
            continue
        expected, reply = record["expected"], session.last_reply
        labels, sources = graph_texts(*session.read)
        row = {
            "dialogue": record["dialogue"], "question": record["user"], "expected": expected,
            "graph_triple": has(labels, expected), "graph_source": has(sources, expected),
            "reached": has("\n".join(e.text for e in reply.evidence), expected),
            "prompt": has(prompt_text(reply, record["user"]), expected),
            "reply": bool(record["correct"]),
            "evidence_items": len(reply.evidence), "prompt_chars": len(prompt_text(reply, record["user"])),
            "answer": reply.text, "memory": [e.text for e in reply.evidence],
            "messages": list(reply.trace.prompt) if reply.trace is not None else [],
        }
        if session.extra:
            row["samples"] = [reply.text, *session.extra]
            row["samples_correct"] = sum(has(t, expected) for t in row["samples"])
        row["graph"] = row["graph_triple"] or row["graph_source"]
        row["lost_at"] = stage_of(row)
        rows.append(row)
        print(f"{name} d{row['dialogue']} {row['lost_at']:8s} {row['question']} -> {reply.text[:80]!r}", flush=True)
    if sink is not None:
        sink.close()
    lost = {stage: sum(r["lost_at"] == stage for r in rows) for stage in (*STAGES, "correct")}
    drawn = {"samples": sum(len(r.get("samples", ())) for r in rows),
             "samples_correct": sum(r.get("samples_correct", 0) for r in rows)}
    return {**drawn, "summary": summarise(records), "lost_at": lost,
            "in_graph": sum(r["graph"] for r in rows), "in_graph_triple": sum(r["graph_triple"] for r in rows),
            "reached": sum(r["reached"] for r in rows), "in_prompt": sum(r["prompt"] for r in rows),
            "questions": rows}


def table(paths: list[str]) -> str:
    """The losses by stage of result files (this script's --out), one row per file and method."""
    lines = ["| run | method | correct | in graph (triple / any) | reached | in prompt | lost: graph | reach | prompt | reply |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for name, m in data["methods"].items():
            lost, n = m["lost_at"], len(m["questions"])
            lines.append(f"| {Path(path).stem} | {name} | {lost['correct']}/{n} | {m['in_graph_triple']} / {m['in_graph']} | "
                         f"{m['reached']} | {m['in_prompt']} | {lost['graph']} | {lost['reach']} | {lost['prompt']} | "
                         f"{lost['reply']} |")
    return "\n".join(lines)


def answer_rank(row: dict) -> int | None:
    """Where the first memory line holding an expected answer stands among the prompt's lines (1 =
    first; None: no line holds one)."""
    return next((n for n, line in enumerate(row.get("memory", []), 1) if has(line, row["expected"])), None)


def ranks(paths: list[str]) -> str:
    """How often the answer's line comes first, or in the first three, per result file and method."""
    lines = ["| run | method | answer's line first | in the first 3 | in the prompt's lines |", "| --- | --- | --- | --- | --- |"]
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for name, m in data["methods"].items():
            found = [answer_rank(r) for r in m["questions"]]
            n = len(found)
            lines.append(f"| {Path(path).stem} | {name} | {sum(r == 1 for r in found)}/{n} | "
                         f"{sum(r is not None and r <= 3 for r in found)}/{n} | {sum(r is not None for r in found)}/{n} |")
    return "\n".join(lines)


def command_line(argv: list[str]) -> str:
    """This run's command with repository paths relative (results hold no absolute path)."""
    from core.paths import portable_path

    out = []
    for arg in argv:
        out.append(portable_path(arg) if arg.startswith("/") else arg)
    return "python scripts/lab/dsm_answer_losses.py " + " ".join(out)


def main() -> int:
    if sys.argv[1:2] == ["--table"]:
        print(table(sys.argv[2:]))
        return 0
    if sys.argv[1:2] == ["--ranks"]:  # where the answer's line stands among the memory lines
        print(ranks(sys.argv[2:]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="dsm,dsmart")
    parser.add_argument("--script", default="benchmarks/memory_long_dev_dsmart.jsonl")
    parser.add_argument("--out", required=True, help="JSON: per method, the losses by stage and every question")
    parser.add_argument("--records", default=None, help="folder for each method's chat records (JSONL)")
    parser.add_argument("--pool", default="", choices=["", "graph", "reached"], help="dsmart's recall pool (default: its config)")
    parser.add_argument("--tree-weight", type=float, default=None, help="dsmart's RecallConfig.tree_weight (default: its config)")
    parser.add_argument("--max-tokens", type=int, default=0, help="bound on each reply (default: the method's)")
    parser.add_argument("--turns-in-answer", default="", choices=["", *get_args(TurnsInAnswer)],
                        help="dsmart's DsmartConfig.turns_in_answer (default: its config)")
    parser.add_argument("--samples", type=int, default=1, help="answers drawn from each answer prompt (scored: samples_correct)")
    parser.add_argument("--no-generate", action="store_true", help="build every answer prompt but write no answer (stages a-c)")
    parser.add_argument("--replay", default=None,
                        help="chat records whose replies stand for the turns without expected answers; 'empty': empty replies")
    parser.add_argument("--replay-method", default="",
                        help="--replay is a `bench replies` items.jsonl: the replies of this method only")
    parser.add_argument("--embedder", default="", help="sentence embedder (minilm, mpnet; default: the chat's)")
    parser.add_argument("--recall-embedder", default=None, help="the DSM's recall ranker (default: the chat's; '' = --embedder)")
    toolkit.add_llm_options(parser)
    args = parser.parse_args()
    steps = read_script(args.script)
    transcript = None
    if args.replay == "empty":  # every other turn answered by an empty reply: the user's words alone
        transcript = collections.defaultdict(str)
    elif args.replay:
        rows = [json.loads(line) for line in Path(args.replay).read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [r for r in rows if not args.replay_method or r.get("method") == args.replay_method]
        transcript = {(r["dialogue"], r["turn"]): r["reply"] for r in rows}
    tools = toolkit.make_toolkit(toolkit.llm_settings_from_args(args), embedder=args.embedder,
                                 recall_embedder=args.recall_embedder)
    out = {"command": command_line(sys.argv[1:]), "script": args.script, "model": tools.llm.name,
           "embedder": args.embedder, "recall_embedder": args.recall_embedder, "pool": args.pool,
           "tree_weight": args.tree_weight, "max_tokens": args.max_tokens,
           "replay": args.replay, "generate": not args.no_generate, "samples": args.samples,
           "turns_in_answer": args.turns_in_answer, "methods": {}}
    for name in args.methods.split(","):
        out["methods"][name] = run_method(name, tools, steps, Path(args.records) if args.records else None, args.pool,
                                         args.max_tokens, transcript, not args.no_generate, args.tree_weight, args.samples,
                                         args.turns_in_answer)
        m = out["methods"][name]
        print(json.dumps({"method": name, "correct": m["summary"]["correct"], "lost_at": m["lost_at"],
                          "samples_correct": f"{m['samples_correct']}/{m['samples']}"}), flush=True)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # after each method: a long run's first part is kept
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
