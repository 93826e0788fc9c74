"""mem0 settings: the library's own defaults where it has them (search threshold 0.1, LLM
temperature 0.1), the workbench's for the chat reply."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.config import GenerationSettings


@dataclass(frozen=True)
class Mem0Config:
    top_k: int = 10  # memories retrieved for a reply (mem0's `search` default is 20; its paper's eval used 10)
    threshold: float = 0.1  # mem0's `search` default: memories scoring below it are not returned
    # mem0's extraction call: its default temperature (0.1). Its default max_tokens is 2000; a 0.5B
    # model that loops inside the JSON would spend minutes per round on CPU, so the bound is lower.
    extraction_temperature: float = 0.1
    extraction_max_tokens: int = 600
    # Time anchoring (core.timeref), as every method's memory is shown: a memory's relative times
    # resolved against the day of the round it came from, "yesterday (7 May 2023)".
    anchor_time: bool = True
    background: bool = True  # add rounds in a worker thread; a reply searches what is added so far
    generation: GenerationSettings = field(default_factory=GenerationSettings)
