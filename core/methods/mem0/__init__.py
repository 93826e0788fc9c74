"""mem0 (the `mem0ai` library) as a workbench method: `method.Mem0Method`; the library run offline
with the workbench's LLM and embedder: `library` (and its `adapters`)."""
