"""Building the knowledge graph from files, with an on-disk cache keyed by the inputs' hash.

Inputs (any combination):
- OpenDialKG dialogue CSVs: the triples of every `kgwalk/choose_path` walk;
- iEvaLM's item graph JSON (`opendialkg_items_kg_ievalm_id2info.json`): six attribute keys mapped
  back to OpenDialKG relations (triples.ITEM_RELATIONS);
- triple files: `subject<TAB>relation<TAB>object` lines (streamed: memory grows with the distinct
  names and triples, not the file), or RDF (.ttl, .nt, .n3, .rdf, .xml, .jsonld; parsed by rdflib);
- entity lists (one name a line): names the linker knows even without triples.

Malformed lines and rows are skipped and counted in the graph's `report`, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from core.data.opendialkg import LoadStats, iter_opendialkg
from core.methods.kgaug.graph import FROM_DIALOGUE, FROM_FILE, FROM_ITEMS, GraphBuilder, KnowledgeGraph
from core.methods.kgaug.triples import ITEM_RELATIONS
from core.paths import DEFAULT_CACHE_DIR, SHARED_DIR

CACHE_VERSION = 2  # 2: undecodable TSV lines are skipped and counted, no longer stored with U+FFFD
RDF_SUFFIXES = {".ttl", ".nt", ".n3", ".rdf", ".xml", ".jsonld", ".trig", ".nq"}
OPENDIALKG_DIR = SHARED_DIR / "data" / "opendialkg"


@dataclass(frozen=True)
class KGSources:
    dialogue_files: tuple[str, ...] = ()
    item_files: tuple[str, ...] = ()
    triple_files: tuple[str, ...] = ()
    entity_files: tuple[str, ...] = ()
    max_triples: int = 5_000_000  # the memory bound: rows past it are counted, not stored

    def files(self) -> list[tuple[str, str]]:
        return ([("dialogues", f) for f in self.dialogue_files] + [("items", f) for f in self.item_files]
                + [("triples", f) for f in self.triple_files] + [("entities", f) for f in self.entity_files])

    def with_dialogues(self, *files: str) -> "KGSources":
        """These sources plus more dialogue CSVs (e.g. the benchmark file being evaluated)."""
        have = {Path(f).resolve() for f in self.dialogue_files}
        extra = tuple(str(f) for f in dict.fromkeys(files) if Path(f).resolve() not in have)
        return KGSources(self.dialogue_files + extra, self.item_files, self.triple_files, self.entity_files, self.max_triples)


def opendialkg_sources(folder: str | Path = OPENDIALKG_DIR) -> KGSources:
    """The shared OpenDialKG files that exist in `folder` (the paths of the test split, the item
    graph, the entity list)."""
    folder = Path(folder)

    def present(name: str) -> tuple[str, ...]:
        return (str(folder / name),) if (folder / name).is_file() else ()

    return KGSources(
        dialogue_files=present("opendialkg_test.csv"),
        item_files=present("opendialkg_items_kg_ievalm_id2info.json"),
        entity_files=present("opendialkg_entities.txt"),
    )


# -- readers -----------------------------------------------------------------------------------
def is_utf8(text: str) -> bool:
    """False when `text` carries undecodable bytes (read with errors="surrogateescape")."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_item_graph(path: str | Path, skipped: dict) -> Iterator[tuple[str, str, str]]:
    try:
        with open(path, encoding="utf-8") as f:
            items = json.load(f)
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError: the whole document is unreadable
        raise ValueError(f"{path}: not an item-graph JSON file ({type(err).__name__}: {str(err)[:200]})") from None
    if not isinstance(items, dict):
        raise ValueError(f"{path}: expected an object of items (iEvaLM id2info.json)")
    for item in items.values():
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip():
            skipped["item without a name"] = skipped.get("item without a name", 0) + 1
            continue
        for key, relation in ITEM_RELATIONS.items():
            values = item.get(key)
            for value in values if isinstance(values, list) else [values] if values is not None else []:
                if isinstance(value, (str, int)) and str(value).strip():
                    yield name, relation, str(value)
                else:
                    skipped["bad attribute value"] = skipped.get("bad attribute value", 0) + 1


def read_tsv_triples(path: str | Path, skipped: dict) -> Iterator[tuple[str, str, str]]:
    """`subject<TAB>relation<TAB>object` lines, one at a time; `#` lines and blank lines ignored.
    A line with bytes that are not UTF-8 is skipped and counted (not stored with replacement marks)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            if not is_utf8(line):
                skipped["not UTF-8"] = skipped.get("not UTF-8", 0) + 1
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(p.strip() for p in parts):
                skipped["not 3 tab-separated fields"] = skipped.get("not 3 tab-separated fields", 0) + 1
                continue
            yield parts[0], parts[1], parts[2]


def read_entity_list(path: str | Path) -> Iterator[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            name = line.strip()
            if name:
                yield name


def is_rdf(path: str | Path) -> bool:
    return Path(path).suffix.lower() in RDF_SUFFIXES


# -- building and caching ----------------------------------------------------------------------
def build_graph(sources: KGSources) -> KnowledgeGraph:
    builder = GraphBuilder(sources.max_triples)
    report: dict = {"inputs": []}
    for kind, path in sources.files():
        skipped: dict = {}
        added = 0
        if kind == "dialogues":
            stats = LoadStats()
            for d in iter_opendialkg(path, stats):
                for p in d.paths:
                    added += sum(builder.add(h, r, t, FROM_DIALOGUE) for h, r, t in p.triples)
            skipped = dict(stats.skipped)
        elif kind == "items":
            added = sum(builder.add(h, r, t, FROM_ITEMS) for h, r, t in read_item_graph(path, skipped))
        elif kind == "triples":
            from core.methods.kgaug.rdf import read_rdf_triples

            rows = read_rdf_triples(path, skipped=skipped) if is_rdf(path) else read_tsv_triples(path, skipped)
            added = sum(builder.add(h, r, t, FROM_FILE) for h, r, t in rows)
        else:
            for name in read_entity_list(path):
                builder.entity(name)
        report["inputs"].append({"kind": kind, "file": Path(path).name, "triples_added": added, "skipped": skipped})
    return builder.build(report)


def file_digest(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sources_key(sources: KGSources) -> str:
    """Hash of the inputs' contents (not their paths: a moved file still hits the cache)."""
    h = hashlib.sha256(f"kg-cache-v{CACHE_VERSION}|max={sources.max_triples}".encode())
    for kind, path in sources.files():
        h.update(f"|{kind}:{file_digest(path)}".encode())
    return h.hexdigest()[:24]


def _blob(names: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(names).encode("utf-8"), dtype=np.uint8)


def _names(blob: np.ndarray) -> list[str]:
    text = blob.tobytes().decode("utf-8")
    return text.split("\n") if text else []


def save_graph(kg: KnowledgeGraph, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, heads=kg.heads, rels=kg.rels, tails=kg.tails, sources=kg.sources, entities=_blob(kg.entities),
                 relations=_blob(kg.relations), report=np.frombuffer(json.dumps(kg.report).encode(), dtype=np.uint8))
    tmp.replace(path)  # atomic: readers never see half a file


def load_saved_graph(path: Path) -> KnowledgeGraph:
    with np.load(path) as z:
        return KnowledgeGraph(_names(z["entities"]), _names(z["relations"]), z["heads"], z["rels"], z["tails"],
                              z["sources"], json.loads(z["report"].tobytes().decode()))


def load_graph(sources: KGSources, cache_dir: str | Path | None = None, use_cache: bool = True) -> KnowledgeGraph:
    """The graph of `sources`, from the cache when these exact inputs were built before."""
    for _, path in sources.files():
        if not Path(path).is_file():
            raise FileNotFoundError(f"knowledge-graph input {path} does not exist")
    if not use_cache:
        return build_graph(sources)
    cached = Path(cache_dir or DEFAULT_CACHE_DIR / "kg") / f"kg-{sources_key(sources)}.npz"
    if cached.is_file():
        try:
            kg = load_saved_graph(cached)
            kg.report["cache"] = {"hit": True, "file": cached.name}
            return kg
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
            cached.unlink(missing_ok=True)  # a damaged cache entry is rebuilt, not trusted
    kg = build_graph(sources)
    save_graph(kg, cached)
    kg.report["cache"] = {"hit": False, "file": cached.name}
    return kg
