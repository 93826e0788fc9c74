"""Prompts are package data (core/llm/prompts/*.txt), filled by name.

Only `{name}` placeholders whose name is passed are replaced, so prompts may contain literal JSON
braces. A placeholder left unfilled is an error: a silently half-filled prompt is a wrong result.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    path = resources.files("core.llm").joinpath("prompts", f"{name}.txt")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in core/llm/prompts/")
    return path.read_text(encoding="utf-8")


def placeholders(name: str) -> set[str]:
    return set(_PLACEHOLDER.findall(load_prompt(name)))


def render_prompt(name: str, **values: object) -> str:
    template = load_prompt(name)
    missing = placeholders(name) - values.keys()
    if missing:
        raise KeyError(f"prompt {name!r} needs {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
