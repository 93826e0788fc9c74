"""MCTS without rollouts (section III-C): selection by PUCT, expansion, evaluation by a critic,
back-propagation. A node is a state: the knowledge sentence reached and the concept marked in it
for the next expansion; its children are the sentences an action may select.

    a* = argmax_a  Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))

Q of a child not yet visited is its parent's mean value (first-play urgency at the parent's
value, so the rule behaves the same whatever the critic's scale). Ties go to the earlier child
(children are ordered by prior). A leaf is evaluated by the critic once, when first reached;
a leaf at the horizon (or with no candidates) is terminal and re-backs its value when revisited.
The search stops after `simulations` rounds or at its deadline, whichever comes first.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass
class Node:
    id: str
    depth: int
    sentence: int | None = None  # knowledge sentence id (None at the root)
    concept: int | None = None  # the marked concept for the next expansion
    prior: float = 1.0
    parent: "Node | None" = None
    children: list["Node"] = field(default_factory=list)
    visits: int = 0
    value_sum: float = 0.0
    value: float | None = None  # the critic's evaluation of this state
    expanded: bool = False
    terminal: bool = False
    info: dict = field(default_factory=dict)  # critic parts, for the UI

    @property
    def q(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0

    def path(self) -> list["Node"]:
        """Root to this node."""
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def sentences(self) -> list[int]:
        return [n.sentence for n in self.path() if n.sentence is not None]


@dataclass(frozen=True)
class Child:
    sentence: int
    concept: int | None
    prior: float


def puct_score(child: Node, parent: Node, c_puct: float) -> float:
    q = child.q if child.visits else parent.q
    return q + c_puct * child.prior * math.sqrt(parent.visits) / (1 + child.visits)


def select_child(node: Node, c_puct: float) -> Node:
    best, best_score = node.children[0], -math.inf
    for child in node.children:
        score = puct_score(child, node, c_puct)
        if score > best_score:
            best, best_score = child, score
    return best


@dataclass
class SearchTree:
    """The result of one search: every node, the chosen path, and why it stopped."""

    name: str  # "bridge" or "r1", "r2", ...
    label: str
    root: Node
    chosen: list[Node]
    simulations: int
    stop_reason: str
    seconds: float
    meta: dict = field(default_factory=dict)  # the caller's notes, e.g. the reasoning outcome searched for

    def nodes(self) -> list[Node]:
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def visited(self) -> list[Node]:
        return [n for n in self.nodes() if n.visits > 0]


class MCTS:
    """`expand(node) -> children` (at most per_action, best prior first); `evaluate(node) -> value`."""

    def __init__(self, expand: Callable[[Node], Sequence[Child]], evaluate: Callable[[Node], float], c_puct: float,
                 horizon: int, prefix: str = "n") -> None:
        self.expand_fn, self.evaluate_fn = expand, evaluate
        self.c_puct, self.horizon, self.prefix = c_puct, horizon, prefix
        self._count = 0

    def _new(self, depth: int, **kw) -> Node:
        node = Node(f"{self.prefix}{self._count}", depth, **kw)
        self._count += 1
        return node

    def _expand(self, node: Node) -> None:
        node.expanded = True
        if node.depth >= self.horizon:
            node.terminal = True
            return
        for c in self.expand_fn(node):
            node.children.append(self._new(node.depth + 1, sentence=c.sentence, concept=c.concept, prior=c.prior, parent=node))
        node.terminal = not node.children

    def run(self, root_concept: int | None, simulations: int, deadline: float, name: str, label: str) -> SearchTree:
        t0 = time.perf_counter()
        root = self._new(0, concept=root_concept)
        self._expand(root)
        done, reason = 0, "simulations"
        while done < simulations:
            if time.perf_counter() > deadline:
                reason = "time budget"
                break
            if root.terminal:
                reason = "no candidates"
                break
            self.simulate(root)
            done += 1
        return SearchTree(name, label, root, chosen_path(root), done, reason, time.perf_counter() - t0)

    def simulate(self, root: Node) -> float:
        node = root
        while node.expanded and not node.terminal:
            node = select_child(node, self.c_puct)
            if node.value is None:
                break
        if node.value is None:
            node.value = float(self.evaluate_fn(node))
        if not node.expanded:
            self._expand(node)
        value = node.value
        for n in node.path():  # the root too: its N(s) is the number of simulations
            n.visits += 1
            n.value_sum += value
        return value


def chosen_path(root: Node) -> list[Node]:
    """From the root, the most visited child (ties: higher mean value, then prior) down to the last visited node."""
    path, node = [], root
    while node.children:
        visited = [c for c in node.children if c.visits]
        if not visited:
            break
        node = max(visited, key=lambda c: (c.visits, c.q, c.prior))
        path.append(node)
    return path
