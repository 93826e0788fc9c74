"""The commonsense knowledge base: GenericsKB-format sentences, their embeddings in a FAISS
index, their concepts, concept -> sentence postings, concept embeddings and node groups.

File format (as in ../shared/data/genericskb/): one row per line, `term<TAB>sentence<TAB>score`,
CRLF or LF, UTF-8, no header. Sentences are cleaned as GenericsKB users do: " isa " -> " is a ",
the "(part)" marker dropped. Repeated sentences are kept once (the first row).

Building embeds every sentence and concept and parses every sentence with spaCy (minutes for the
50k sample on 2 cores), so the result is cached on disk under the cache directory, in a folder
keyed by the file's SHA-256 and the embedder; `header.json` names the format version, the source
hash, the embedder and the counts, and a mismatch means a rebuild, never a wrong load.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.embed_pool import pooled
from core.methods.mcts.concepts import extract_concepts
from core.methods.mcts.config import KBSettings
from core.methods.mcts.groups import NodeGroups, kmeans_groups
from core.paths import DEFAULT_CACHE_DIR
from core.resources import Embedder
from core.hashing import file_sha256

FORMAT = "mcts-kb"
FORMAT_VERSION = 1
Progress = Callable[[str, float], None]  # (stage, fraction done)


class KBFormatError(ValueError):
    """The knowledge-base file is not GenericsKB format (columns, encoding, score)."""


class KBCacheError(RuntimeError):
    """A cached KB folder is not this format, version, source or embedder (it gets rebuilt)."""


@dataclass(frozen=True)
class KBRows:
    terms: list[str]
    texts: list[str]
    scores: list[float]
    sha256: str
    source: str
    dropped_duplicates: int = 0


_ISA = re.compile(r"\bisa\b")
_PART = re.compile(r"\s*\(part\)\s*")


def clean_sentence(text: str) -> str:
    """GenericsKB clean-up: "X isa Y" -> "X is a Y", "X have (part) Y" -> "X have Y"."""
    text = _PART.sub(" ", text)
    text = _ISA.sub("is a", text)
    return " ".join(text.split())


def read_genericskb(path: str | Path, limit: int | None = None) -> KBRows:
    """Rows of a GenericsKB-format file; KBFormatError with the line number on a bad row."""
    path = Path(path)
    if not path.is_file():
        raise KBFormatError(f"no knowledge-base file at {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise KBFormatError(f"{path.name}: not UTF-8 (line {line}, byte {err.start}); GenericsKB files are UTF-8 text") from None
    terms, texts, scores, seen, dropped = [], [], [], set(), 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise KBFormatError(f"{path.name} line {number}: {len(parts)} tab-separated column(s), expected 3 "
                                f"(term, sentence, score): {line[:80]!r}")
        term, sentence, score = (p.strip() for p in parts)
        try:
            value = float(score)
        except ValueError:
            raise KBFormatError(f"{path.name} line {number}: score {score!r} is not a number") from None
        sentence = clean_sentence(sentence)
        if not sentence:
            raise KBFormatError(f"{path.name} line {number}: empty sentence")
        if sentence in seen:
            dropped += 1
            continue
        seen.add(sentence)
        terms.append(term)
        texts.append(sentence)
        scores.append(value)
        if limit and len(texts) >= limit:
            break
    if not texts:
        raise KBFormatError(f"{path.name}: no rows")
    return KBRows(terms, texts, scores, hashlib.sha256(data).hexdigest(), path.name, dropped)


def _csr(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter((x for r in rows for x in r), dtype=np.int32, count=int(ptr[-1]))
    return ptr, flat


def _invert(ptr: np.ndarray, flat: np.ndarray, n_targets: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows -> CSR of the transpose (sorted ids in each row)."""
    owners = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
    order = np.lexsort((owners, flat))
    counts = np.bincount(flat, minlength=n_targets)
    out_ptr = np.zeros(n_targets + 1, dtype=np.int64)
    out_ptr[1:] = np.cumsum(counts)
    return out_ptr, owners[order].astype(np.int32)


@dataclass
class KnowledgeBase:
    texts: list[str]
    terms: list[str]
    scores: list[float]
    index: object  # faiss.IndexFlatIP over unit sentence vectors
    concepts: list[str]
    concept_vectors: np.ndarray
    sent_ptr: np.ndarray  # CSR sentence -> concept ids
    sent_concepts: np.ndarray
    concept_ptr: np.ndarray  # CSR concept -> sentence ids (the postings)
    concept_sents: np.ndarray
    header: dict = field(default_factory=dict)
    groups: NodeGroups | None = None
    folder: Path | None = None  # cache folder, when loaded from or saved to disk

    def __post_init__(self) -> None:
        self.concept_id = {c: i for i, c in enumerate(self.concepts)}
        self._vectors = _flat_vectors(self.index)
        self._bm25 = None
        self._knn: dict[int, np.ndarray] = {}

    # -- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.texts)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        k = min(k, len(self))
        scores, ids = self.index.search(queries, k)
        return ids, scores

    def sentence_concepts(self, i: int) -> np.ndarray:
        return self.sent_concepts[self.sent_ptr[i]: self.sent_ptr[i + 1]]

    def need_groups(self) -> NodeGroups:
        if self.groups is None:
            raise ValueError("node groups are not built: call ensure_groups(kb, settings)")
        return self.groups

    def group_sentences(self, concept: int) -> np.ndarray:
        """K_G(n): the sentences reachable through the concepts of n's node group."""
        return self.need_groups().sentences_of_group(self.groups.labels[concept])

    # -- baselines' structures (lazy) ---------------------------------------------------------
    def bm25(self):
        """A bm25s index over the sentences (built in memory on first use, seconds for 50k)."""
        if self._bm25 is None:
            import bm25s

            retriever = bm25s.BM25()
            retriever.index(bm25s.tokenize(self.texts, stopwords="en", show_progress=False), show_progress=False)
            self._bm25 = retriever
        return self._bm25

    def knn(self, k: int) -> np.ndarray:
        """Each sentence's k nearest other sentences (SGMem's KNN edges), cached on disk."""
        if k in self._knn:
            return self._knn[k]
        path = self.folder / f"knn-{k}.npy" if self.folder else None
        if path is not None and path.is_file():
            ids = np.load(path)
        else:
            ids = np.empty((len(self), k), dtype=np.int32)
            for start in range(0, len(self), 4096):
                block = self._vectors[start: start + 4096]
                _, found = self.index.search(block, k + 1)
                for row, hits in enumerate(found):
                    own = start + row
                    ids[own] = [h for h in hits if h != own][:k]
            if path is not None:
                save_array(path, ids)
        self._knn[k] = ids
        return ids

    # -- persistence -------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        import faiss

        folder = Path(folder)
        # a folder of its own: two builds of the same key at once (two embedder objects of one name)
        # shared "NAME.tmp" and removed each other's files mid-write
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
        (tmp / "sentences.json").write_text(json.dumps({"texts": self.texts, "terms": self.terms, "scores": self.scores}))
        (tmp / "concepts.json").write_text(json.dumps(self.concepts))
        faiss.write_index(self.index, str(tmp / "sentences.faiss"))
        np.save(tmp / "concept_vectors.npy", self.concept_vectors)
        np.savez(tmp / "postings.npz", sent_ptr=self.sent_ptr, sent_concepts=self.sent_concepts,
                 concept_ptr=self.concept_ptr, concept_sents=self.concept_sents)
        (tmp / "header.json").write_text(json.dumps(self.header, indent=1))  # written last: marks a complete build
        if _same_build(folder, self.header):
            # the other build's complete folder got there first, with the same content: removing it
            # would pull it from under that build while it writes its groups or neighbours there
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)  # a stale or incomplete build's folder
            try:
                tmp.rename(folder)
            except OSError:  # the other build's complete folder got there in between
                shutil.rmtree(tmp, ignore_errors=True)
        self.folder = folder

    @classmethod
    def load(cls, folder: Path, expect: dict) -> "KnowledgeBase":
        import faiss

        folder = Path(folder)
        head_path = folder / "header.json"
        if not head_path.is_file():
            raise KBCacheError(f"{folder}: no header.json (incomplete build)")
        header = json.loads(head_path.read_text())
        for key in ("format", "version", "source_sha256", "embedder", "dim", "concept_max_words"):
            if header.get(key) != expect.get(key):
                raise KBCacheError(f"{folder}: {key} is {header.get(key)!r}, expected {expect.get(key)!r}")
        rows = json.loads((folder / "sentences.json").read_text())
        index = faiss.read_index(str(folder / "sentences.faiss"))
        post = np.load(folder / "postings.npz")
        kb = cls(rows["texts"], rows["terms"], rows["scores"], index, json.loads((folder / "concepts.json").read_text()),
                 np.load(folder / "concept_vectors.npy"), post["sent_ptr"], post["sent_concepts"], post["concept_ptr"],
                 post["concept_sents"], header, folder=folder)
        if index.ntotal != header["sentences"] or len(kb.concepts) != header["concepts"]:
            raise KBCacheError(f"{folder}: counts differ from the header")
        return kb


def _flat_vectors(index) -> np.ndarray:
    """The stored vectors of a flat FAISS index as a numpy view (no copy)."""
    import faiss

    n, d = index.ntotal, index.d
    if n == 0:
        return np.zeros((0, d), dtype=np.float32)
    return faiss.rev_swig_ptr(faiss.downcast_index(index).get_xb(), n * d).reshape(n, d)


def embedder_key(embedder: Embedder) -> str:
    """Name, dimension and a probe vector's digest: two models never share a cache folder."""
    from core.retrieval.cache import model_fingerprint

    return model_fingerprint(embedder)


def _encode(embedder: Embedder, texts: Sequence[str], stage: str, progress: Progress | None, batch: int) -> np.ndarray:
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    step = max(batch * 8, 1)
    for start in range(0, len(texts), step):
        out[start: start + step] = embedder.encode(list(texts[start: start + step]), batch_size=batch)
        if progress:
            progress(stage, min(1.0, (start + step) / max(1, len(texts))))
    return out


def assemble(texts: Sequence[str], terms: Sequence[str] | None, scores: Sequence[float] | None, embedder: Embedder,
             nlp, settings: KBSettings = KBSettings(), header: dict | None = None,
             progress: Progress | None = None, embed_texts: Sequence[str] | None = None) -> KnowledgeBase:
    """Parse, embed and index `texts` into a KnowledgeBase (in memory; no groups yet).
    `embed_texts`: what to embed instead of the texts (e.g. "Speaker: sentence" for dialogue)."""
    import faiss

    t0 = time.perf_counter()
    if progress:
        progress("concepts", 0.0)
    parsed = (lambda fraction: progress("concepts", fraction)) if progress else None
    per_sentence = extract_concepts(nlp, texts, terms, settings.max_concept_words, settings.batch_size, parsed,
                                    n_process=settings.workers)
    vocab: dict[str, int] = {}
    rows = [[vocab.setdefault(c, len(vocab)) for c in cs] for cs in per_sentence]
    concepts = list(vocab)
    sent_ptr, sent_concepts = _csr(rows)
    concept_ptr, concept_sents = _invert(sent_ptr, sent_concepts, len(concepts))
    # the worker processes start after the parse: spaCy's forked parsers need not copy them
    with pooled(embedder, settings.workers) as parallel:
        vectors = _encode(parallel, embed_texts or texts, "sentence embeddings", progress, settings.batch_size)
        concept_vectors = _encode(parallel, concepts, "concept embeddings", progress, settings.batch_size)
    index = faiss.IndexFlatIP(embedder.dim)
    if len(vectors):
        index.add(vectors)
    head = {"format": FORMAT, "version": FORMAT_VERSION, "embedder": embedder.name, "dim": embedder.dim,
            "concept_max_words": settings.max_concept_words, "sentences": len(texts), "concepts": len(concepts),
            "postings": int(len(concept_sents)), "build_s": round(time.perf_counter() - t0, 2),
            "workers": settings.workers, **(header or {})}
    return KnowledgeBase(list(texts), list(terms or [""] * len(texts)), list(scores or [1.0] * len(texts)), index,
                         concepts, concept_vectors, sent_ptr, sent_concepts, concept_ptr, concept_sents, head)


_BUILD_KEYS = ("format", "version", "embedder", "dim", "sentences", "concepts", "postings")


def _same_build(folder: Path, header: dict) -> bool:
    """Whether `folder` holds a complete build (its header.json, written last) of the same KB."""
    try:
        found = json.loads((folder / "header.json").read_text())
    except (OSError, ValueError):
        return False
    return all(found.get(k) == header.get(k) for k in _BUILD_KEYS)


def save_array(path: Path, array: np.ndarray) -> None:
    """Cache an array beside the KB: written whole under another name, then moved into place, so a
    reader never loads half a file; a folder gone meanwhile (rebuilt by another process) only
    loses the cache, the array in hand is still used."""
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.stem + ".tmp-", suffix=".npy", delete=False) as f:
            np.save(f, array)
        os.replace(f.name, path)
    except FileNotFoundError:
        return


def ensure_groups(kb: KnowledgeBase, settings: KBSettings = KBSettings()) -> NodeGroups:
    """K-means node groups over the concept embeddings, cached beside the KB when it has a folder."""
    n_groups = max(1, round(len(kb.concepts) / settings.concepts_per_group))
    if kb.groups is not None and kb.groups.n_groups == n_groups:
        return kb.groups
    path = kb.folder / f"groups-{n_groups}-{settings.seed}-{settings.kmeans_iterations}.npy" if kb.folder else None
    if path is not None and path.is_file():
        labels = np.load(path)
    else:
        labels = kmeans_groups(kb.concept_vectors, n_groups, settings.seed, settings.kmeans_iterations)
        if path is not None:
            save_array(path, labels)
    kb.groups = NodeGroups(labels, kb.concept_ptr, kb.concept_sents)
    return kb.groups


def cache_folder(sha256: str, embedder_id: str, cache_dir: str | Path | None = None) -> Path:
    return Path(cache_dir or DEFAULT_CACHE_DIR) / "mcts-kb" / f"{sha256[:20]}-{embedder_id}"


def load_or_build(path: str | Path, embedder: Embedder, settings: KBSettings = KBSettings(), nlp=None,
                  cache_dir: str | Path | None = None, progress: Progress | None = None,
                  limit: int | None = None) -> KnowledgeBase:
    """The KB of `path`: loaded from the cache when one matches, else built and cached. `limit`
    keeps the first N distinct sentences (a slice; cached under its own key)."""
    sha = file_sha256(path)
    key = sha if not limit else hashlib.sha256(f"{sha}:{limit}".encode()).hexdigest()
    embedder_id = embedder_key(embedder)
    folder = cache_folder(key, embedder_id, cache_dir or settings.cache_dir or None)
    expect = {"format": FORMAT, "version": FORMAT_VERSION, "source_sha256": key, "embedder": embedder_id,
              "dim": embedder.dim, "concept_max_words": settings.max_concept_words}
    if folder.is_dir():
        try:
            if progress:
                progress("loading", 0.0)
            kb = KnowledgeBase.load(folder, expect)
            ensure_groups(kb, settings)
            return kb
        except (KBCacheError, OSError, ValueError, KeyError) as err:  # stale or damaged: rebuild below
            print(f"note: rebuilding the knowledge-base cache ({err})")
    rows = read_genericskb(path, limit)
    if nlp is None:
        from core.resources import load_spacy

        nlp = load_spacy()
    kb = assemble(rows.texts, rows.terms, rows.scores, _resumable(embedder, settings, cache_dir), nlp, settings,
                  {"source_sha256": key, "embedder": embedder_id, "source": rows.source, "source_file_sha256": sha, "limit": limit,
                   "dropped_duplicates": rows.dropped_duplicates, "spacy": getattr(nlp, "meta", {}).get("name", "")},
                  progress)
    if progress:
        progress("node groups", 0.0)
    kb.save(folder)
    ensure_groups(kb, settings)
    return kb


def _resumable(embedder: Embedder, settings: KBSettings, cache_dir) -> Embedder:
    """The embedder behind the on-disk embedding cache, so that a build interrupted after an hour of
    embedding restarts where it stopped."""
    from core.retrieval.cache import CachedEmbedder

    if not settings.embedding_cache or isinstance(embedder, CachedEmbedder):
        return embedder
    root = cache_dir or settings.cache_dir
    return CachedEmbedder(embedder, Path(root) / "embeddings" if root else None)
