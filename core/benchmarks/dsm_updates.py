"""D-SMART memory on LongMemEval knowledge updates: latest value kept, stale value pruned, time per turn.

For every `knowledge-update` question (abstention `_abs` questions have no update to check and are
skipped), the memory observes the question's sessions in date order, one maintenance round per
(user turn, reply). Then the final graph is checked:

- latest_kept: the answer (the value after the update) is in the graph, on a fact the question is
  about (its subject, relation or counted kind shares a content word with the question). Numeric
  answers ("25", "five", "3 months") must appear there as a typed number, clock times ("6:00 pm")
  as that xsd:time, times taken ("25 minutes and 50 seconds") as that xsd:dayTimeDuration; text answers must have all their content words among the objects of those
  facts.
- stale: the value before the update, read from the earliest evidence turn (the turn flagged
  `has_answer` in the earliest session): the number in its sentence closest to the question that
  differs from the answer. Found only for numeric answers with two dated evidence turns; the other
  questions count for latest_kept only.
- stale_removed: the stale number is on no question fact any more; stale_pruned: a pruned triple in
  the history carried it (it was extracted, then removed as a conflict).
- update_accuracy (questions with a stale value): latest_kept and stale_removed.
- beside them: latest_kept_checkable, latest_kept over the questions whose answer is a current
  value the check can find (not yes/no or a sentence, not a question about the value before the
  update), and earlier_in_history: for the questions asking for the value before the update, it is
  on a triple pruned in the history.

- answer_pruned: a current-value answer was extracted, pruned as a conflict, and is not in the
  graph. With `--question-type single-session-user` (nothing is updated there) this is the
  false-prune rate of the conflict stage.

Timings: `maintenance` per round (statement + extraction + conflict detection + merge + check) and
each stage. Options: --statements text|llm|auto, --extractor auto|llm|spacy|union,
--llm-conflicts auto|on|off, --no-reasoner.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from core.eval import BenchContext, BenchResult
from core.methods.dsmart.config import DSMConfig

DEFAULT_METHODS = "dsm"
STOPWORDS = frozenset(
    "a an the i my me we our you your he she it they them is are was were be been being have has had do does did "
    "how many much what which who whom where when why since before after to of in on at for with from by and or "
    "that this these those currently current now new recently last first ever so far total again time times "
    "did get got just about up down every dr mr mrs ms".split()  # 'every week' ~ 'week'; 'Dr. Kim' ~ 'Kim'
)
# what a question word asks for, in the graph's words: 'how old' asks for an age
QUESTION_SENSES = {"old": "age"}
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
TIMES_WORDS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}  # 'we've met up twice': a count of times
# a number standing alone: not the 80 of a model name '80D' nor the 70 of a lens '70-200mm'
_NUM = re.compile(r"(?<![A-Za-z\d-])\$?\d[\d,]*(?:\.\d+)?(?![A-Za-z\d]|-\d)")
_WORD = re.compile(r"[a-z0-9]+")
_FREQUENCY = re.compile(r"\b(?:a|an|per|each|every)\s+(?:other\s+)?(?:day|night|week|weekend|month|year)\b", re.I)


def add_arguments(parser) -> None:
    parser.add_argument("--statements", choices=["auto", "llm", "text"], default="text",
                        help="statement generation: the round's text (default, no LLM), the LLM prompt, or auto")
    parser.add_argument("--extractor", choices=["auto", "llm", "spacy", "union"], default="auto",
                        help="fragment extraction: spaCy rules (auto with a weak LLM), the LLM's JSON triples, or both")
    parser.add_argument("--llm-conflicts", choices=["auto", "on", "off"], default="off",
                        help="stage (b) LLM conflict detection (default off: symbolic only)")
    parser.add_argument("--no-reasoner", action="store_true", help="skip the owlrl closure checks")
    parser.add_argument("--assistant-sentences", type=int, default=3)
    parser.add_argument("--slot-threshold", type=float, default=None,
                        help="embedding cosine for slot conflicts (default: DSMConfig's); a negative value: "
                             "vocabulary match only, no embedder")
    parser.add_argument("--question-type", default="knowledge-update",
                        help="LongMemEval question type to read (default knowledge-update). On a type where nothing "
                             "is updated (single-session-user) answer_pruned counts false prunes: a true answer removed")
    parser.add_argument("--explain", action="store_true",
                        help="also write DIR/explain.md and DIR/explain.jsonl: per question the update sentence, "
                             "its triples, the conflicts found and the miss cause")


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and not w.isdigit()}


def question_words(question: str, nlp) -> set[str]:
    """Content words of the question, surface forms and lemmas ('lost' also as 'lose'): relation
    and kind labels in the graph are lemmas."""
    lemmas = " ".join(t.lemma_ for t in nlp(question))
    words = content_words(question) | content_words(lemmas)
    return words | {QUESTION_SENSES[w] for w in words if w in QUESTION_SENSES}


def stem(word: str) -> str:
    """Plural-insensitive key: 'postcards' ~ 'postcard', 'classes' ~ 'class', 'lives' ~ 'live'."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def numbers(text: str) -> list[float]:
    out = [float(m.group().lstrip("$").replace(",", "")) for m in _NUM.finditer(text)]
    words = _WORD.findall(text.lower())
    out += [float(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS]
    out += [TIMES_WORDS[w] for w in words if w in TIMES_WORDS]
    return out


def answer_number(answer: str) -> float | None:
    """The number an answer states: a short answer ('25', 'five', '3 months', '$400,000'); in a
    sentence, the value a change goes to ('You increased the limit (from one cup to two cups)') or
    the only number it has ("We've met up twice."). None for clock times and durations (see
    answer_time) and for answers with several numbers and no 'from ... to'."""
    if ":" in answer or _FREQUENCY.search(answer):
        return None  # 'three times a week' is a frequency phrase, checked as words
    found = numbers(answer)
    if len(answer.split()) > 3:
        change = re.search(r"\bfrom\b(.+?)\bto\b(.+)", answer)
        if change and numbers(change.group(1)) and len(numbers(change.group(2))) == 1:
            return numbers(change.group(2))[0]
    return found[0] if len(found) == 1 else None


def stale_sentence(instance) -> str:
    """The earliest evidence turn's sentence closest to the question ("" without two dated evidence
    sessions)."""
    from core.text import split_sentences

    turns = {t.turn_id: t for t in instance.dialogue.turns()}
    evidence = [turns[i] for i in instance.evidence_turn_ids if i in turns]
    sessions = {t.session for t in evidence}
    if len(sessions) < 2:
        return ""
    first = min(evidence, key=lambda t: t.session)
    question = content_words(instance.question)
    return max(split_sentences(first.text), key=lambda s: (len(content_words(s) & question), -len(s)), default="")


def stale_number(instance, latest: float) -> float | None:
    """The pre-update number, from the earliest evidence turn's sentence closest to the question:
    the first number other than the latest, preferring one counted in the answer's unit ('6 ounces'
    over '1 tablespoon' when the answer says '5 ounces')."""
    sentence = stale_sentence(instance)
    candidates = [n for n in numbers(sentence) if n != latest]
    unit = unit_after(str(instance.answer), latest)
    same_unit = [n for n in candidates if unit and unit_after(sentence, n) == unit]
    return (same_unit or candidates or [None])[0]


def unit_after(text: str, value: float) -> str:
    """The stemmed word right after the first digit-written occurrence of the value ('5 ounces' ->
    'ounce'); '' when there is none."""
    for m in re.finditer(r"\$?\d[\d,]*(?:\.\d+)?\s+([A-Za-z]+)", text):
        number = float(m.group().split()[0].lstrip("$").replace(",", ""))
        if number == value:
            return stem(m.group(1).lower())
    return ""


def label_of_safe(graph, term) -> str:
    from core.methods.dsmart.vocab import label_of

    return label_of(graph, term)


def words_of(graph, term) -> set[str]:
    """Content words of a node's or relation's label ('postcards (add)' -> postcard, add); the fixed
    vocabulary's camel-case names split ('livesIn' -> live), names of individuals do not ('TechCorp')."""
    from core.methods.dsmart.vocab import BASE

    label = label_of_safe(graph, term)
    if str(term).startswith(BASE):
        label = re.sub(r"([a-z])([A-Z])", r"\1 \2", label)
    return content_words(label)


def subject_words(graph, s) -> set[str]:
    """What a fact's subject is about: its label; for a Quantity also its counted kind and the edges
    that reach it ('user's commute --be--> minutes', 'user --weigh--> pounds'): a count is about
    whose it is and what was done."""
    from rdflib import RDF

    from core.methods.dsmart.vocab import DSM

    words = words_of(graph, s)
    kind = graph.value(s, DSM.ofKind)
    if kind is not None:
        words |= words_of(graph, kind)
    if (s, RDF.type, DSM.Quantity) in graph:
        for owner, p in graph.subject_predicates(s):
            words |= words_of(graph, owner) | words_of(graph, p)
    return words


def question_triples(graph, question: set[str]) -> list:
    """Facts the question is about: subject (see subject_words) or relation shares a content word
    with the question."""
    from core.methods.dsmart.fragment import is_fact

    return [(s, p, o) for s, p, o in graph
            if is_fact((s, p, o)) and (subject_words(graph, s) | words_of(graph, p)) & question]


def is_number(term, value: float) -> bool:
    from rdflib import Literal

    return isinstance(term, Literal) and isinstance(term.toPython(), (int, float)) and float(term.toPython()) == value


def number_on(triples, value: float) -> bool:
    return any(is_number(o, value) for _, _, o in triples)


def answer_time(answer: str):
    """The typed literal a time answer states: xsd:time for a clock time ('6:00 pm'), a duration for
    a time taken ('25 minutes and 50 seconds (or 25:50)'); None otherwise."""
    from core.methods.dsmart.values import duration_literal, time_literal

    text = re.sub(r"\(.*?\)", "", answer).strip().rstrip(".")
    return time_literal(text) or duration_literal(text)


def same_value(term, literal) -> bool:
    from rdflib import Literal

    return isinstance(term, Literal) and term.datatype == literal.datatype and term.toPython() == literal.toPython()


def text_on(graph, triples, answer: str) -> bool:
    wanted = content_words(answer)
    seen: set[str] = set()
    for _, _, o in triples:
        seen |= words_of(graph, o)
    return bool(wanted) and wanted <= seen


def pruned_number(memory, question: set[str], value: float) -> bool:
    """A triple pruned in the history carried the value, on a fact the question is about."""
    g = memory.graph  # labels and kinds stay when a value is pruned
    for record in memory.history:
        for p in record.pruned:
            s, pred, o = p.triple
            if not is_number(o, value):
                continue
            if (subject_words(g, s) | words_of(g, pred)) & question:
                return True
    return False


def rounds(dialogue):
    """(question, answer) pairs in order; a user turn with no reply gets an empty answer."""
    for group in dialogue.rounds():
        users = " ".join(t.text for t in group if t.role == "user")
        replies = " ".join(t.text for t in group if t.role != "user")
        yield users, replies


def run(ctx: BenchContext) -> BenchResult:
    from core.benchmarks import dsm_explain
    from core.data.longmemeval import load_longmemeval
    from core.methods.dsmart.memory import DynamicStructuredMemory
    from core.resources import load_embedder, load_spacy

    opts = ctx.options
    config = replace(DSMConfig(), statements=opts.get("statements", "text"), llm_conflicts=opts.get("llm_conflicts", "off"),
                     extractor=opts.get("extractor", "auto"),
                     reasoner=not opts.get("no_reasoner", False), assistant_sentences=opts.get("assistant_sentences", 3),
                     background=False)
    threshold = opts.get("slot_threshold")
    if threshold is not None:
        config = replace(config, slot_threshold=None if threshold < 0 else threshold)
    embedder = load_embedder() if config.slot_threshold is not None else None
    needs_llm = config.statements != "text" or config.llm_conflicts != "off" or config.extractor in ("llm", "union")
    tools = ctx.make_tools() if needs_llm and ctx.make_tools is not None else None
    nlp = load_spacy()
    question_type = opts.get("question_type") or "knowledge-update"
    instances = [i for i in load_longmemeval(ctx.data) if i.question_type == question_type and not i.abstention]
    if not instances:
        raise ValueError(f"no {question_type!r} questions (abstention ones skipped) in {ctx.data}")
    if ctx.limit:
        instances = instances[: ctx.limit]
    stages: dict[str, list[float]] = {}
    explanations: list[dict] = []
    tallies = {"latest": 0, "with_stale": 0, "stale_removed": 0, "stale_pruned": 0, "updated": 0, "rounds": 0, "pruned": 0,
               "answer_pruned": 0}
    kinds: Counter = Counter()
    kept_by_kind: Counter = Counter()
    for instance in _progress(instances, ctx):
        memory = DynamicStructuredMemory(tools.llm if tools else None, strong=bool(tools and tools.strong),
                                         config=config, nlp=nlp, embedder=embedder)
        with ctx.metered("dsm") as meter:
            for index, (q, a) in enumerate(rounds(instance.dialogue)):
                record = memory.observe_round(q, a, index)
                for stage, seconds in record.timings.items():
                    stages.setdefault(stage, []).append(seconds)
        item = evaluate(instance, memory, nlp)
        item.update(meter.total().as_dict())
        if opts.get("explain"):
            explanations.append(dsm_explain.explain(instance, memory, item, nlp))
            item["cause"] = explanations[-1]["cause"]
        ctx.write_item(item)
        tallies["latest"] += item["latest_kept"]
        kinds[item["answer_kind"]] += 1
        kept_by_kind[item["answer_kind"]] += item["latest_kept"] if item["answer_kind"] != "earlier" else item["earlier_in_history"]
        tallies["rounds"] += item["rounds"]
        tallies["pruned"] += item["pruned_triples"]
        tallies["answer_pruned"] += item["answer_pruned"]
        if item["stale"] is not None:
            tallies["with_stale"] += 1
            tallies["stale_removed"] += item["stale_removed"]
            tallies["stale_pruned"] += item["stale_pruned"]
            tallies["updated"] += item["latest_kept"] and item["stale_removed"]
    n, k = len(instances), max(1, tallies["with_stale"])
    results = {"dsm": {
        "update_accuracy": tallies["updated"] / k if tallies["with_stale"] else float("nan"),
        "latest_kept": tallies["latest"] / max(1, n),
        "stale_removed": tallies["stale_removed"] / k if tallies["with_stale"] else float("nan"),
        "stale_pruned": tallies["stale_pruned"] / k if tallies["with_stale"] else float("nan"),
        "questions": n,
        "questions_with_stale": tallies["with_stale"],
        "rounds": tallies["rounds"],
        "pruned_per_round": tallies["pruned"] / max(1, tallies["rounds"]),
        # the current answer was extracted, then pruned as a conflict, and is not in the graph: a
        # true value removed (for questions asking for the earlier value, pruning it is right)
        "answer_pruned": tallies["answer_pruned"] / max(1, n),
        **per_round(ctx.cost.get("dsm", {}), tallies["rounds"]),
        # beside the headline figures, never instead of them: latest_kept over the questions whose
        # answer is a current value the check can find, and, for questions asking for the value
        # before the update, whether that value is in the history of pruned triples
        "latest_kept_checkable": kept_by_kind["latest"] / kinds["latest"] if kinds["latest"] else float("nan"),
        "questions_checkable": kinds["latest"],
        "earlier_in_history": kept_by_kind["earlier"] / kinds["earlier"] if kinds["earlier"] else float("nan"),
        "questions_asking_earlier": kinds["earlier"],
    }}
    if explanations:
        write_explanations(ctx.out, explanations)
        results["dsm"]["causes"] = dict(Counter(e["cause"] for e in explanations))
    settings = {"statements": config.statements, "extractor": config.extractor, "llm_conflicts": config.llm_conflicts,
                "reasoner": config.reasoner,
                "slot_threshold": config.slot_threshold, "embedder": embedder.name if embedder is not None else "none",
                "assistant_sentences": config.assistant_sentences, "llm": tools.llm.name if tools else "none",
                "question_type": f"{question_type} (abstention questions skipped)", "unit": "round = user turn + reply"}
    return BenchResult(results=results, timings={"dsm": stages}, settings=settings)


def per_round(stages: dict[str, dict[str, int]], rounds: int) -> dict[str, float]:
    """LLM calls and tokens of maintenance per round (the cost of a round)."""
    from core.llm.cost import totals

    return {f"{key}_per_round": value / max(1, rounds) for key, value in totals(stages).items()}


def write_explanations(out, explanations: list[dict]) -> None:
    import json

    from core.benchmarks import dsm_explain

    (out / "explain.md").write_text(dsm_explain.report(explanations), encoding="utf-8")
    with (out / "explain.jsonl").open("w", encoding="utf-8") as f:
        for e in explanations:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")


def evaluate(instance, memory, nlp) -> dict:
    graph = memory.graph
    question = question_words(instance.question, nlp)
    triples = question_triples(graph, question)
    latest = answer_number(instance.answer)
    if latest is not None:
        kept = number_on(triples, latest)
        stale = stale_number(instance, latest)
    elif (clock := answer_time(instance.answer)) is not None:
        kept, stale = any(same_value(o, clock) for _, _, o in triples), None
    else:
        kept, stale = text_on(graph, triples, instance.answer), None
    removed = stale is not None and not number_on(triples, stale)
    pruned = stale is not None and pruned_number(memory, question, stale)
    maintenance = [r.timings.get("maintenance", 0.0) for r in memory.history]
    kind = answer_kind(instance)
    return {
        "question_id": instance.question_id, "question": instance.question, "answer": instance.answer,
        "latest": latest if latest is not None else instance.answer, "stale": stale, "answer_kind": kind,
        "latest_kept": bool(kept), "stale_removed": bool(removed), "stale_pruned": bool(pruned),
        "earlier_in_history": kind == "earlier" and in_history(memory, instance.answer),
        "answer_pruned": kind == "latest" and not kept and in_history(memory, instance.answer),
        "rounds": len(memory.history), "facts": sum(1 for _ in memory.facts()),
        "pruned_triples": sum(len(r.pruned) for r in memory.history), "question_facts": len(triples),
        "maintenance_s_mean": sum(maintenance) / max(1, len(maintenance)),
    }


def answer_kind(instance) -> str:
    """What the gold answer is, read from the data alone: 'latest' (a value the check can look for
    in the graph), 'earlier' (the question asks for the value before the update: a memory that
    prunes it keeps it in its history, not in the graph) or 'unchecked' (yes/no, a sentence, a score
    such as '5-2')."""
    from core.benchmarks import dsm_explain

    if not dsm_explain.checkable(instance.answer):
        return "unchecked"
    return "earlier" if dsm_explain.asks_earlier(instance) else "latest"


def in_history(memory, answer: str) -> bool:
    """A triple pruned in some turn carried the answer (number, clock time or all its words)."""
    from core.benchmarks import dsm_explain

    return any(dsm_explain.carries(memory.graph, p.triple[2], answer) for r in memory.history for p in r.pruned)


def _progress(items, ctx: BenchContext):
    if not ctx.progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="dsm-updates", unit="question")
