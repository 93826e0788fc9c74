"""The LLM side of the Reasoning Tree: policy p_pi, value p_v, THINK texts and answers.

Two ways to ask, chosen per model strength (DESIGN.md, "LLMs"):

- weak model (the embedded 135M one): the policy is a distribution over the *enumerated* legal
  actions, each scored by likelihood as the continuation of a short policy prompt, and S actions
  are sampled from it; the value is likelihood-weighted: sum_k p("0.k") * 0.k over the eleven
  scores 0.0 ... 1.0 after the evaluation prompt (temperature-0 scoring, no sampling).
- strong model: the Appendix E prompts as written; the free-text action is parsed and validated
  (unknown entities rejected), the free-text score parsed as a number in [0, 1]; whatever fails
  validation falls back to the scored path, or to a neutral default where the endpoint cannot score.

Every request of one beam step goes out as one batch: `score_batch` (the local backend runs one
padded forward pass with a shared prompt cache) or `chat_batch` (one padded generation locally,
concurrent requests at an endpoint).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator, Literal

import numpy as np

from core.config import GenerationSettings
from core.llm import cancel as stopping, cost
from core.llm.base import LLM, LLMOutputError, Message, ScoringUnsupported
from core.llm.prompts import render_prompt
from core.methods.layout import memory_message
from core.methods.render import chat_system
from core.methods.dsmart.reasoning_tree import ANSWER, EXPAND, NO_FACTS, NO_PATH, PATH, THINK, Action, RTConfig, State, with_value
from core.methods.dsmart.rt_graph import MemoryView

TurnsInAnswer = Literal["prompt", "messages", "none"]  # where the answer prompt shows the latest turns
SCORES = tuple(f"{k / 10:.1f}" for k in range(11))  # "0.0" ... "1.0"
DIGITS = tuple(str(k) for k in range(10))  # the digit scale: "0" (worst) ... "9" (best), one token each
LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # option labels of the choice policy, one token each
CHARS_PER_TOKEN = 4.0  # turns per-character log-likelihood into about per-token
_ACTION = re.compile(r"^(?:next action\s*:\s*|action\s*:\s*|\d+[.)]\s*)?(EXPAND[ _]ENTITY|FIND[ _]PATH|THINK|ANSWER)\b(.*)", re.I)
_NUMBER = re.compile(r"(?<![\d.])(0(?:\.\d+)?|1(?:\.0+)?|\.\d+)(?![\d.])")


class TreeModel:
    def __init__(self, llm: LLM, view: MemoryView, config: RTConfig, *, strong: bool,
                 context: list[Message] | None = None, generation: GenerationSettings = GenerationSettings(),
                 embedder=None, turns_in_answer: TurnsInAnswer = "messages", vectors: TextVectors | None = None) -> None:
        self.llm, self.view, self.config = llm, view, config
        self.turns_in_answer = turns_in_answer
        self.embedded = embedder is not None and (config.scorer == "embedding" or (config.scorer == "auto" and not strong))
        self.similarity = Similarity(embedder, vectors) if self.embedded else None
        self.prompted = config.policy == "prompted" or (config.policy == "auto" and strong)
        self.choice = config.policy == "choice" or (config.policy == "auto" and not strong)
        self.digits = config.value_scale in ("auto", "digit")
        self.eager = config.answer_drafts == "eager" or (config.answer_drafts == "auto" and strong)
        self.lazy_thoughts = config.thoughts == "lazy" or (config.thoughts == "auto" and not strong)
        self.strong = strong
        self.context = list(context or [])
        self.generation = generation
        self.rng = np.random.default_rng(config.seed)
        self.timings: dict[str, float] = {}
        self.budget_spent = False  # the deadline passed while children were being valued
        self.batches = 0
        self.notes: list[str] = []

    # -- bookkeeping -----------------------------------------------------------------------------
    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            with cost.stage(stage):
                yield
        finally:
            self.add_time(stage, time.perf_counter() - t0)

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    def _score_batch(self, requests):
        self.batches += 1
        return self.llm.score_batch(requests)

    def _chat_batch(self, prompts, **kwargs):
        self.batches += 1
        return self.llm.chat_batch(prompts, **kwargs)

    # -- rendering -------------------------------------------------------------------------------
    def facts_text(self, state: State) -> str:
        facts = state.facts[-self.config.max_prompt_facts :]
        return "\n".join(self.view.fact_line(t) for t in facts) or "(none yet)"

    def trajectory_text(self, state: State) -> str:
        """The Appendix E "Reasoning Process": one line per step (a thought not written yet is left out).
        A graph step says whether it found facts, not how many: the reader took "-> 12 new fact(s)"
        for the answer to "How many hens do we have now?" (docs/dsm-memory.md); the facts themselves
        are the prompt's Known Facts."""
        lines = []
        for n, step in enumerate(state.trajectory, 1):
            action = step.action.render(self.view)
            if step.action.kind == THINK:
                if step.text:
                    lines.append(f"{n}. THINK: {step.text}")
            elif step.action.kind == ANSWER:
                lines.append(f"{n}. ANSWER" + (f": {step.text}" if step.text else ""))
            else:
                lines.append(f"{n}. {action} -> {_found(step)}")
        return "\n".join(lines) or "(none yet)"

    def step_log(self, state: State) -> str:
        """The trajectory with each step's new facts under it. A child's log is its parent's plus
        one step, so its prompt extends the parent's and a backend with a prompt cache (the local
        one) runs only the new step's tokens."""
        lines, start = [], 0
        for n, step in enumerate(state.trajectory, 1):
            kind = step.action.kind
            if kind == THINK:
                lines.append(f"{n}. THINK: {step.text}" if step.text else f"{n}. THINK")
            elif kind == ANSWER:
                lines.append(f"{n}. ANSWER: {step.text}" if step.text else f"{n}. ANSWER")
            else:
                lines.append(f"{n}. {step.action.render(self.view)} -> {step.text}")
                shown = state.facts[start : start + min(step.added, self.config.step_facts)]
                lines += [f"   {self.view.fact_line(t)}" for t in shown]
                if step.added > len(shown):
                    lines.append(f"   ... and {step.added - len(shown)} more")
            start += step.added
        return "".join(line + "\n" for line in lines)

    def _scored_prompt(self, tail: str, query: str, state: State, **extra) -> list[Message]:
        """The shared state prompt (instructions, question, step log), then the request (`tail`)."""
        head = render_prompt("rt_state", query=query).rstrip("\n")
        return [Message("user", f"{head}\n{self.step_log(state)}{render_prompt(tail, **extra).strip()}")]

    def _prompt(self, name: str, query: str, state: State, **extra) -> list[Message]:
        return [Message("user", render_prompt(name, query=query, triples=self.facts_text(state),
                                              trajectory=self.trajectory_text(state), **extra))]

    def answer_messages(self, query: str, state: State, memory: str | None = None) -> list[Message]:
        """Appendix E response prompt after the system prompt; its known facts are `memory` (the
        reached facts' source sentences, recall.py) when given. The conversation (`self.context`)
        comes as `turns_in_answer` says: "messages", chat turns before it (the window every chat
        method shows, kept in the server's cache between replies); "prompt", a section of the
        response prompt; "none", left out (Appendix E as written).

        With the turns as messages, the question is asked once, last, just before "Answer:" (the
        turns hold earlier questions; asked first as well, a long message was read twice: issue
        53), and with no fact to show the prompt is the conversation and the message alone, as
        every chat method's is: the facts the window shows are not repeated, and a search that
        found nothing else gives the reader nothing to read (`rt`, with no memory, keeps Appendix E:
        its thoughts are what it has). A message that asks nothing (`asks`) gets its facts as the
        notes of every memory method, then the message: Appendix E answers questions."""
        facts = memory if memory is not None else self.facts_text(state)
        turns = self.turns_in_answer
        # Appendix E's instructions do not change from turn to turn: in the system message they are
        # a prefix the server's KV cache keeps, not ~75 tokens read again before every reply
        system = chat_system(self.generation.reply_sentences) + "\n\n" + render_prompt("rt_response_instructions").strip()
        before = self.context if turns == "messages" else []
        if turns == "messages" and memory is not None and not memory.strip():  # `rt` (no memory) keeps its thoughts
            return [Message("system", system), *before, Message("user", query)]
        if turns == "messages" and not asks(query):
            # a message that asks nothing has no question to answer from facts: framed as one
            # ("Please answer the following question ... Question: We have a daughter ..."), the
            # reader said the message and its facts back (13 of 60 statements on the
            # conversational dev dialogues, docs/replies.md). The facts go as the notes every
            # memory method shows, for when the message needs them; the system message stays the
            # same, so the server's cache keeps it
            note = memory_message(facts, header=render_prompt("dsmart_answer")) if facts.strip() else None
            return [Message("system", system), *before, *([note] if note else []), Message("user", query)]
        conversation = conversation_section(self.context) if turns == "prompt" else ""
        # the turns shown hold other questions before this one: asked again last, the reader answers
        # this one, not the turn before (docs/dsm-memory.md, "The reply answered the turn before")
        asked = f"Question: {query}\n"
        first = "" if turns == "messages" else asked
        again = asked if turns == "messages" or (turns == "prompt" and conversation) else ""
        prompt = render_prompt("rt_response", conversation=conversation, triples=facts or "(none yet)",
                               trajectory=self.trajectory_text(state), question_first=first, question_again=again)
        return [Message("system", system), *before, Message("user", prompt)]

    def shown_turns(self) -> list[str]:
        """The latest turns' texts as the answer prompt shows them (none with "none"): what the
        memory lines need not repeat."""
        return [] if self.turns_in_answer == "none" else [m.content for m in self.context]

    @property
    def may_think(self) -> bool:
        """THINK needs the LLM to write its thought: not in an embedding-scored search."""
        return not self.embedded

    # -- policy ----------------------------------------------------------------------------------
    def propose(self, query: str, parents: list[State], legal: list[list[Action]]) -> list[list[tuple[Action, float]]]:
        with self.timed("policy"):
            if self.embedded:
                self.similarity.prepare(query, [text for p, acts in zip(parents, legal) for a in acts
                                                for text in self._prior_texts(p, a)])
                return [self._sample(acts, SHARPNESS * np.array([self._prior(query, p, a) for a in acts]))
                        for p, acts in zip(parents, legal)]
            if self.prompted:
                return self._prompted(query, parents, legal)
            if self.choice:
                return self._choice(query, parents, legal)
            return self._enumerated(query, parents, legal)

    def _choice(self, query, parents, legal) -> list[list[tuple[Action, float]]]:
        """The legal actions as lettered options after the state prompt; p(action) from the model's
        next-token distribution over their letters: one request per state, where scoring each
        action's own text walks its token trie (a request per distinct token prefix)."""
        requests = []
        for p, acts in zip(parents, legal):
            acts = acts[: len(LETTERS)]
            options = "".join(f"{LETTERS[i]}. {a.render(self.view)}\n" for i, a in enumerate(acts))
            requests.append((self._scored_prompt("rt_policy_choice", query, p, options=options), list(LETTERS[: len(acts)])))
        return [self._sample(acts[: len(scores)], np.array(scores)) for acts, scores in zip(legal, self._score_batch(requests))]

    def _prior(self, query: str, state: State, action: Action) -> float:
        """Embedding prior: a graph action by how close its entities are to the question; ANSWER
        by how well the facts gathered so far match it (answer once they do)."""
        if action.kind == ANSWER:
            return self._relevance(query, state)
        labels = [self.view.label(e) for e in action.entities]
        return float(np.mean(self.similarity.to_query(query, labels)))

    def _prior_texts(self, state: State, action: Action) -> list[str]:
        """The texts `_prior` compares with the question, to embed them all in one batch."""
        if action.kind == ANSWER:
            return [self.view.fact_line(t) for t in state.facts]
        return [self.view.label(e) for e in action.entities]

    def _relevance(self, query: str, state: State) -> float:
        """Mean cosine of the question with the state's TOP_FACTS closest facts (0 without facts)."""
        if not state.facts:
            return 0.0
        sims = np.sort(self.similarity.to_query(query, [self.view.fact_line(t) for t in state.facts]))[::-1]
        return float(np.mean(sims[:TOP_FACTS]))

    def _sample(self, acts: list[Action], logits: np.ndarray) -> list[tuple[Action, float]]:
        """S draws from softmax(logits / T), duplicates merged, first-drawn order; (action, p)."""
        probs = softmax(logits / max(1e-6, self.config.policy_temperature))
        draws = self.rng.choice(len(acts), size=self.config.samples, replace=True, p=probs)
        picked = list(dict.fromkeys(int(i) for i in draws))
        return [(acts[i], float(probs[i])) for i in picked]

    def _enumerated(self, query, parents, legal) -> list[list[tuple[Action, float]]]:
        requests = [(self._scored_prompt("rt_policy_scored", query, p), [a.render(self.view) for a in acts])
                    for p, acts in zip(parents, legal)]
        out = []
        for acts, scores in zip(legal, self._score_batch(requests)):
            norm = [CHARS_PER_TOKEN * s / max(1, len(a.render(self.view))) for s, a in zip(scores, acts)]
            out.append(self._sample(acts, np.array(norm)))
        return out

    def _prompted(self, query, parents, legal) -> list[list[tuple[Action, float]]]:
        s = self.config.samples
        prompts = []
        for p, acts in zip(parents, legal):
            names = sorted({self.view.label(e) for a in acts for e in a.entities}) or ["(none)"]
            prompts += [self._prompt("rt_policy", query, p, entities=", ".join(names))] * s
        replies = self._chat_batch(prompts, temperature=self.config.policy_temperature, max_tokens=96)
        out = []
        for i, (parent, acts) in enumerate(zip(parents, legal)):
            parsed = [parse_action(r.text, self.view) for r in replies[i * s : (i + 1) * s]]
            may_think = any(a.kind == THINK for a in acts)
            valid = [a for a in parsed if a is not None and (may_think or a.kind != THINK)
                     and not (a.kind in (EXPAND, PATH) and parent.done(a.kind, a.entities))]
            merged: dict[tuple, tuple[Action, int]] = {}
            for a in valid:
                first, n = merged.get(a.key, (a, 0))
                merged[a.key] = (first, n + 1)
            if merged:
                out.append([(a, n / s) for a, n in merged.values()])
            else:
                self.notes.append(f"policy output for {parent.id} failed validation; used the fall-back")
                out.append(self._fallback_policy(query, parent, acts))
        return out

    def _fallback_policy(self, query, parent, acts) -> list[tuple[Action, float]]:
        try:
            return self._enumerated(query, [parent], [acts])[0]
        except ScoringUnsupported:
            return [(Action(THINK), 0.5), (Action(ANSWER), 0.5)]

    # -- THINK texts and answer drafts -----------------------------------------------------------
    def write_thoughts(self, query: str, children: list[State]) -> list[State]:
        """Fill in THINK texts of new children unless thoughts are lazy (one batched generation)
        and, when eager, ANSWER drafts (another)."""
        if not self.lazy_thoughts:
            children = self._think(query, children)
        answering = [i for i, c in enumerate(children) if c.last.action.kind == ANSWER] if self.eager else []
        if answering:
            with self.timed("answer_drafts"):
                prompts = [self.answer_messages(query, _before_last(children[i])) for i in answering]
                replies = self._chat_batch(prompts, temperature=self.generation.temperature, max_tokens=self.generation.max_tokens)
            for i, r in zip(answering, replies):
                children[i] = _with_last_text(children[i], r.text.strip())
        return children

    def thoughts_before_expanding(self, query: str, parents: list[State]) -> list[State]:
        """Lazy thoughts: a THINK state's thought is written when the state is expanded, so that
        its children's policy and value read it; a THINK child that the beam drops, or that ends
        the search unexpanded, never costs a generation (the response prompt leaves an unwritten
        thought out)."""
        return self._think(query, parents) if self.lazy_thoughts else parents

    def _think(self, query: str, states: list[State]) -> list[State]:
        """Write the pending thought of every state whose last step is an unwritten THINK."""
        states = list(states)
        thinking = [i for i, c in enumerate(states) if c.last is not None and c.last.action.kind == THINK and not c.last.text]
        if thinking:
            with self.timed("think"):
                prompts = [self._scored_prompt("rt_think", query, _before_last(states[i])) for i in thinking]
                replies = self._chat_batch(prompts, temperature=self.config.policy_temperature,
                                           max_tokens=self.config.think_max_tokens, stop=["\n"])
            for i, r in zip(thinking, replies):
                states[i] = _with_last_text(states[i], first_lines(r.text) or "(no thought)")
        return states

    # -- value -----------------------------------------------------------------------------------
    def evaluate(self, query: str, children: list[State]) -> list[State]:
        if not children:
            return children
        with self.timed("value"):
            if self.embedded:  # an ANSWER state is worth what its facts are: the same as its parent
                self.similarity.prepare(query, [self.view.fact_line(t) for c in children for t in c.facts])
                return [with_value(c, max(0.0, self._relevance(query, c)), "embedding") for c in children]
            if self.strong:
                return self._prompted_values(query, children)
            return self._scored_values(query, children)

    def _value_prompt(self, query: str, state: State, prompted: bool) -> list[Message]:
        if state.terminal and state.last.text:
            return self._prompt("rt_value_answer", query, _before_last(state), answer=state.last.text)
        if prompted:
            return self._prompt("rt_value_state", query, state)
        return self._scored_prompt("rt_value_digit" if self.digits else "rt_value_scored", query, state)

    def _scored_values(self, query: str, children: list[State]) -> list[State]:
        """Likelihood-weighted values, one request per child; under a deadline the children valued
        before it passed are kept (the rest are marked UNVALUED and `budget_spent` is set)."""
        scale = DIGITS if self.digits else SCORES
        requests = [(self._value_prompt(query, c, prompted=False), list(scale)) for c in children]
        if stopping.remaining() is None:
            scores = self._score_batch(requests)
        else:
            scores = []
            for request in requests:
                try:
                    scores += self._score_batch([request])
                except stopping.DeadlinePassed:
                    self.budget_spent = True
                    break
        valued = [with_value(c, expected_score(s, scale), "likelihood") for c, s in zip(children, scores)]
        return valued + [replace(c, value_source=UNVALUED) for c in children[len(scores):]]

    def _prompted_values(self, query: str, children: list[State]) -> list[State]:
        prompts = [self._value_prompt(query, c, prompted=True) for c in children]
        replies = self._chat_batch(prompts, temperature=self.config.value_temperature, max_tokens=300)
        out, failed = [], []
        for i, (c, r) in enumerate(zip(children, replies)):
            try:
                out.append(with_value(c, parse_score(r.text), "prompt"))
            except LLMOutputError:
                out.append(c)
                failed.append(i)
        if failed:
            self.notes.append(f"{len(failed)} value output(s) failed validation; used the fall-back")
            try:
                fixed = self._scored_values(query, [children[i] for i in failed])
            except ScoringUnsupported:
                fixed = [with_value(children[i], 0.5, "default") for i in failed]
            for i, state in zip(failed, fixed):
                out[i] = state
        return out

    # -- the response ----------------------------------------------------------------------------
    def respond(self, query: str, best: State, write=None, memory: str | None = None) -> tuple[str, list[Message]]:
        """r_t from the trajectory of S*: its eager draft when it has one, else generated now by
        `write(messages, temperature, max_tokens) -> text` (the method streams it to the page), or
        by a plain chat call. `memory`: the known facts as the prompt shows them (default: S*'s triples)."""
        messages = self.answer_messages(query, _before_last(best) if best.terminal else best, memory)
        if best.terminal and best.last.text:
            return best.last.text, messages
        with self.timed("generate"):
            self.batches += 1
            gen = self.generation
            if write is not None:
                text = write(messages, gen.temperature, gen.max_tokens)
            else:
                text = self.llm.chat(messages, temperature=gen.temperature, max_tokens=gen.max_tokens).text
        return text, messages


def asks(message: str) -> bool:
    """Whether a chat message asks something (a question mark): D-SMART's Appendix E answers a
    question; a statement, an opinion or a story asks none."""
    return "?" in message


def _found(step) -> str:
    """What a graph step found, in words without a count."""
    if step.added:
        return "facts found"
    return step.text if step.text in (NO_PATH, NO_FACTS) else "nothing new"


def conversation_section(context: list[Message]) -> str:
    """The latest turns as a section of the response prompt, in the memory lines' voice ("You"
    the user, "I" the assistant). As chat turns just before the prompt, the reader continued them:
    it answered "What does my neighbour Osvaldo do?" with the previous reply's "builds violins",
    and a changed value from the turn before (docs/dsm-memory.md)."""
    if not context:
        return ""
    said = "\n".join(f"{'You' if m.role == 'user' else 'I'}: {m.content}" for m in context)
    return f"The conversation just before the question:\n{said}\n---\n"


UNVALUED = "unvalued"  # a child the deadline left without a value: the search drops it
SHARPNESS = 8.0  # embedding prior: cosine differences of ~0.1 between actions become ~2x in probability
TOP_FACTS = 3  # embedding value: a state is as good as its few best facts, not diluted by the rest


class TextVectors:
    """Embeddings by text, the least recently used dropped beyond `capacity`. A method's searches
    share one: the graph's fact lines and entity labels are mostly the same from reply to reply,
    and embedding them again was most of a `dsmart` reply's work before its prompt (issue 53)."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the reply's search reads while `TreeResponder.warm` may write

    def __contains__(self, text: str) -> bool:
        return text in self._vectors

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, text: str) -> np.ndarray | None:
        """The text's vector (now the most recently used), None when not held."""
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
            return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        with self._lock:
            self._vectors[text] = vector
            self._vectors.move_to_end(text)
            while len(self._vectors) > self.capacity:
                self._vectors.popitem(last=False)

    def missing(self, texts) -> list[str]:
        """The distinct `texts` not held, in their first order."""
        return [t for t in dict.fromkeys(texts) if t not in self._vectors]


class Similarity:
    """Cosine similarity of the question with texts, each text embedded once per search, and taken
    from `kept` (the method's store across searches) when it holds it already."""

    def __init__(self, embedder, kept: TextVectors | None = None) -> None:
        self.embedder = embedder
        self.kept = kept
        self._vectors: dict[str, np.ndarray] = {}  # this search's: the store may drop what it holds

    def prepare(self, query: str, texts: list[str]) -> None:
        """Embeds in one batch what the next `to_query` calls will ask for: a batch of a dozen short
        texts costs about what one text does on the CPU, and a depth of the search asks per action."""
        missing = []
        for text in dict.fromkeys([query, *texts]):
            if text in self._vectors:
                continue
            found = self.kept.get(text) if self.kept is not None else None
            if found is None:
                missing.append(text)
            else:
                self._vectors[text] = found
        if missing:
            for text, vec in zip(missing, self.embedder.encode(missing)):
                self._vectors[text] = vec
                if self.kept is not None:
                    self.kept.put(text, vec)

    def to_query(self, query: str, texts: list[str]) -> np.ndarray:
        stopping.check()  # a stopped reply's search ends here too
        self.prepare(query, texts)
        q = self._vectors[query]
        return np.array([float(self._vectors[t] @ q) for t in texts])


def softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - np.max(x))
    return z / z.sum()


def expected_score(logliks: list[float], scale: tuple[str, ...] = SCORES) -> float:
    """sum_k p_k * score_k with p = softmax of the candidates' log-likelihoods, on [0, 1] (a digit
    scale 0-9 is divided by 9)."""
    p = softmax(np.array(logliks, dtype=float))
    top = max(float(s) for s in scale)
    return float(sum(pk * float(s) / top for pk, s in zip(p, scale)))


def parse_score(text: str) -> float:
    """The last number in [0, 1] of a free-text evaluation (the prompt asks for reasoning, then the score)."""
    found = [float(m) for m in _NUMBER.findall(text)]
    found = [f for f in found if 0.0 <= f <= 1.0 and not math.isnan(f)]
    if not found:
        raise LLMOutputError(f"no score between 0 and 1 in {text[:120]!r}")
    return found[-1]


def parse_action(text: str, view: MemoryView) -> Action | None:
    """The first action line of a policy reply, validated against the graph; None if invalid."""
    for line in text.splitlines():
        m = _ACTION.match(line.strip().strip("`*'\""))
        if not m:
            continue
        kind = m.group(1).upper().replace(" ", "_")
        rest = m.group(2)
        if kind in (THINK, ANSWER):
            return Action(kind, (), rest.lstrip(" :-").strip() if kind == THINK else "")
        names = re.findall(r"\[([^\]]+)\]", rest) or [n for n in re.split(r"[,;]| and ", rest.strip(" :")) if n.strip()]
        nodes = [view.find_entity(n.strip()) for n in names]
        need = 1 if kind == EXPAND else 2
        if len(nodes) < need or any(n is None for n in nodes[:need]) or (kind == PATH and nodes[0] == nodes[1]):
            return None
        return Action(kind, tuple(nodes[:need]))
    return None


def first_lines(text: str, limit: int = 400) -> str:
    return " ".join(text.strip().split())[:limit]


def _before_last(state: State) -> State:
    """The state as it was before its last step (the context an ANSWER/THINK was written in)."""
    return replace(state, trajectory=state.trajectory[:-1])


def _with_last_text(state: State, text: str) -> State:
    last = state.trajectory[-1]
    return replace(state, trajectory=state.trajectory[:-1] + (replace(last, text=text),))
