"""Triton's default relevance model: a learned ranker over query-triple features, fused with BM25.

Why not only the cross-encoder (relevance.py): on this CPU it ranked the held-out turns worse than
BM25 (recall@5 0.294 against 0.442) at 350 ms a query (see docs/kgaug.md). In OpenDialKG what makes
a triple the annotator's pick is mostly *which relation the question asks for* ("films directed by
X" -> X ~directed_by ?), so the model learns that directly and cheaply:

1. A relation classifier: TF-IDF (word uni- and bigrams) of the query -> multinomial logistic
   regression over the walk's first relation, read from the linked entity (`~r` = the entity is the
   tail of r). Relations seen once in training share the class `OTHER`.
2. A logistic-regression combiner over per-candidate features (`FEATURES`): the classifier's log
   probability of the candidate's relation as read from the entity it was reached by, BM25 (scaled
   by the query's best and raw), second hop, the other end's words in the query and in the two
   turns before it, the other end's graph degree, whether it was reached from the first linked
   entity, and whether both ends are linked. The combiner is trained on out-of-fold classifier
   probabilities (5 folds), so it does not trust the classifier more than on unseen queries.

Trained on the train split only (index % 5 != 0) by `python -m core train-triton`; saved as plain
arrays (`model.npz`, no pickle) plus `settings.json`. P(relevant) = sigmoid(combiner).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from core.paths import ASSETS_DIR, MissingResource

DEFAULT_FEATURE_MODEL_DIR = ASSETS_DIR / "models" / "triton-relevance-features"
FEATURES = ("relation_logp", "bm25_scaled", "bm25", "second_hop", "other_in_query", "other_in_context",
            "other_log_degree", "via_first_linked", "other_linked")
OTHER = "OTHER"
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def read_relation(triple, via: str) -> str:
    """The relation as read from the entity the candidate was reached by: r or ~r."""
    return triple.relation if via == triple.head else "~" + triple.relation


@dataclass(frozen=True)
class FeatureTrainSettings:
    relation_c: float = 10.0  # inverse L2 strength of the relation classifier
    combiner_c: float = 1.0
    min_relation_count: int = 2  # rarer relations share the OTHER class
    folds: int = 5
    seed: int = 0
    context_turns: int = 2


class FeatureRelevanceModel:
    """The trained arrays, and scoring of candidates (no sklearn needed at ranking time)."""

    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray, classes: list[str], rel_coef: np.ndarray,
                 rel_bias: np.ndarray, coef: np.ndarray, bias: float, context_turns: int = 2, source: str = "") -> None:
        self.vocabulary, self.idf = vocabulary, np.asarray(idf, dtype=np.float64)
        self.classes, self.class_index = list(classes), {c: i for i, c in enumerate(classes)}
        self.rel_coef, self.rel_bias = np.asarray(rel_coef, dtype=np.float64), np.asarray(rel_bias, dtype=np.float64)
        self.coef, self.bias = np.asarray(coef, dtype=np.float64), float(bias)
        self.context_turns = context_turns
        self.source = source
        if self.coef.shape != (len(FEATURES),):
            raise ValueError(f"{source}: the combiner has {self.coef.shape} weights, expected {len(FEATURES)}")

    # -- the relation classifier ------------------------------------------------------------------
    def tfidf(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Column indices and values of the query's l2-normalised, sublinear TF-IDF vector, as
        sklearn's TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) computes it."""
        tokens = re.findall(r"(?u)\b\w\w+\b", text.lower())
        grams = tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]
        counts: dict[int, int] = {}
        for g in grams:
            j = self.vocabulary.get(g)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        cols = np.fromiter(counts, dtype=np.int64)
        vals = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64))) * self.idf[cols]
        return cols, vals / np.linalg.norm(vals)

    def relation_logprobs(self, query: str) -> np.ndarray:
        cols, vals = self.tfidf(query)
        logits = self.rel_bias + self.rel_coef[:, cols] @ vals
        logits -= logits.max()
        return logits - np.log(np.exp(logits).sum())

    # -- ranking ----------------------------------------------------------------------------------
    def features(self, query: str, candidates: Sequence, context: Sequence[str] = (), relation_logp=None,
                 bm25: np.ndarray | None = None) -> np.ndarray:
        from core.methods.kgaug.rankers import BM25Ranker
        from core.methods.kgaug.triples import verbalize

        if not candidates:
            return np.zeros((0, len(FEATURES)))
        logp = self.relation_logprobs(query) if relation_logp is None else relation_logp
        other_class = self.class_index.get(OTHER)
        floor = float(logp.min()) if other_class is None else float(logp[other_class]) - np.log(10.0)
        b = BM25Ranker().scores(query, [verbalize(c.triple) for c in candidates]) if bm25 is None else bm25
        top = float(b.max()) if len(b) else 0.0
        q = words(query)
        ctx = words(" ".join(context[-self.context_turns:])) if self.context_turns else set()
        first = candidates[0].via
        linked = {c.via for c in candidates if c.hop == 1}
        rows = []
        for c, score in zip(candidates, b):
            t = c.triple
            other = t.tail if c.via == t.head else t.head
            ow = words(other)
            i = self.class_index.get(read_relation(t, c.via))
            rows.append((
                float(logp[i]) if i is not None else floor,
                score / top if top > 0 else 0.0, score, float(c.hop == 2),
                len(ow & q) / max(1, len(ow)), len(ow & ctx) / max(1, len(ow)),
                float(np.log1p(c.other_degree)), float(c.via == first), float(other in linked),
            ))
        return np.asarray(rows, dtype=np.float64)

    def logits(self, query: str, candidates: Sequence, context: Sequence[str] = ()) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        return self.features(query, candidates, context) @ self.coef + self.bias

    # -- storage ------------------------------------------------------------------------------------
    def save(self, folder: str | Path, settings: dict) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        terms = sorted(self.vocabulary, key=self.vocabulary.get)
        np.savez_compressed(folder / "model.npz", terms=np.asarray(terms), idf=self.idf.astype(np.float32),
                            classes=np.asarray(self.classes), rel_coef=self.rel_coef.astype(np.float32),
                            rel_bias=self.rel_bias.astype(np.float32), coef=self.coef, bias=np.asarray([self.bias]))
        (folder / "settings.json").write_text(json.dumps({**settings, "features": list(FEATURES),
                                                          "context_turns": self.context_turns}, indent=1))
        return folder

    @classmethod
    def load(cls, folder: str | Path = "") -> "FeatureRelevanceModel":
        folder = Path(folder) if folder else DEFAULT_FEATURE_MODEL_DIR
        path = folder / "model.npz"
        if not path.is_file():
            raise MissingResource(f"the trained Triton feature model is missing at {folder}: run `python -m core train-triton`")
        settings = json.loads((folder / "settings.json").read_text()) if (folder / "settings.json").is_file() else {}
        if settings.get("features", list(FEATURES)) != list(FEATURES):
            raise ValueError(f"{folder}: trained on features {settings.get('features')}, this code computes {list(FEATURES)}")
        with np.load(path, allow_pickle=False) as z:
            terms = [str(t) for t in z["terms"]]
            return cls({t: i for i, t in enumerate(terms)}, z["idf"], [str(c) for c in z["classes"]], z["rel_coef"],
                       z["rel_bias"], z["coef"], float(z["bias"][0]), int(settings.get("context_turns", 2)), str(folder))


@lru_cache(maxsize=2)
def load_feature_model(source: str = "") -> FeatureRelevanceModel:
    return FeatureRelevanceModel.load(source)


# -- training ---------------------------------------------------------------------------------------
@dataclass
class FeatureTrainReport:
    examples: int
    relation_classes: int
    vocabulary: int
    candidate_rows: int
    positives: int
    seconds: float
    cpu_seconds: float


def turn_candidates(examples, knowledge, candidate_settings=None):
    """(query, context texts, candidates, gold set) per example, candidates as the pipeline gathers them."""
    from core.methods.kgaug.candidates import CandidateSettings, gather
    from core.methods.kgaug.triples import canonical

    cs = candidate_settings or CandidateSettings()
    out = []
    for ex in examples:
        linked = knowledge.linker.link(ex.query)
        cands = gather(knowledge.kg, [i for e in linked for i in e.ids], cs) if linked else []
        out.append((ex.query, [t.text for t in ex.context], cands, {canonical(*t) for t in ex.gold}, ex.gold[0][1]))
    return out


def train_feature_model(examples, knowledge, settings: FeatureTrainSettings = FeatureTrainSettings()):
    """Fit on `examples` (the caller passes the train split only); returns (model, report)."""
    import time
    from collections import Counter

    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_val_predict

    t0, c0 = time.perf_counter(), time.process_time()
    turns = turn_candidates(examples, knowledge)
    if not turns:
        raise ValueError("no training turns")
    counts = Counter(rel for *_, rel in turns)
    labels = [rel if counts[rel] >= settings.min_relation_count else OTHER for *_, rel in turns]
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2 if len(turns) >= 50 else 1, sublinear_tf=True)
    X = vec.fit_transform([q for q, *_ in turns])
    clf = LogisticRegression(C=settings.relation_c, max_iter=3000)
    folds = settings.folds if len(turns) >= 10 * settings.folds else 2 if len(turns) >= 4 else 0
    clf.fit(X, labels)
    classes = [str(c) for c in clf.classes_]
    if len(classes) < 2:
        raise ValueError("the relation classifier needs at least two relations in the training turns")
    if folds:
        import warnings

        with warnings.catch_warnings():  # a rare relation missing from a training fold gets probability 0 there
            warnings.simplefilter("ignore")
            oof = cross_val_predict(LogisticRegression(C=settings.relation_c, max_iter=3000), X, labels,
                                    cv=KFold(folds, shuffle=True, random_state=settings.seed), method="predict_proba")
    else:
        oof = clf.predict_proba(X)
    vocab = {str(k): int(v) for k, v in vec.vocabulary_.items()}
    coef = clf.coef_ if len(classes) > 2 else np.vstack([-clf.coef_[0] / 2, clf.coef_[0] / 2])
    bias = clf.intercept_ if len(classes) > 2 else np.array([-clf.intercept_[0] / 2, clf.intercept_[0] / 2])
    model = FeatureRelevanceModel(vocab, vec.idf_, classes, coef, bias, np.zeros(len(FEATURES)), 0.0, settings.context_turns)
    rows, ys = [], []
    for (query, context, cands, gold, _), probs in zip(turns, oof):
        if not cands:
            continue
        # oof columns follow the fold's classes; cross_val_predict maps them to clf.classes_ order
        logp = np.log(np.clip(probs, 1e-9, None))
        rows.append(model.features(query, cands, context, relation_logp=logp))
        ys.extend(c.triple in gold for c in cands)
    Xc, yc = np.vstack(rows), np.asarray(ys)
    if yc.all() or not yc.any():
        raise ValueError("the training candidates hold no positive (or no negative) triples")
    comb = LogisticRegression(C=settings.combiner_c, max_iter=3000).fit(Xc, yc)
    model.coef, model.bias = comb.coef_[0].astype(np.float64), float(comb.intercept_[0])
    report = FeatureTrainReport(len(turns), len(classes), len(vocab), len(yc), int(yc.sum()),
                                round(time.perf_counter() - t0, 1), round(time.process_time() - c0, 1))
    return model, report


def settings_record(settings: FeatureTrainSettings, data_files, report: FeatureTrainReport) -> dict:
    return {"train": asdict(settings), "data_files": [Path(f).name for f in data_files], "split": "train (index % 5 != 0)",
            "report": asdict(report)}
